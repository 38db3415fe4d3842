"""xr_input's PICO source: PICO's PC-side SDK (``xrobotoolkit-sdk``, a client of XRoboToolkit PC Service), polled
in a thread of its own, each new reading turned into the operator samples a WebXR headset gives (webxr_samples).
ROS-free.

The SDK connects to the PC service (RoboticsServiceProcess, gRPC) at 127.0.0.1:60061, or at ``connectAddr`` /
``connectPort`` of the ``[Client]`` section of a ``PXREASetting.ini`` in the working directory, and keeps the newest
state the service streams from the headset's XRoboToolkit app; it has no connection getter (without the service
every getter reads zeros), so the client polls at ``poll_hz`` (90 Hz), takes a reading as new when the SDK's
timestamp (or the body's) changes, and probes the service's TCP port to tell "no service" (LinkState.FAILED)
from "no headset" (NO_CLIENT, or DROPPED once data came).

Frames: PICO's world is OpenXR's basis (x right, y up, −z forward at the start, m; XRoboToolkit's teleop samples
turn headset poses to a z-up world by exactly xr_frames' ROBOT_R_OPENXR), so head, controller and hand poses go as
they are into the same XR → robot conversion, clutch gestures and Joy layout as WebXR's (``input``: controllers or
hands). Hands: PICO's 26 OpenXR joints (palm first) → WebXR's 25 (hand_landmarks' ``pico`` layout), the
wrist's OpenXR axes found from the landmarks (hand_landmark_frame). Body tracking: XRobot's 24 points in Unity's
frame → the z-up ``operator_world`` frame of source body (body_stream.body_stream_from_xrobot), carried by each
sample (``PicoSample.body``) for xr/body. A pose of zeros (an untracked head, a sleeping controller) makes that
pose invalid, as in WebXR.
"""

from __future__ import annotations

import configparser
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from types import ModuleType

import numpy as np

from g1_teleop.core.hand_landmarks import to_webxr_order
from g1_teleop.core.rotations import matrix_from_wxyz
from g1_teleop.operator.body_stream import BodyStreamError, body_stream_from_xrobot
from g1_teleop.operator.hand_landmark_frame import wrist_from_landmarks
from g1_teleop.operator.webxr_events import (
    HAND_JOINTS,
    Controller,
    ControllersState,
    HandJoints,
    HandsTracking,
    HeadPose,
)
from g1_teleop.operator.webxr_samples import SampleAssembler, XrSample
from g1_teleop.operator.webxr_status import LinkState, XrLinkStatus
from g1_teleop.operator.xr_joy import XrJoyConfig

DEFAULT_ADDRESS = ("127.0.0.1", 60061)
SETTINGS_FILE = "PXREASetting.ini"
PRESSED = 0.5  # trigger or grip value from which it counts as pressed (WebXR's buttons report pressed alike)
SERVICE = "XRoboToolkit PC Service"


@dataclass(frozen=True)
class PicoLink:
    """How the SDK is polled and the link judged: ``poll_hz`` readings a second, samples older than
    ``stale_after_s`` (s) make the link stale, the service's port is probed every ``retry_s`` (s) while no data
    comes."""

    poll_hz: float = 90.0
    stale_after_s: float = 0.5
    retry_s: float = 2.0

    def __post_init__(self) -> None:
        if not self.poll_hz > 0 or not self.stale_after_s > 0 or not self.retry_s > 0:
            raise ValueError(f"PicoLink: poll_hz, stale_after_s and retry_s must be positive, got {self}")


@dataclass(frozen=True, eq=False)
class PicoSample(XrSample):
    """An XrSample with the operator's body: ``body`` (24, 7) = x, y, z (m), qw, qx, qy, qz per XRobot body point
    in ``operator_world`` (z up, x forward), None when the headset sends no body tracking."""

    body: np.ndarray | None = None


