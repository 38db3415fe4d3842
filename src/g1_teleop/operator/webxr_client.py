"""A simulated headset page: vuer's web-client protocol spoken from Python, byte for byte. ROS-free.

Builds the events vuer 0.0.60's web client sends (``webxr_events`` describes them and where they come from in
the client's source) from headset poses, and encodes them as the client does: msgpackr ``Packr({useRecords:
false})``, which writes a JavaScript number that is a 32-bit integer as a msgpack integer and any other number
as a float64, ``undefined`` as the extension type 0 (``d4 00 00``), and maps in insertion order. Joint and
controller poses come from a ``Float32Array`` (XRRigidTransform.matrix): their values are float32s. ``send``
speaks over a WebSocket (the ``websockets`` package) to a WebXR server. Used by the benchmark and the tests,
and to drive the server from a scenario without a headset.

What the server sends is msgpack (``Vuer.send``: floats as float32, bytes as binary), decoded as msgpackr decodes
it; ``video_frame`` reads a camera frame out of an event as the client renders it (vuer's ``ImageBackground``
elements: their ``src`` JPEG bytes, one per eye layer, ``webxr_video``) and measures its latency.
"""

from __future__ import annotations

import asyncio
import math
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgpack
import numpy as np
import websockets

from g1_teleop.core.camera_images import decode_jpeg
from g1_teleop.operator.webxr_events import HAND_JOINTS, INDEX_TIP, THUMB_TIP
from g1_teleop.operator.webxr_video import EYE_LAYERS

UNDEFINED = msgpack.ExtType(0, b"\x00")
"""JavaScript's ``undefined`` as msgpackr writes it."""

_JS_INT_MIN, _JS_UINT_MAX = -(2**31), 2**32 - 1


def encode(event: Any) -> bytes:
    """The bytes msgpackr's ``pack`` gives for ``event`` (a JSON-like value; floats are JavaScript numbers)."""
    return msgpack.packb(_as_javascript(event), use_bin_type=True)


def _as_javascript(value: Any) -> Any:
    if isinstance(value, msgpack.ExtType):  # a tuple, but one msgpack value
        return value
    if isinstance(value, float) and value.is_integer() and _JS_INT_MIN <= value <= _JS_UINT_MAX:
        return int(value)  # msgpackr: `n >>> 0 === n` or `n >> 0 === n` → an integer format
    if isinstance(value, int) and not isinstance(value, bool) and not _JS_INT_MIN <= value <= _JS_UINT_MAX:
        return float(value)  # beyond 32 bits a JavaScript number is written as a float64
    if isinstance(value, dict):
        return {k: _as_javascript(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_javascript(v) for v in value]
    return value


def _float32s(values: np.ndarray) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=np.float32).ravel()]


def _column_major(T: np.ndarray) -> np.ndarray:
    return np.asarray(T, dtype=float).reshape(4, 4).ravel(order="F")


def init_event() -> dict:
    """What the page sends when its WebSocket opens."""
    return {"etype": "INIT"}


def camera_move(xr_T_head: np.ndarray, width: int = 1920, height: int = 1824) -> dict:
    """CAMERA_MOVE for the viewer pose ``xr_T_head`` (OpenXR basis, m), as ``OrbitCamera`` publishes it through
    the Scene's reducers (``world`` from SceneGroup, then BackgroundColor); no ``ts``."""
    T = np.asarray(xr_T_head, dtype=float)
    elements = _float32s(_column_major(T))  # three.js copies the XR view pose, a Float32Array
    rotation = [*_three_euler_xyz(np.asarray(elements).reshape(4, 4, order="F")), "XYZ"]
    camera = {"type": "PerspectiveCamera", "near": 0.01, "far": 200, "matrix": elements,
              "position": elements[12:15], "rotation": rotation, "up": [0, 1, 0], "fov": 75, "focus": 10,
              "aspect": width / height, "orbit_distance": 1.0, "height": height, "width": width}
    world = {"position": [0, 0, 0], "rotation": [0, 0, 0], "scale": 1, "background": "#131416"}
    return {"etype": "CAMERA_MOVE", "key": "defaultCamera", "value": {"camera": camera, "world": world}}


def _three_euler_xyz(m: np.ndarray) -> list[float]:
    """three.js ``Euler.setFromRotationMatrix(m, "XYZ")`` (src/math/Euler.js)."""
    y = math.asin(min(max(m[0, 2], -1.0), 1.0))
    if abs(m[0, 2]) < 0.9999999:
        return [math.atan2(-m[1, 2], m[2, 2]), y, math.atan2(-m[0, 1], m[0, 0])]
    return [math.atan2(m[2, 1], m[1, 1]), y, 0.0]


