"""Scripted operator: timed keyframes of head, wrist and joystick input, read from YAML.

File format (units: s, m, rad)::

    sample_rate_hz: 60.0          # optional (default 60): rate at which a player takes samples
    description: free text        # optional
    tracking:                     # optional: a tracker's imperfections on the wrist samples (not the head)
      jitter_m: 0.005             # RMS of a 3D position noise, drawn anew for each device sample
      dropout_every_s: 2.0        # tracking lost every 2 s (from t = dropout_every_s) ...
      dropout_s: 0.2              # ... for 0.2 s: the wrists hold their last sample, then jump back
      seed: 0                     # the noise is a function of (seed, device sample), so runs repeat
    keyframes:
      - t: 0.0                    # s; the first keyframe is at 0, times strictly increase
        left_wrist:  {position: [x, y, z], rpy: [roll, pitch, yaw]}
        right_wrist: {position: [x, y, z], quat_wxyz: [w, x, y, z]}
        head: {position: [x, y, z], rpy: [0, 0, 0]}   # optional
        joy: {axes: [0.0, 0.0], buttons: [0, 1]}     # optional
      - t: 5.0
        ...

Wrist poses are targets for the IK end-effector frames in the pelvis frame (x forward, y left, z up).
The head pose is in the headset's world frame, robot basis (see ``xr_frames``). rpy is roll about x,
pitch about y, yaw about z: R = Rz(yaw)·Ry(pitch)·Rx(roll). A keyframe that leaves out a field repeats
the previous keyframe's value; the first keyframe must give both wrists, its head defaults to
``xr_frames.DEFAULT_WORLD_T_HEAD`` and its joystick to no axes and no buttons.

A player samples the scenario at ``sample_rate_hz`` on the clock it runs on, at t = k / sample_rate_hz
(``device_sample_time``); in simulation that is the simulation clock, so the device rate holds whatever
the real-time factor and whatever the rate of the clock ticks.

``tracking`` makes the wrist samples those of an imperfect tracker (``Scenario.clean`` gives the operator's
true motion): each device sample k = floor(t·sample_rate_hz) gets its own noise, and during a dropout the
wrists repeat the last sample before it.

Between keyframes positions follow a minimum-jerk profile and rotations a slerp with the same timing
(zero velocity and acceleration at every keyframe). Joystick values are held from their keyframe until
the next one that sets them. Before 0 and after the last keyframe the end values hold.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from g1_teleop.core.rotations import IDENTITY_WXYZ, slerp_wxyz, transform, wxyz_from_rpy
from g1_teleop.core.strict_yaml import load_yaml
from g1_teleop.operator.xr_frames import DEFAULT_WORLD_T_HEAD

DEFAULT_SAMPLE_RATE_HZ = 60.0
_QUATERNION_NORM_TOLERANCE = 1e-3


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message reads ``file:key: what is wrong``."""


@dataclass(frozen=True)
class OperatorSample:
    """What the scripted operator does at time t (s): poses as 4x4 matrices (m), joystick values."""

    t: float
    world_T_head: np.ndarray
    pelvis_T_left_wrist: np.ndarray
    pelvis_T_right_wrist: np.ndarray
    joy_axes: tuple[float, ...]
    joy_buttons: tuple[int, ...]


@dataclass(frozen=True)
class KeyPose:
    """A keyframe pose: position (3,) m and unit quaternion (w, x, y, z)."""

    position: np.ndarray
    quat_wxyz: np.ndarray


@dataclass(frozen=True)
class JoyValues:
    """Joystick axes ([-1, 1]) and buttons (0/1)."""

    axes: tuple[float, ...]
    buttons: tuple[int, ...]


@dataclass(frozen=True)
class Keyframe:
    """One keyframe after validation, with left-out fields filled from the previous keyframe."""

    t: float
    head: KeyPose
    left_wrist: KeyPose
    right_wrist: KeyPose
    joy: JoyValues


