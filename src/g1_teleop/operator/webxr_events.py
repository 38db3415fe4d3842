"""vuer's WebXR client events → typed records in the headset's own frame (OpenXR basis, metres). ROS-free.

The web client shipped inside the ``vuer`` wheel (0.0.60, the version televuer pins in its pyproject.toml and
xr_teleoperate runs on Vision Pro, Quest and PICO) sends each event as one msgpack map, encoded by msgpackr
(``new Packr({useRecords: false})``). Its source is readable in the wheel: ``vuer/client_build/assets/chunks/
*.js.map``, file ``@vuer-ai/vuer/dist/index.js``; the events come from these functions of it:

* ``CAMERA_MOVE`` (``OrbitCamera`` through ``Scene``): ``{etype, key: "defaultCamera", value: {camera: {type,
  near, far, matrix, position, rotation, up, fov, focus, aspect, orbit_distance, height, width}, world: {...}}}``,
  no ``ts``. ``matrix`` is the camera's 4×4 pose, 16 numbers in column-major order; in an immersive session
  three.js sets the camera to the headset's viewer pose every frame, so this is ``xr_T_head`` (televuer's
  ``on_cam_move`` reads the same field).
* ``HAND_MOVE`` (``Hands``, ``getHandLandmarks``): ``{ts, etype, key: "hands", value: {left, leftState, right,
  rightState}}``; ``left``/``right`` are 25 joint poses × 16 numbers (column-major each), in the joint order of
  the WebXR Hand Input specification (https://immersive-web.github.io/webxr-hand-input/, "wrist" first). A hand
  that is not tracked is sent as ``undefined`` (msgpackr: the extension type 0) with ``leftState`` ``{}``.
  The client's own ``pinch`` flag (thumb–index under 1 cm, no hysteresis) is not used: see ``hand_pinch``.
* ``CONTROLLER_MOVE`` (``MotionControllers``, ``getState``): ``{ts, etype, key: "motionControllers", value:
  {left, leftState, right, rightState}}``; ``left``/``right`` the controller's target-ray pose (16 numbers), the
  state ``{trigger, squeeze, touchpad, thumbstick, aButton, bButton, triggerValue, squeezeValue, touchpadValue,
  thumbstickValue, aButtonValue, bButtonValue}`` read from the WebXR ``xr-standard`` gamepad (buttons 0 trigger,
  1 squeeze, 2 touchpad, 3 thumbstick, 4 A/X, 5 B/Y; axes 2, 3 the thumbstick, x right, y down).

``ts`` is the headset's ``Date.now()``: milliseconds since the Unix epoch, by the headset's clock.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgpack
import numpy as np

HAND_JOINTS: tuple[str, ...] = (
    "wrist",
    "thumb-metacarpal", "thumb-phalanx-proximal", "thumb-phalanx-distal", "thumb-tip",
    "index-finger-metacarpal", "index-finger-phalanx-proximal", "index-finger-phalanx-intermediate",
    "index-finger-phalanx-distal", "index-finger-tip",
    "middle-finger-metacarpal", "middle-finger-phalanx-proximal", "middle-finger-phalanx-intermediate",
    "middle-finger-phalanx-distal", "middle-finger-tip",
    "ring-finger-metacarpal", "ring-finger-phalanx-proximal", "ring-finger-phalanx-intermediate",
    "ring-finger-phalanx-distal", "ring-finger-tip",
    "pinky-finger-metacarpal", "pinky-finger-phalanx-proximal", "pinky-finger-phalanx-intermediate",
    "pinky-finger-phalanx-distal", "pinky-finger-tip",
)
"""The 25 hand joints in the WebXR Hand Input order (the order of a HAND_MOVE hand's poses)."""

THUMB_TIP = HAND_JOINTS.index("thumb-tip")
INDEX_TIP = HAND_JOINTS.index("index-finger-tip")

TRACKING_EVENTS = ("CAMERA_MOVE", "HAND_MOVE", "CONTROLLER_MOVE")


class MalformedEvent(ValueError):
    """An event whose payload does not have the layout the vuer client sends; the message names the field."""


@dataclass(frozen=True)
class HeadPose:
    """CAMERA_MOVE: the headset's viewer pose ``xr_T_head`` (4×4, OpenXR basis, m). CAMERA_MOVE has no stamp."""

    xr_T_head: np.ndarray
    device_time_s: float | None = None


@dataclass(frozen=True)
class HandJoints:
    """One tracked hand: ``xr_T_joints`` (25, 4, 4), each joint's pose in the headset world (OpenXR basis, m,
    OpenXR hand-joint axes), in the order of :data:`HAND_JOINTS`."""

    xr_T_joints: np.ndarray

    @property
    def xr_T_wrist(self) -> np.ndarray:
        return self.xr_T_joints[0]

    @property
    def xr_points(self) -> np.ndarray:
        """(25, 3) joint positions in the headset world (OpenXR basis, m)."""
        return self.xr_T_joints[:, :3, 3]

    def pinch_distance_m(self) -> float:
        """Thumb tip to index fingertip (m)."""
        return float(np.linalg.norm(self.xr_points[THUMB_TIP] - self.xr_points[INDEX_TIP]))


@dataclass(frozen=True)
class HandsTracking:
    """HAND_MOVE: each hand, None when the headset does not track it; ``device_time_s`` the headset's stamp
    (Unix s, its clock)."""

    left: HandJoints | None
    right: HandJoints | None
    device_time_s: float | None


@dataclass(frozen=True)
class Controller:
    """One controller of a CONTROLLER_MOVE: its target-ray pose ``xr_T_controller`` (4×4, OpenXR basis, m) and
    its gamepad. Values in [0, 1]; ``thumbstick`` (x, y) in [-1, 1], x to the right, y toward the operator
    (WebXR's sign). ``a``/``b``: A and B on the right controller, X and Y on the left."""

    xr_T_controller: np.ndarray
    trigger: float
    squeeze: float
    trigger_pressed: bool
    squeeze_pressed: bool
    thumbstick: tuple[float, float]
    thumbstick_pressed: bool
    a_pressed: bool
    b_pressed: bool


@dataclass(frozen=True)
class ControllersState:
    """CONTROLLER_MOVE: each controller, None when the headset does not see it."""

    left: Controller | None
    right: Controller | None
    device_time_s: float | None


XrEvent = HeadPose | HandsTracking | ControllersState


def parse_event(etype: str, value: Any, ts_ms: Any = None) -> XrEvent | None:
    """The record of one client event (fields as the vuer client sends them, decoded from msgpack), or None for
    an event that carries no tracking (INIT, key presses, …). MalformedEvent when a tracking event's value does
    not have the client's layout."""
    if etype not in TRACKING_EVENTS:
        return None
    device_time_s = _device_time_s(ts_ms, etype)
    if etype == "CAMERA_MOVE":
        camera = _mapping(_mapping(value, "CAMERA_MOVE value").get("camera"), "CAMERA_MOVE value.camera")
        return HeadPose(_pose(camera.get("matrix"), "CAMERA_MOVE value.camera.matrix"), device_time_s)
    sides = _mapping(value, f"{etype} value")
    if etype == "HAND_MOVE":
        return HandsTracking(_hand(sides.get("left"), "left"), _hand(sides.get("right"), "right"), device_time_s)
    return ControllersState(_controller(sides, "left"), _controller(sides, "right"), device_time_s)


def _device_time_s(ts_ms: Any, etype: str) -> float | None:
    if ts_ms is None:
        return None
    if isinstance(ts_ms, bool) or not isinstance(ts_ms, (int, float)) or not math.isfinite(ts_ms):
        raise MalformedEvent(f"{etype} ts must be the headset's Date.now() in ms, got {ts_ms!r}")
    return float(ts_ms) / 1000.0


def _absent(value: Any) -> bool:
    """A side the client did not fill: missing, nil, or JavaScript's ``undefined`` (msgpackr's extension 0)."""
    return value is None or isinstance(value, msgpack.ExtType)


def _mapping(value: Any, where: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise MalformedEvent(f"{where} must be a map, got {type(value).__name__}")
    return value


def _numbers(value: Any, count: int, where: str) -> np.ndarray:
    if not isinstance(value, (list, tuple)) or len(value) != count:
        got = f"{len(value)} values" if isinstance(value, (list, tuple)) else type(value).__name__
        raise MalformedEvent(f"{where} must be {count} numbers, got {got}")
    array = np.array(value)
    if array.dtype.kind not in "iuf":  # not all integers and floats: booleans, strings, nil, maps
        raise MalformedEvent(f"{where} must hold numbers only")
    return array.astype(float, copy=False)


def _pose(value: Any, where: str) -> np.ndarray:
    """16 numbers in column-major order (WebGL's, XRRigidTransform.matrix) → a 4×4 matrix."""
    return _numbers(value, 16, where).reshape(4, 4, order="F")


def _hand(value: Any, side: str) -> HandJoints | None:
    if _absent(value):
        return None
    flat = _numbers(value, 16 * len(HAND_JOINTS), f"HAND_MOVE value.{side}")
    return HandJoints(flat.reshape(len(HAND_JOINTS), 4, 4).transpose(0, 2, 1))


def _controller(sides: Mapping, side: str) -> Controller | None:
    pose = sides.get(side)
    if _absent(pose):
        return None
    where = f"CONTROLLER_MOVE value.{side}State"
    state = _mapping(sides.get(f"{side}State"), where)

    def flag(name: str) -> bool:
        return bool(state.get(name, False))

    def level(name: str) -> float:
        v = state.get(name, 0.0)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise MalformedEvent(f"{where}.{name} must be a number, got {v!r}")
        return float(v)

    stick = _numbers(state.get("thumbstickValue", [0.0, 0.0]), 2, f"{where}.thumbstickValue")
    return Controller(
        xr_T_controller=_pose(pose, f"CONTROLLER_MOVE value.{side}"),
        trigger=level("triggerValue"), squeeze=level("squeezeValue"),
        trigger_pressed=flag("trigger"), squeeze_pressed=flag("squeeze"),
        thumbstick=(float(stick[0]), float(stick[1])), thumbstick_pressed=flag("thumbstick"),
        a_pressed=flag("aButton"), b_pressed=flag("bButton"),
    )
