"""Where xr_input's operator samples come from: a scenario seen through a simulated headset, a bag, or a body stream.

The players answer ``frame(t)`` (t: seconds since playback started) with an ``XrFrame``: the poses
xr_input publishes (xr/head: the head in the headset world, robot basis; xr/left_wrist, xr/right_wrist:
the IK targets of left_ee / right_ee in the pelvis frame) and the joystick.

* ``ScenarioPlayer``: a scenario (g1_teleop.operator.scenario) turned into the poses an OpenXR headset would report
  and sent through the same XR→robot conversion a headset's data gets (g1_teleop.operator.xr_frames).
* ``OperatorRecording``: what xr_input published in a recorded run, read from a rosbag2 bag (g1_teleop.core.rosbag):
  at time t it gives the latest wrist pair stamped at or before first_stamp + t, with the head and joystick
  in force then, exactly as recorded. Replaying a lockstep run's bag into the same graph reproduces it.
* ``BodyStreamPlayer``: the operator's 24 body points from a body stream file (g1_teleop.operator.body_stream), the
  latest frame at or before first_stamp + t; the head is its Head point; no wrist targets (the whole-body
  retargeting takes the body).

A pose is a (7,) vector: position (m), then orientation (w, x, y, z) (g1_teleop.core.rotations). A recorded
pose is copied value for value from its message's fields, never through a rotation matrix, so that a replay
publishes the recorded bits.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from g1_teleop.core.body_points import body_point_index
from g1_teleop.core.rosbag import BagError, read_messages
from g1_teleop.core.rotations import position_wxyz
from g1_teleop.operator.body_stream import BodyStream
from g1_teleop.operator.scenario import Scenario
from g1_teleop.operator.xr_frames import BodyReference, openxr_to_robot, robot_to_openxr

OPERATOR_TOPICS = ("xr/head", "xr/left_wrist", "xr/right_wrist", "joy")
WRIST_REFERENCES = ("head", "body")
HEAD_POINT = body_point_index("Head")


@dataclass(frozen=True)
class XrFrame:
    """One operator sample as published. Poses are (7,): x, y, z (m), qw, qx, qy, qz. head: in the headset
    world, robot basis; left_wrist, right_wrist: in the pelvis frame (None: a source without wrist targets).
    Joystick axes in [-1, 1], buttons 0/1. body: (24, 7) poses of the body points, XRobot's order, in the
    operator's z-up world (x forward, y left, floor at z = 0); None without body tracking."""

    head: np.ndarray
    left_wrist: np.ndarray | None
    right_wrist: np.ndarray | None
    joy_axes: tuple[float, ...] = ()
    joy_buttons: tuple[int, ...] = ()
    body: np.ndarray | None = None


def pose_vector(T: np.ndarray) -> np.ndarray:
    """4x4 transform → (7,) position (m) and orientation (w, x, y, z)."""
    return np.concatenate(position_wxyz(T))


class ScenarioPlayer:
    """A scenario through a simulated headset. wrist_reference "head" (OpenWBT/televuer) or "body" (wrists
    relative to a body-fixed frame calibrated on the first sample, see xr_frames)."""

    def __init__(self, scenario: Scenario, wrist_reference: str = "head") -> None:
        if wrist_reference not in WRIST_REFERENCES:
            raise ValueError(f"wrist_reference must be head or body, got {wrist_reference!r}")
        self.scenario = scenario
        self.wrist_reference = wrist_reference
        self.body: BodyReference | None = None
        self.source, self.description = scenario.source, scenario.description
        self.duration, self.sample_rate_hz = scenario.duration, scenario.sample_rate_hz

    def frame(self, t: float) -> XrFrame:
        sample = self.scenario.sample(t)
        if self.wrist_reference == "body" and self.body is None:
            self.body = BodyReference.calibrate(sample.world_T_head)
        headset = robot_to_openxr(sample.world_T_head, sample.pelvis_T_left_wrist, sample.pelvis_T_right_wrist,
                                  body=self.body)
        robot = openxr_to_robot(headset, body=self.body)
        return XrFrame(pose_vector(robot.world_T_head), pose_vector(robot.pelvis_T_left_wrist),
                       pose_vector(robot.pelvis_T_right_wrist), sample.joy_axes, sample.joy_buttons)