@dataclass(frozen=True)
class PicoReading:
    """One poll of the SDK, as it reports (poses [x, y, z, qx, qy, qz, qw], m, PICO's world; values in [0, 1],
    axes (x right, y forward) in [-1, 1]); ``time_ns`` 0: nothing received yet."""

    time_ns: int
    head: np.ndarray
    controllers: dict[str, dict[str, object]]
    hands: dict[str, np.ndarray]
    hands_active: dict[str, bool]
    body_ns: int
    body: np.ndarray | None


def read_sdk(sdk: ModuleType) -> PicoReading:
    """Every getter of the SDK once."""
    controllers = {}
    for side, lower, upper in (("left", sdk.get_X_button, sdk.get_Y_button),
                               ("right", sdk.get_A_button, sdk.get_B_button)):
        controllers[side] = {
            "pose": np.asarray(getattr(sdk, f"get_{side}_controller_pose")(), dtype=float),
            "trigger": float(getattr(sdk, f"get_{side}_trigger")()), "grip": float(getattr(sdk, f"get_{side}_grip")()),
            "axis": tuple(float(v) for v in getattr(sdk, f"get_{side}_axis")()),
            "axis_click": bool(getattr(sdk, f"get_{side}_axis_click")()), "lower": bool(lower()),
            "upper": bool(upper())}
    body = np.asarray(sdk.get_body_joints_pose(), dtype=float) if sdk.is_body_data_available() else None
    return PicoReading(
        time_ns=int(sdk.get_time_stamp_ns()), head=np.asarray(sdk.get_headset_pose(), dtype=float),
        controllers=controllers,
        hands={side: np.asarray(getattr(sdk, f"get_{side}_hand_tracking_state")(), dtype=float)
               for side in ("left", "right")},
        hands_active={side: bool(getattr(sdk, f"get_{side}_hand_is_active")()) for side in ("left", "right")},
        body_ns=int(sdk.get_body_timestamp_ns()), body=body)


def pose_matrix(pose: np.ndarray) -> np.ndarray:
    """[x, y, z, qx, qy, qz, qw] (PICO's world = OpenXR's basis, m) → (4, 4); zeros (4, 4), an invalid pose for
    xr_frames, when the quaternion is zero (not tracked)."""
    pose = np.asarray(pose, dtype=float)
    norm = np.linalg.norm(pose[3:7])
    if pose.shape != (7,) or not np.isfinite(pose).all() or norm < 1e-6:
        return np.zeros((4, 4))
    T = np.eye(4)
    qx, qy, qz, qw = pose[3:7] / norm
    T[:3, :3] = matrix_from_wxyz(np.array([qw, qx, qy, qz]))
    T[:3, 3] = pose[:3]
    return T


def controller(state: dict[str, object]) -> Controller | None:
    """One controller's SDK values → WebXR's Controller (thumbstick y toward the operator: PICO's forward is +y);
    None when its pose is not tracked."""
    xr_T = pose_matrix(state["pose"])
    if not xr_T[3, 3]:
        return None
    trigger, grip = float(state["trigger"]), float(state["grip"])
    x, y = state["axis"]
    return Controller(xr_T, trigger, grip, trigger >= PRESSED, grip >= PRESSED, (float(x), -float(y)),
                      bool(state["axis_click"]), bool(state["lower"]), bool(state["upper"]))


def hand(side: str, joints: np.ndarray, active: bool) -> HandJoints | None:
    """PICO's 26 hand joints ([x, y, z, qx, qy, qz, qw] each, OpenXR's order, palm first) → WebXR's 25 with the
    wrist's OpenXR axes (each joint gets the wrist's orientation, as avp_client); None when not tracked."""
    joints = np.asarray(joints, dtype=float)
    if not active or joints.shape != (26, 7) or not np.any(joints[:, :3]):
        return None
    points = to_webxr_order(joints[:, :3], "pico")
    try:
        world_T_wrist = wrist_from_landmarks(side, points)
    except ValueError:
        return None
    xr_T_joints = np.repeat(world_T_wrist[None], len(HAND_JOINTS), axis=0)
    xr_T_joints[:, :3, 3] = points
    return HandJoints(xr_T_joints)


