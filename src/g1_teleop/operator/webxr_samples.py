"""A headset's events → operator samples in the robot's frames. ROS-free.

One ``SampleAssembler`` per headset session keeps the newest head pose (CAMERA_MOVE) and turns each hand or
controller event (HAND_MOVE, CONTROLLER_MOVE) into an ``XrSample``: head and wrists through xr_frames'
OpenXR → robot conversion (televuer's tv_wrapper.py pipeline; hand tracking applies the wrist convention,
controllers do not), the 25 hand landmarks in the Unitree hand frame (``hand_points_in_wrist``), and the Joy
reading (``xr_joy``). A pose the headset does not give (no head yet, a hand out of view, a controller asleep)
goes through the conversion as invalid: it gets xr_frames' fallback pose and its ``*_valid`` flag is False.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from g1_teleop.core.rotations import wxyz_from_matrix
from g1_teleop.operator.input_sources import WRIST_REFERENCES, XrFrame
from g1_teleop.operator.webxr_events import ControllersState, HandJoints, HandsTracking, HeadPose, XrEvent
from g1_teleop.operator.xr_frames import BodyReference, RobotPoses, XrPoses, hand_points_in_wrist, openxr_to_robot
from g1_teleop.operator.xr_joy import JoyReading, XrJoy, XrJoyConfig

INPUTS = ("hands", "controllers")
_MISSING = np.zeros((4, 4))  # fails xr_frames' validity test: the fallback pose is used


@dataclass(frozen=True)
class XrSample:
    """One operator sample from a headset.

    received_s: when its event arrived (time.monotonic(), s). device_time_s: the headset's stamp of that event
    (Unix s by the headset's clock), None when the client sent none. head_age_s: received_s minus the arrival of
    the head pose it uses (None: no head pose yet). poses: xr_frames' RobotPoses (world_T_head in the headset
    world, robot basis; pelvis_T_*_wrist the IK targets in the pelvis frame; validity flags).
    *_hand_points: (25, 3) landmarks in the Unitree hand frame (m), WebXR Hand Input order; None with
    controllers or when that hand is not tracked. joy: the XR Joy layout (xr_joy).
    """

    seq: int
    received_s: float
    device_time_s: float | None
    head_age_s: float | None
    poses: RobotPoses
    left_hand_points: np.ndarray | None
    right_hand_points: np.ndarray | None
    joy: JoyReading

    @property
    def valid(self) -> bool:
        """The head and both wrists come from the headset (no fallback pose): the wrist targets can be followed."""
        return self.poses.head_valid and self.poses.left_valid and self.poses.right_valid

    def frame(self) -> XrFrame:
        """The sample as xr_input publishes operator samples (poses as (7,) vectors, the Joy reading). The three
        orientations in one conversion."""
        p = self.poses
        poses = (p.world_T_head, p.pelvis_T_left_wrist, p.pelvis_T_right_wrist)
        q = wxyz_from_matrix(np.stack([T[:3, :3] for T in poses]))
        head, left, right = (np.concatenate([T[:3, 3], qi]) for T, qi in zip(poses, q, strict=True))
        return XrFrame(head, left, right, self.joy.axes, self.joy.buttons)


class SampleAssembler:
    """Samples of one headset session. input: "hands" or "controllers" (events of the other kind are ignored);
    wrist_reference: "head" (televuer) or "body" (see xr_frames: calibrated on the first valid head pose that does not
    look straight up or down; head-relative until then, which is the same at the neutral posture)."""

    def __init__(self, input: str, joy_config: XrJoyConfig, wrist_reference: str = "head") -> None:
        if input not in INPUTS:
            raise ValueError(f"input must be hands or controllers, got {input!r}")
        if wrist_reference not in WRIST_REFERENCES:
            raise ValueError(f"wrist_reference must be head or body, got {wrist_reference!r}")
        self.input = input
        self.wrist_reference = wrist_reference
        self.joy = XrJoy(joy_config)
        self.body: BodyReference | None = None
        self.head: HeadPose | None = None
        self.head_received_s: float | None = None
        self.samples = 0

    def put(self, event: XrEvent, received_s: float) -> XrSample | None:
        """Take one event received at ``received_s`` (monotonic s); the sample it makes, if it is a hand or
        controller event of this assembler's input."""
        if isinstance(event, HeadPose):
            self.head, self.head_received_s = event, received_s
            return None
        if self.input == "hands" and isinstance(event, HandsTracking):
            return self._sample(event, received_s, self.joy.from_hands(event, received_s),
                                _hand_pose(event.left), _hand_pose(event.right))
        if self.input == "controllers" and isinstance(event, ControllersState):
            return self._sample(event, received_s, self.joy.from_controllers(event, received_s),
                                _MISSING if event.left is None else event.left.xr_T_controller,
                                _MISSING if event.right is None else event.right.xr_T_controller)
        return None

    def _sample(self, event: HandsTracking | ControllersState, received_s: float, joy: JoyReading,
                xr_T_left: np.ndarray, xr_T_right: np.ndarray) -> XrSample:
        xr = XrPoses(_MISSING if self.head is None else self.head.xr_T_head, xr_T_left, xr_T_right)
        hands = self.input == "hands"
        poses = openxr_to_robot(xr, hand_tracking=hands, body=self.body)
        if self.wrist_reference == "body" and self.body is None and poses.head_valid:
            with contextlib.suppress(ValueError):  # the head looks straight up or down: calibrate on a later one
                self.body = BodyReference.calibrate(poses.world_T_head)
                poses = openxr_to_robot(xr, hand_tracking=hands, body=self.body)
        self.samples += 1
        return XrSample(
            seq=self.samples,
            received_s=received_s,
            device_time_s=event.device_time_s,
            head_age_s=None if self.head_received_s is None else received_s - self.head_received_s,
            poses=poses,
            left_hand_points=_landmarks(event.left) if isinstance(event, HandsTracking) else None,
            right_hand_points=_landmarks(event.right) if isinstance(event, HandsTracking) else None,
            joy=joy,
        )


def _hand_pose(hand: HandJoints | None) -> np.ndarray:
    return _MISSING if hand is None else hand.xr_T_wrist


def _landmarks(hand: HandJoints | None) -> np.ndarray | None:
    return None if hand is None else hand_points_in_wrist(hand.xr_T_wrist, hand.xr_points)