@dataclass(frozen=True)
class OperatorRecording:
    """Operator samples read from a bag: wrist pairs (stamps t, s), head and joystick samples (their own
    stamps), in stamp order. Build it with ``load``."""

    source: str
    t: np.ndarray  # (N,) s, stamps of the complete wrist pairs
    left_wrist: np.ndarray  # (N, 7)
    right_wrist: np.ndarray  # (N, 7)
    head_t: np.ndarray  # (H,) s
    head: np.ndarray  # (H, 7)
    joy_t: np.ndarray  # (J,) s
    joy: tuple[tuple[tuple[float, ...], tuple[int, ...]], ...]  # (axes, buttons) per joy sample

    @property
    def description(self) -> str:
        return f"{len(self.t)} operator samples recorded"

    @property
    def duration(self) -> float:
        return float(self.t[-1] - self.t[0])

    @property
    def sample_rate_hz(self) -> float:
        """The recorded device rate (median interval between wrist samples); 50 Hz for a single sample."""
        return 1.0 / float(np.median(np.diff(self.t))) if len(self.t) > 1 else 50.0

    @classmethod
    def load(cls, path: str | Path) -> OperatorRecording:
        """Read xr/head, xr/left_wrist, xr/right_wrist and joy from the bag at ``path``; BagError when it has no
        complete wrist pair."""
        wrists: dict[int, dict[str, np.ndarray]] = {}
        heads: dict[int, np.ndarray] = {}
        joys: dict[int, tuple[tuple[float, ...], tuple[int, ...]]] = {}
        for topic, _log_ns, msg in read_messages(path, OPERATOR_TOPICS):
            stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            if topic == "joy":
                joys[stamp] = (tuple(float(a) for a in msg.axes), tuple(int(b) for b in msg.buttons))
                continue
            p, o = msg.pose.position, msg.pose.orientation
            pose = np.array([p.x, p.y, p.z, o.w, o.x, o.y, o.z])
            if topic == "xr/head":
                heads[stamp] = pose
            else:
                wrists.setdefault(stamp, {})[topic] = pose
        pairs = sorted(s for s, pair in wrists.items() if len(pair) == 2)
        if not pairs:
            raise BagError(f"{path}: no xr/left_wrist and xr/right_wrist samples with the same stamp: record "
                           "the operator topics (xr/*) of a graph (`g1-teleop record`, or the bag/ of a sim run)")
        head_stamps = sorted(heads)
        joy_stamps = sorted(joys)
        return cls(
            source=str(path),
            t=np.array(pairs) / 1e9,
            left_wrist=np.array([wrists[s]["xr/left_wrist"] for s in pairs]),
            right_wrist=np.array([wrists[s]["xr/right_wrist"] for s in pairs]),
            head_t=np.array(head_stamps, dtype=float) / 1e9,
            head=np.array([heads[s] for s in head_stamps]).reshape(-1, 7),
            joy_t=np.array(joy_stamps, dtype=float) / 1e9,
            joy=tuple(joys[s] for s in joy_stamps),
        )

    def frame(self, t: float) -> XrFrame:
        """The recorded sample in force t seconds after the first one (the first before, the last after)."""
        if not math.isfinite(t):
            raise ValueError(f"OperatorRecording.frame: time must be finite, got {t!r}")
        at = self.t[0] + t
        i = max(bisect.bisect_right(self.t, at + 1e-9) - 1, 0)
        stamp = self.t[i]
        h = bisect.bisect_right(self.head_t, stamp + 1e-9) - 1
        head = self.head[max(h, 0)] if len(self.head) else pose_vector(np.eye(4))
        j = bisect.bisect_right(self.joy_t, stamp + 1e-9) - 1
        axes, buttons = self.joy[j] if j >= 0 else ((), ())
        return XrFrame(head, self.left_wrist[i], self.right_wrist[i], axes, buttons)


class BodyStreamPlayer:
    """A body stream played at its own timing (module docstring); ``source`` names where it came from."""

    def __init__(self, stream: BodyStream, source: str) -> None:
        self.stream, self.source = stream, source
        self.poses = np.concatenate([stream.positions, stream.quat_wxyz], axis=-1)  # (N, 24, 7)
        self.description = f"{len(stream)} body frames"
        self.duration = float(stream.stamps[-1] - stream.stamps[0])
        self.sample_rate_hz = 1.0 / float(np.median(np.diff(stream.stamps))) if len(stream) > 1 else 30.0

    def frame(self, t: float) -> XrFrame:
        """The body frame in force t seconds after the first one (the first before, the last after)."""
        if not math.isfinite(t):
            raise ValueError(f"BodyStreamPlayer.frame: time must be finite, got {t!r}")
        stamps = self.stream.stamps
        i = max(bisect.bisect_right(stamps, stamps[0] + t + 1e-9) - 1, 0)
        return XrFrame(self.poses[i, HEAD_POINT], None, None, body=self.poses[i])