def body_points(raw: np.ndarray | None) -> np.ndarray | None:
    """XRobot's (24, 7) body points (Unity frame, [x, y, z, qx, qy, qz, qw]) → (24, 7) x, y, z, qw, qx, qy, qz in
    operator_world (body_stream_from_xrobot's conversion); None when absent or not valid (e.g. zeros)."""
    if raw is None:
        return None
    try:
        stream = body_stream_from_xrobot(np.zeros(1), np.asarray(raw, dtype=float)[None])
    except BodyStreamError:
        return None
    return np.concatenate([stream.positions[0], stream.quat_wxyz[0]], axis=1)


def service_address(settings: Path = Path(SETTINGS_FILE)) -> tuple[str, int]:
    """Where the SDK connects: the ``[Client]`` connectAddr/connectPort of ``settings`` (the SDK reads the file
    of that name in the working directory), else 127.0.0.1:60061."""
    parser = configparser.ConfigParser()
    try:
        parser.read(settings)
        host = parser.get("Client", "connectAddr", fallback=DEFAULT_ADDRESS[0]).strip()
        return host, int(parser.get("Client", "connectPort", fallback=str(DEFAULT_ADDRESS[1])))
    except (configparser.Error, ValueError):
        return DEFAULT_ADDRESS


def _service_listening(address: tuple[str, int]) -> bool:
    try:
        with socket.create_connection(address, timeout=0.2):
            return True
    except OSError:
        return False


def load_sdk() -> ModuleType:
    """The ``xrobotoolkit_sdk`` module; ValueError saying how to install it."""
    try:
        import xrobotoolkit_sdk
    except ImportError as exc:
        raise ValueError(f"source pico needs PICO's SDK: pip install xrobotoolkit-sdk==1.1.0 (its wheel: x86_64 "
                         f"Linux, glibc ≥ 2.34; elsewhere it builds from source), then start {SERVICE} ({exc})") \
            from None
    return xrobotoolkit_sdk