def hand_move(left: np.ndarray | None, right: np.ndarray | None, ts_ms: float) -> dict:
    """HAND_MOVE for two hands' joint poses ((25, 4, 4) each, OpenXR basis, m; None: not tracked) stamped
    ``ts_ms`` (Date.now()). The states are the client's (``getHandLandmarks``): pinch and tap under 1 cm thumb
    to index tip, squeeze under 7 cm middle tip to its proximal phalanx."""
    value: dict[str, Any] = {}
    for side, joints in (("left", left), ("right", right)):
        if joints is None:
            value[side], value[f"{side}State"] = UNDEFINED, {}
            continue
        flat = [x for T in np.asarray(joints, dtype=float) for x in _float32s(_column_major(T))]
        points = np.asarray(flat).reshape(len(HAND_JOINTS), 16)[:, 12:15]

        def dist(a: str, b: str, points: np.ndarray = points) -> float:
            return float(np.linalg.norm(points[HAND_JOINTS.index(a)] - points[HAND_JOINTS.index(b)]))

        pinch, squeeze = dist("thumb-tip", "index-finger-tip"), dist("middle-finger-tip",
                                                                      "middle-finger-phalanx-proximal")
        value[side] = flat
        value[f"{side}State"] = {"pinch": pinch < 0.01, "pinchValue": pinch, "squeeze": squeeze < 0.07,
                                 "squeezeValue": squeeze, "tap": pinch < 0.01, "tapValue": pinch}
    return {"ts": ts_ms, "etype": "HAND_MOVE", "key": "hands", "value": value}


@dataclass(frozen=True)
class ControllerInput:
    """One controller as the page reads it: target-ray pose (OpenXR basis, m) and gamepad ``xr-standard``
    values (thumbstick x right, y toward the operator; ``a``/``b`` are X/Y on the left controller)."""

    xr_T_controller: np.ndarray
    trigger: float = 0.0
    squeeze: float = 0.0
    thumbstick: tuple[float, float] = (0.0, 0.0)
    thumbstick_pressed: bool = False
    a: bool = False
    b: bool = False


def controller_move(left: ControllerInput | None, right: ControllerInput | None, ts_ms: float) -> dict:
    """CONTROLLER_MOVE as ``MotionControllers`` sends it (``getState``); a button counts as pressed from 0.5
    (the headset decides in reality; its value is what is sent)."""
    value: dict[str, Any] = {}
    for side, c in (("left", left), ("right", right)):
        if c is None:
            value[side], value[f"{side}State"] = UNDEFINED, {}
            continue
        value[side] = _float32s(_column_major(c.xr_T_controller))
        value[f"{side}State"] = {
            "trigger": c.trigger >= 0.5, "squeeze": c.squeeze >= 0.5, "touchpad": False,
            "thumbstick": c.thumbstick_pressed, "aButton": c.a, "bButton": c.b,
            "triggerValue": c.trigger, "squeezeValue": c.squeeze, "touchpadValue": [0, 0],
            "thumbstickValue": list(c.thumbstick), "aButtonValue": c.a, "bButtonValue": c.b,
        }
    return {"ts": ts_ms, "etype": "CONTROLLER_MOVE", "key": "motionControllers", "value": value}


def synthetic_hand(xr_T_wrist: np.ndarray, pinch_m: float = 0.06) -> np.ndarray:
    """(25, 4, 4) joint poses of a flat hand at ``xr_T_wrist`` (OpenXR hand-joint axes: fingers along −z, the
    back of the hand +y) whose thumb tip is ``pinch_m`` from the index fingertip; joints keep the wrist's axes."""
    offsets = np.zeros((len(HAND_JOINTS), 3))
    for finger, x in (("index", 0.025), ("middle", 0.0), ("ring", -0.02), ("pinky", -0.038)):
        names = [n for n in HAND_JOINTS if n.startswith(f"{finger}-finger")]
        for k, name in enumerate(names):
            offsets[HAND_JOINTS.index(name)] = (x, 0.0, -0.03 - 0.025 * k)
    tip = offsets[INDEX_TIP]
    for k, name in enumerate(["thumb-metacarpal", "thumb-phalanx-proximal", "thumb-phalanx-distal"]):
        offsets[HAND_JOINTS.index(name)] = (0.03 + 0.01 * k, -0.01, -0.02 - 0.02 * k)
    offsets[THUMB_TIP] = tip + np.array([0.0, -pinch_m, 0.0])  # under the index tip, toward the palm
    W = np.asarray(xr_T_wrist, dtype=float)
    joints = np.repeat(W[None], len(HAND_JOINTS), axis=0)
    joints[:, :3, 3] = W[:3, 3] + offsets @ W[:3, :3].T
    return joints