@dataclass(frozen=True)
class TrackingNoise:
    """Tracker imperfections on the wrist samples: jitter_m (RMS of the 3D position noise, m), dropouts of
    dropout_s seconds every dropout_every_s seconds (0: none), noise seed."""

    jitter_m: float = 0.0
    dropout_every_s: float = 0.0
    dropout_s: float = 0.0
    seed: int = 0

    def dropout_start(self, t: float) -> float | None:
        """Start (s) of the dropout that covers t, or None when the wrists are tracked at t."""
        if self.dropout_s <= 0.0 or t < self.dropout_every_s:
            return None
        start = math.floor(t / self.dropout_every_s + 1e-9) * self.dropout_every_s
        return start if t < start + self.dropout_s else None

    def offset(self, sample_index: int, wrist: int) -> np.ndarray:
        """Position noise (3,) m of one wrist (0 left, 1 right) in one device sample."""
        if self.jitter_m == 0.0:
            return np.zeros(3)
        rng = np.random.default_rng((self.seed, sample_index, wrist))
        return rng.normal(0.0, self.jitter_m / math.sqrt(3.0), 3)


@dataclass(frozen=True)
class Scenario:
    """A validated scenario; build it with ``Scenario.load``."""

    source: str
    sample_rate_hz: float
    description: str
    keyframes: tuple[Keyframe, ...]
    tracking: TrackingNoise | None = None

    def clean(self) -> Scenario:
        """The operator's true motion: this scenario without its tracking imperfections."""
        return dataclasses.replace(self, tracking=None)

    @property
    def duration(self) -> float:
        """Time of the last keyframe (s)."""
        return self.keyframes[-1].t

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        """Read and validate a scenario file; raises ScenarioError naming the file and key at fault."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ScenarioError(f"{path}: cannot read: {exc.strerror or exc}") from None
        try:
            data = load_yaml(text, str(path))
        except yaml.YAMLError as exc:
            raise ScenarioError(f"{path}: not valid YAML: {exc}") from None
        return _Parser(str(path)).scenario(data)

    def device_sample_time(self, t: float) -> float:
        """Time (s) of the device's latest sample at or before t: k / sample_rate_hz on the player's clock."""
        return math.floor(t * self.sample_rate_hz + 1e-9) / self.sample_rate_hz

    def sample(self, t: float) -> OperatorSample:
        """The operator's poses and joystick at time t (s), as the tracker reports them; the end values hold
        outside [0, duration]."""
        if not math.isfinite(t):
            raise ValueError(f"Scenario.sample: time must be finite, got {t!r}")
        true = self._true_sample(t)
        if self.tracking is None:
            return true
        lost_at = self.tracking.dropout_start(t)
        seen = true if lost_at is None else self._true_sample(lost_at - 1.0 / self.sample_rate_hz)
        index = math.floor(seen.t * self.sample_rate_hz + 1e-9)
        wrists = []
        for wrist, T in enumerate((seen.pelvis_T_left_wrist, seen.pelvis_T_right_wrist)):
            T = T.copy()
            T[:3, 3] += self.tracking.offset(index, wrist)
            wrists.append(T)
        return dataclasses.replace(true, pelvis_T_left_wrist=wrists[0], pelvis_T_right_wrist=wrists[1])

    def _true_sample(self, t: float) -> OperatorSample:
        keys = self.keyframes
        i = bisect.bisect_right([k.t for k in keys], t) - 1  # last keyframe at or before t
        if i < 0 or i == len(keys) - 1:
            a = b = keys[max(i, 0)]
            s = 0.0
        else:
            a, b = keys[i], keys[i + 1]
            s = minimum_jerk((t - a.t) / (b.t - a.t))
        return OperatorSample(
            t=t,
            world_T_head=_interpolate(a.head, b.head, s),
            pelvis_T_left_wrist=_interpolate(a.left_wrist, b.left_wrist, s),
            pelvis_T_right_wrist=_interpolate(a.right_wrist, b.right_wrist, s),
            joy_axes=a.joy.axes,
            joy_buttons=a.joy.buttons,
        )


def minimum_jerk(tau: float) -> float:
    """Minimum-jerk time scaling 10τ³ − 15τ⁴ + 6τ⁵ of τ ∈ [0, 1] (clamped outside)."""
    tau = min(max(tau, 0.0), 1.0)
    return tau**3 * (10.0 - 15.0 * tau + 6.0 * tau * tau)


def _interpolate(a: KeyPose, b: KeyPose, s: float) -> np.ndarray:
    """The pose a fraction s ∈ [0, 1] of the way from a to b: positions along the line, rotations by slerp."""
    return transform(a.position + s * (b.position - a.position), slerp_wxyz(a.quat_wxyz, b.quat_wxyz, s))


# DEFAULT_WORLD_T_HEAD has the identity rotation.
_DEFAULT_HEAD = KeyPose(DEFAULT_WORLD_T_HEAD[:3, 3].copy(), IDENTITY_WXYZ.copy())


class _Parser:
    """Validation of the YAML tree; every error names the file and the key path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, key: str, message: str) -> ScenarioError:
        return ScenarioError(f"{self.source}:{key}: {message}" if key else f"{self.source}: {message}")

    def scenario(self, data: Any) -> Scenario:
        self.mapping(data, "", required={"keyframes"}, optional={"sample_rate_hz", "description", "tracking"})
        rate = self.number(data.get("sample_rate_hz", DEFAULT_SAMPLE_RATE_HZ), "sample_rate_hz")
        if rate <= 0.0:
            raise self.error("sample_rate_hz", f"must be > 0, got {rate}")
        description = data.get("description", "")
        if not isinstance(description, str):
            raise self.error("description", f"expected text, got {type(description).__name__}")
        raw_keys = data["keyframes"]
        if not isinstance(raw_keys, list) or not raw_keys:
            raise self.error("keyframes", "expected a non-empty list of keyframes")
        keyframes: list[Keyframe] = []
        for i, raw in enumerate(raw_keys):
            keyframes.append(self.keyframe(raw, f"keyframes[{i}]", keyframes[-1] if keyframes else None))
        tracking = self.tracking(data["tracking"], "tracking") if "tracking" in data else None
        return Scenario(self.source, rate, description, tuple(keyframes), tracking)

    def tracking(self, raw: Any, key: str) -> TrackingNoise:
        self.mapping(raw, key, required=set(), optional={"jitter_m", "dropout_every_s", "dropout_s", "seed"})
        values = {name: self.number(raw[name], f"{key}.{name}") for name in ("jitter_m", "dropout_every_s",
                                                                             "dropout_s") if name in raw}
        for name, value in values.items():
            if value < 0.0:
                raise self.error(f"{key}.{name}", f"must be >= 0, got {value}")
        seed = raw.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise self.error(f"{key}.seed", f"expected an integer >= 0, got {seed!r}")
        noise = TrackingNoise(**values, seed=seed)
        if noise.dropout_s > 0.0 and not noise.dropout_every_s > noise.dropout_s:
            raise self.error(f"{key}.dropout_every_s", f"must exceed dropout_s ({noise.dropout_s} s), got "
                                                       f"{noise.dropout_every_s}")
        return noise

    def keyframe(self, raw: Any, key: str, previous: Keyframe | None) -> Keyframe:
        if previous is None:
            self.mapping(raw, key, required={"t", "left_wrist", "right_wrist"}, optional={"head", "joy"})
        else:
            self.mapping(raw, key, required={"t"}, optional={"left_wrist", "right_wrist", "head", "joy"})
        t = self.number(raw["t"], f"{key}.t")
        if previous is None and t != 0.0:
            raise self.error(f"{key}.t", f"the first keyframe must be at t = 0, got {t}")
        if previous is not None and t <= previous.t:
            raise self.error(f"{key}.t", f"times must strictly increase: {t} follows {previous.t}")
        poses = {
            name: self.pose(raw[name], f"{key}.{name}") if name in raw else getattr(previous, name, None)
            for name in ("left_wrist", "right_wrist", "head")
        }
        head = poses["head"] or _DEFAULT_HEAD
        joy_before = previous.joy if previous is not None else JoyValues((), ())
        joy = self.joy(raw["joy"], f"{key}.joy", joy_before) if "joy" in raw else joy_before
        return Keyframe(t, head, poses["left_wrist"], poses["right_wrist"], joy)

    def pose(self, raw: Any, key: str) -> KeyPose:
        self.mapping(raw, key, required={"position"}, optional={"rpy", "quat_wxyz"})
        position = self.vector(raw["position"], f"{key}.position", 3)
        if ("rpy" in raw) == ("quat_wxyz" in raw):
            raise self.error(key, "give the orientation as exactly one of rpy or quat_wxyz")
        if "rpy" in raw:
            return KeyPose(position, wxyz_from_rpy(*self.vector(raw["rpy"], f"{key}.rpy", 3)))
        q = self.vector(raw["quat_wxyz"], f"{key}.quat_wxyz", 4)
        norm = float(np.linalg.norm(q))
        if abs(norm - 1.0) > _QUATERNION_NORM_TOLERANCE:
            raise self.error(f"{key}.quat_wxyz", f"expected a unit quaternion, got norm {norm:.6g}")
        return KeyPose(position, q / norm)

    def joy(self, raw: Any, key: str, previous: JoyValues) -> JoyValues:
        self.mapping(raw, key, required=set(), optional={"axes", "buttons"})
        axes = previous.axes
        if "axes" in raw:
            values = raw["axes"]
            if not isinstance(values, list):
                raise self.error(f"{key}.axes", f"expected a list of numbers, got {type(values).__name__}")
            axes = tuple(self.number(v, f"{key}.axes[{i}]") for i, v in enumerate(values))
            bad = [i for i, v in enumerate(axes) if not -1.0 <= v <= 1.0]
            if bad:
                raise self.error(f"{key}.axes[{bad[0]}]", f"must be within [-1, 1], got {axes[bad[0]]}")
        buttons = previous.buttons
        if "buttons" in raw:
            values = raw["buttons"]
            if not isinstance(values, list):
                raise self.error(f"{key}.buttons", f"expected a list of 0/1, got {type(values).__name__}")
            for i, v in enumerate(values):
                if isinstance(v, bool) or v not in (0, 1):
                    raise self.error(f"{key}.buttons[{i}]", f"expected 0 or 1, got {v!r}")
            buttons = tuple(int(v) for v in values)
        for name, old, new in (("axes", previous.axes, axes), ("buttons", previous.buttons, buttons)):
            if old and len(new) != len(old):
                raise self.error(
                    f"{key}.{name}", f"expected {len(old)} values like the earlier keyframes, got {len(new)}"
                )
        return JoyValues(axes, buttons)

    def mapping(self, raw: Any, key: str, required: set[str], optional: set[str]) -> None:
        if not isinstance(raw, dict):
            raise self.error(key, f"expected a mapping, got {type(raw).__name__}")
        missing = sorted(required - raw.keys())
        if missing:
            raise self.error(key, f"missing key(s): {', '.join(missing)}")
        unknown = sorted(str(k) for k in raw.keys() - required - optional)
        if unknown:
            allowed = ", ".join(sorted(required | optional))
            raise self.error(key, f"unknown key(s): {', '.join(unknown)} (allowed: {allowed})")

    def number(self, raw: Any, key: str) -> float:
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
            raise self.error(key, f"expected a finite number, got {raw!r}")
        return float(raw)

    def vector(self, raw: Any, key: str, size: int) -> np.ndarray:
        if not isinstance(raw, list) or len(raw) != size:
            raise self.error(key, f"expected a list of {size} numbers, got {raw!r}")
        return np.array([self.number(v, f"{key}[{i}]") for i, v in enumerate(raw)])