class PicoClient:
    """PICO's stream through the SDK for one operator, with the WebXR server's interface for xr_input (start, stop,
    newest, status, figures); the samples are ``PicoSample``. ``on_sample(sample)`` runs in the client's thread for
    each sample; it must return quickly. ``sdk``: the SDK module (tests pass a stand-in); default: load_sdk()."""

    def __init__(self, link: PicoLink, joy_config: XrJoyConfig, input: str = "controllers",
                 wrist_reference: str = "head", on_sample: Callable[[XrSample], None] | None = None,
                 sdk: ModuleType | None = None) -> None:
        self.link, self.on_sample, self.input = link, on_sample, input
        self._sdk = sdk if sdk is not None else load_sdk()
        self.service = service_address()
        self.address = f"{self.service[0]}:{self.service[1]}"
        self._assembler = SampleAssembler(input, joy_config, wrist_reference)
        self._lock = threading.Lock()
        self._newest: PicoSample | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._service_up: bool | None = None
        self._samples, self._recent, self._bodies = 0, [], 0
        self._last_tracked_s: float | None = None

    def start(self) -> None:
        self._sdk.init()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="pico-client", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
            self._sdk.close()

    def newest(self) -> PicoSample | None:
        with self._lock:
            return self._newest

    def figures(self) -> dict[str, object]:
        status = self.status()
        return {"link": status.state.value, "service": self.address, "samples": self._samples,
                "body_samples": self._bodies, "rate_hz": round(status.rate_hz, 1)}

    def status(self, now_s: float | None = None) -> XrLinkStatus:
        """The link now (time.monotonic() s): what is wrong and what to check, in one line."""
        now_s = time.monotonic() if now_s is None else now_s
        with self._lock:
            recent, tracked_s, service_up = list(self._recent), self._last_tracked_s, self._service_up
        age = None if not recent else now_s - recent[-1]
        fresh = age is not None and age <= self.link.stale_after_s
        tracked_age = None if tracked_s is None else now_s - tracked_s
        rate = (len(recent) - 1) / max(recent[-1] - recent[0], 1e-9) if len(recent) > 1 and fresh else 0.0
        what = "hands" if self.input == "hands" else "controllers"
        if not fresh and service_up is not True:  # (a state of its own: xr_input logs state changes)
            state = LinkState.FAILED
            text = (f"no PICO service at {self.address}{' (checking)' if service_up is None else ''}: start "
                    f"{SERVICE} on this machine and connect the headset's XRoboToolkit app to this machine's "
                    f"address (or set [Client] connectAddr/connectPort in ./{SETTINGS_FILE}); retrying every "
                    f"{self.link.retry_s:g} s")
        elif not fresh:
            state = LinkState.DROPPED if self._samples else LinkState.NO_CLIENT
            text = (f"{SERVICE} at {self.address} runs, but no headset data "
                    f"{'since ' + format(age, '.1f') + ' s' if age is not None else 'yet'}: open XRoboToolkit on "
                    "the PICO, connect it to this machine's address and turn on head, controller, hand (and body) "
                    "tracking")
        elif tracked_age is None or tracked_age > self.link.stale_after_s:
            state, text = LinkState.STALE, (f"PICO at {self.address} streams, but head and both {what} not "
                                            f"tracked: keep both {what} in view (xr_input_mode: {self.input})")
        else:
            body = ", body tracking" if self._bodies else ""
            state, text = LinkState.CONNECTED, f"PICO at {self.address} connected: {what} at {rate:.0f} Hz{body}"
        return XrLinkStatus(state, text, int(fresh), self.address if fresh else None, age, tracked_age, rate)

    def _run(self) -> None:
        period = 1.0 / self.link.poll_hz
        last = (0, 0)
        probe_s = -np.inf
        body_seen_s = -np.inf
        while not self._stop.is_set():
            now_s = time.monotonic()
            reading = read_sdk(self._sdk)
            stamps = (reading.time_ns, reading.body_ns)
            if stamps != last and any(stamps):
                if reading.body_ns != last[1]:
                    body_seen_s = now_s
                last = stamps
                self._take(reading, now_s, now_s - body_seen_s <= self.link.stale_after_s)
            elif now_s - probe_s >= self.link.retry_s:
                probe_s = now_s
                up = _service_listening(self.service)
                with self._lock:
                    self._service_up = up
            self._stop.wait(max(0.0, period - (time.monotonic() - now_s)))

    def _take(self, reading: PicoReading, received_s: float, body_fresh: bool = True) -> None:
        device_time_s = reading.time_ns / 1e9 if reading.time_ns else None
        self._assembler.put(HeadPose(pose_matrix(reading.head), device_time_s), received_s)
        if self.input == "hands":
            event = HandsTracking(*(hand(side, reading.hands[side], reading.hands_active[side])
                                    for side in ("left", "right")), device_time_s)
        else:
            event = ControllersState(*(controller(reading.controllers[side]) for side in ("left", "right")),
                                     device_time_s)
        sample = self._assembler.put(event, received_s)
        if sample is None:
            return
        body = body_points(reading.body) if body_fresh else None  # (the SDK keeps the last body forever)
        sample = PicoSample(**{f.name: getattr(sample, f.name) for f in fields(XrSample)}, body=body)
        with self._lock:
            self._newest, self._samples = sample, self._samples + 1
            self._bodies += body is not None
            self._recent = [*self._recent[-63:], received_s]
            self._service_up = True
            if sample.valid:
                self._last_tracked_s = received_s
        if self.on_sample is not None:
            self.on_sample(sample)