class HeadsetPage:
    """A WebSocket to a WebXR server, opened as the page opens it (then INIT); ``send`` one event dict."""

    def __init__(self, uri: str, ssl_context: ssl.SSLContext | None = None) -> None:
        self.uri, self.ssl_context = uri, ssl_context
        self.socket: Any = None

    async def __aenter__(self) -> HeadsetPage:
        self.socket = await websockets.connect(self.uri, ssl=self.ssl_context, max_size=None)
        await self.send(init_event())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.socket.close()

    async def send(self, event: dict) -> None:
        await self.socket.send(encode(event))

    async def send_bytes(self, data: bytes) -> None:
        await self.socket.send(data)

    async def receive(self, timeout_s: float = 5.0) -> dict:
        """The next event the server sends (msgpack-decoded)."""
        return (await self.receive_stamped(timeout_s))[0]

    async def receive_stamped(self, timeout_s: float = 5.0) -> tuple[dict, int]:
        """The next event the server sends and when it arrived (wall clock, ns), taken before decoding."""
        data = await asyncio.wait_for(self.socket.recv(), timeout_s)
        return msgpack.unpackb(data, raw=False), time.time_ns()

    async def while_watching(self, sending: Awaitable[None], watch: Callable[[HeadsetPage], Awaitable[None]],
                             linger_s: float = 0.0) -> None:
        """Await ``sending`` while ``watch(self)`` reads what the server sends, then ``linger_s`` more (s) for what
        is still on its way; the watcher's error, if it stopped on one, is raised."""
        watching = asyncio.ensure_future(watch(self))
        await sending
        await asyncio.sleep(linger_s)
        if watching.done():
            watching.result()
        watching.cancel()


@dataclass(frozen=True)
class VideoFrame:
    """A robot camera frame as the page got it: each eye's image (RGB, height × width × 3), the elements' fields
    (but ``src``) by eye, the frame's sequence number, its camera stamp, the server's send time and the page's
    receive time (wall clock, ns)."""

    left: np.ndarray
    right: np.ndarray
    fields: dict[str, dict]
    seq: int
    stamp_ns: int
    sent_ns: int
    received_ns: int

    @property
    def latency_s(self) -> float:
        """Server send → page receive (s): meaningful when both run on one clock (the same machine)."""
        return (self.received_ns - self.sent_ns) / 1e9


def video_frame(event: dict, received_ns: int) -> VideoFrame | None:
    """The camera frame an event carries, None when it carries none; ValueError when its elements are neither one
    ``ImageBackground`` with a JPEG per eye layer (1: left, 2: right) nor one on layer 0 (the mono layout: ``right``
    is then the left image too) upserted into ``bgChildren``."""
    data = event.get("data") or {}
    nodes = [n for n in data.get("nodes", []) if isinstance(n, dict) and n.get("tag") == "ImageBackground"]
    if event.get("etype") != "UPSERT" or not nodes:
        return None
    by_layer = {n.get("layers"): n for n in nodes}
    mono = sorted(by_layer) == [0] and len(nodes) == 1
    if data.get("to") != "bgChildren" or not (mono or (sorted(by_layer) == sorted(EYE_LAYERS.values())
                                              and len(nodes) == 2)):
        raise ValueError(f"a camera frame must be two ImageBackground elements on layers 1 and 2 (or one on layer "
                         f"0) in bgChildren, got layers {[n.get('layers') for n in nodes]} in {data.get('to')!r}")
    eyes = {side: by_layer[0 if mono else layer] for side, layer in EYE_LAYERS.items()}
    images = {side: decode_jpeg(bytes(node["src"])) for side, node in eyes.items()}
    camera = event.get("camera", {})
    return VideoFrame(images["left"], images["right"],
                      {side: {k: v for k, v in node.items() if k != "src"} for side, node in eyes.items()},
                      int(camera.get("seq", 0)), int(camera.get("stamp_ns", 0)), int(camera.get("sent_ns", 0)),
                      received_ns)


def page_ssl_context(ca_file: str | None = None) -> ssl.SSLContext:
    """TLS for a page: trusting ``ca_file`` (the server's CA), or trusting anything (the browser after its
    warning page) when None."""
    if ca_file is not None:
        return ssl.create_default_context(cafile=ca_file)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context

