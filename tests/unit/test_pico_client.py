"""PICO's SDK source without a headset: the SDK's poses in OpenXR's basis, controllers → the XR Joy layout, PICO's
26 hand joints → WebXR's 25 with the wrist's axes, XRobot's body points → operator_world, the client over a
stand-in SDK (samples, body, status), the status line with the real SDK and no service, and which retargeter the
graphs run for source pico."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from g1_teleop.core.xr_input_contract import JoyAxis, JoyButton
from g1_teleop.launching.graph_description import load_graph
from g1_teleop.operator.body_stream import body_stream_from_xrobot
from g1_teleop.operator.pico_client import (
    PicoClient,
    PicoLink,
    PicoSample,
    body_points,
    controller,
    hand,
    pose_matrix,
    service_address,
)
from g1_teleop.operator.webxr_events import ControllersState
from g1_teleop.operator.webxr_status import LinkState
from g1_teleop.operator.xr_frames import DEFAULT_WORLD_T_HEAD, robot_to_openxr
from g1_teleop.operator.xr_joy import XrJoy, XrJoyConfig
from g1_teleop.tools.bench.hand_poses import hand_joint_points
from support.ports import free_port

FAKE_SERVICE = Path(__file__).resolve().parents[1] / "support" / "fake_pico_service.py"


def pose7(T: np.ndarray) -> list[float]:
    """(4, 4) → the SDK's [x, y, z, qx, qy, qz, qw]."""
    return [*T[:3, 3], *Rotation.from_matrix(T[:3, :3]).as_quat()]


def random_pose(seed: int) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = Rotation.random(random_state=seed).as_matrix()
    T[:3, 3] = np.random.default_rng(seed).uniform(-1.0, 1.0, 3)
    return T


def pico_hand(side: str, xr_T_wrist: np.ndarray, pinch: float = 0.0) -> np.ndarray:
    """(26, 7) as the SDK gives a hand: OpenXR's joints, palm first, each with the wrist's orientation."""
    points = hand_joint_points(side, pinch=pinch) @ xr_T_wrist[:3, :3].T + xr_T_wrist[:3, 3]
    q = Rotation.from_matrix(xr_T_wrist[:3, :3]).as_quat()
    palm = (points[0] + points[11]) / 2.0
    return np.array([[*p, *q] for p in (palm, *points)])


def test_sdk_poses_are_openxr_poses_with_the_quaternion_last():
    T = random_pose(3)
    np.testing.assert_allclose(pose_matrix(np.array(pose7(T))), T, atol=1e-12)
    assert not pose_matrix(np.zeros(7)).any()  # untracked: xr_frames' invalid pose


def test_controllers_map_to_the_webxr_joy_layout():
    T = random_pose(4)
    state = {"pose": np.array(pose7(T)), "trigger": 0.8, "grip": 0.7, "axis": (0.25, 1.0), "axis_click": True,
             "lower": True, "upper": False}
    right = controller(state)
    np.testing.assert_allclose(right.xr_T_controller, T, atol=1e-12)
    assert right.thumbstick == (0.25, -1.0)  # PICO: forward +y; WebXR: y toward the operator
    left = controller({**state, "axis": (0.0, 0.0), "axis_click": False, "lower": False, "upper": True})
    joy = XrJoy(XrJoyConfig(engage_hold_s=0.5))
    reading = joy.from_controllers(ControllersState(left, right, None), 0.0)
    assert reading.axes[JoyAxis.RIGHT_STICK_Y] == 1.0 and reading.axes[JoyAxis.RIGHT_STICK_X] == -0.25
    assert reading.axes[JoyAxis.RIGHT_TRIGGER] == pytest.approx(0.8)
    assert reading.buttons[JoyButton.A] == 1 and reading.buttons[JoyButton.Y] == 1 and reading.buttons[JoyButton.X] == 0
    assert reading.buttons[JoyButton.ENGAGE] == 0  # both grips pressed, not yet for 0.5 s
    assert joy.from_controllers(ControllersState(left, right, None), 0.6).buttons[JoyButton.ENGAGE] == 1
    released = controller({**state, "trigger": 0.2, "grip": 0.1})
    assert not released.trigger_pressed and not released.squeeze_pressed
    assert controller({**state, "pose": np.zeros(7)}) is None


@pytest.mark.parametrize("side", ["left", "right"])
def test_pico_hand_joints_become_webxr_landmarks_with_the_wrist_axes(side):
    xr_T_wrist = random_pose(5)
    joints = hand(side, pico_hand(side, xr_T_wrist), active=True)
    np.testing.assert_allclose(joints.xr_T_wrist, xr_T_wrist, atol=1e-9)
    np.testing.assert_allclose(joints.xr_points, hand_joint_points(side) @ xr_T_wrist[:3, :3].T + xr_T_wrist[:3, 3],
                               atol=1e-12)  # the palm dropped, WebXR's order
    assert hand(side, pico_hand(side, xr_T_wrist), active=False) is None
    assert hand(side, np.zeros((26, 7)), active=True) is None


def unity_body(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.uniform(-1, 1, (24, 3)), Rotation.random(24, random_state=seed).as_quat()], axis=1)


def test_body_points_take_the_body_streams_conversion():
    raw = unity_body(6)
    stream = body_stream_from_xrobot(np.zeros(1), raw[None])
    body = body_points(raw)
    np.testing.assert_allclose(body, np.concatenate([stream.positions[0], stream.quat_wxyz[0]], axis=1))
    np.testing.assert_allclose(body[:, :3], raw[:, [0, 2, 1]] * [1, -1, 1])  # Unity (y up) → z up
    assert body_points(np.zeros((24, 7))) is None and body_points(None) is None


class StandInSdk(SimpleNamespace):
    """The SDK's getters over values a test sets (``values``); zeros until then, as without the service."""

    def __init__(self) -> None:
        super().__init__(values={}, calls=[])
        zero7 = [0.0] * 7
        for name, default in (("headset_pose", zero7), ("left_controller_pose", zero7),
                              ("right_controller_pose", zero7), ("left_trigger", 0.0), ("right_trigger", 0.0),
                              ("left_grip", 0.0), ("right_grip", 0.0), ("left_axis", [0.0, 0.0]),
                              ("right_axis", [0.0, 0.0]), ("left_axis_click", False), ("right_axis_click", False),
                              ("X_button", False), ("Y_button", False), ("A_button", False), ("B_button", False),
                              ("left_hand_tracking_state", [zero7] * 26), ("right_hand_tracking_state", [zero7] * 26),
                              ("left_hand_is_active", 0), ("right_hand_is_active", 0), ("time_stamp_ns", 0),
                              ("body_joints_pose", [zero7] * 24), ("body_timestamp_ns", 0)):
            setattr(self, f"get_{name}", lambda name=name, default=default: self.values.get(name, default))
        self.is_body_data_available = lambda: "body_joints_pose" in self.values
        self.init = lambda: self.calls.append("init")
        self.close = lambda: self.calls.append("close")


def operator_values(offset_m: float) -> dict[str, object]:
    wrists = []
    for y in (0.25, -0.25):
        T = np.eye(4)
        T[:3, 3] = [0.3 + offset_m, y, 0.1]
        wrists.append(T)
    xr = robot_to_openxr(DEFAULT_WORLD_T_HEAD, *wrists, hand_tracking=False)
    return {"headset_pose": pose7(xr.xr_T_head), "left_controller_pose": pose7(xr.xr_T_left_wrist),
            "right_controller_pose": pose7(xr.xr_T_right_wrist), "time_stamp_ns": int(1e18 + offset_m * 1e9),
            "body_joints_pose": unity_body(7).tolist(), "body_timestamp_ns": int(1e18 + offset_m * 1e9)}


def until(predicate, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.01)


def test_the_client_turns_new_sdk_readings_into_samples_with_the_body(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # (no PXREASetting.ini here: the SDK's default address)
    sdk = StandInSdk()
    got: list[PicoSample] = []
    client = PicoClient(PicoLink(poll_hz=200.0), XrJoyConfig(), "controllers", on_sample=got.append, sdk=sdk)
    assert client.address == "127.0.0.1:60061"
    client.start()
    try:
        time.sleep(0.1)
        assert got == [] and client.newest() is None  # zeros: nothing received yet
        sdk.values = operator_values(0.0)
        until(lambda: client.newest() is not None)
        sample = client.newest()
        assert sample.valid and sample.body is not None and sample.body.shape == (24, 7)
        np.testing.assert_allclose(sample.poses.pelvis_T_left_wrist[:3, 3], [0.3, 0.25, 0.1], atol=1e-6)
        count = len(got)
        time.sleep(0.1)
        assert len(got) == count  # the same reading again is not a new sample
        sdk.values = operator_values(0.05)
        until(lambda: client.newest().poses.pelvis_T_right_wrist[0, 3] > 0.34)
        np.testing.assert_allclose(client.newest().poses.pelvis_T_right_wrist[:3, 3], [0.35, -0.25, 0.1], atol=1e-6)
        status = client.status()
        assert status.state is LinkState.CONNECTED, status.text
        assert status.text.startswith("PICO at 127.0.0.1:60061 connected: controllers at") and "body" in status.text
    finally:
        client.stop()
    assert sdk.calls == ["init", "close"]
    late = client.status(time.monotonic() + 5.0)
    assert late.state is LinkState.DROPPED  # the data stopped (the service was up: the text says what to open)


def test_service_address_follows_the_sdks_settings_file(tmp_path):
    settings = tmp_path / "PXREASetting.ini"
    assert service_address(settings) == ("127.0.0.1", 60061)
    settings.write_text("[Client]\nconnectAddr=10.0.0.7\nconnectPort=50123\n")
    assert service_address(settings) == ("10.0.0.7", 50123)


def test_a_running_service_without_a_headset_is_told_apart(tmp_path, monkeypatch):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        (tmp_path / "PXREASetting.ini").write_text(f"[Client]\nconnectPort={port}\n")
        monkeypatch.chdir(tmp_path)
        client = PicoClient(PicoLink(retry_s=0.1), XrJoyConfig(), "hands", sdk=StandInSdk())
        client.start()
        try:
            until(lambda: "runs, but no headset data yet" in client.status().text)
            assert client.status().state is LinkState.NO_CLIENT
        finally:
            client.stop()
    assert client.status().text.startswith(f"XRoboToolkit PC Service at 127.0.0.1:{port} runs")


def test_without_the_service_the_real_sdk_gives_a_status_line_to_act_on(tmp_path, monkeypatch):
    pytest.importorskip("xrobotoolkit_sdk")
    port = free_port()  # nothing listens there: the SDK's default 60061 might be a real service
    (tmp_path / "PXREASetting.ini").write_text(f"[Client]\nconnectAddr=127.0.0.1\nconnectPort={port}\n")
    monkeypatch.chdir(tmp_path)
    client = PicoClient(PicoLink(retry_s=0.2), XrJoyConfig(), "controllers")
    client.start()
    try:
        until(lambda: "(checking)" not in client.status().text)
        time.sleep(0.3)
        status = client.status()
    finally:
        client.stop()
    assert status.state is LinkState.FAILED and client.newest() is None
    assert status.text.startswith(f"no PICO service at 127.0.0.1:{port}: start XRoboToolkit PC Service on this "
                                  "machine and connect the headset's XRoboToolkit app"), status.text
    assert "retrying every 0.2 s" in status.text


@pytest.mark.parametrize("graph", ["sim", "real"])
def test_source_pico_runs_retarget_or_body_retarget(graph):
    def nodes(**values: str) -> set[str]:
        return {n.name for n in load_graph(graph).resolve(values)}

    assert {"retarget", "xr_input"} <= nodes(source="pico") and "body_retarget" not in nodes(source="pico")
    assert "body_retarget" in nodes(source="pico", pico_retarget="body")
    assert "retarget" not in nodes(source="pico", pico_retarget="body")
    assert "retarget" in nodes(source="webxr", pico_retarget="body")  # only source pico reads it
    assert "body_retarget" in nodes(source="body") and "retarget" not in nodes(source="body")


def test_the_real_sdk_connects_when_the_service_starts_and_again_after_it_restarts(tmp_path, monkeypatch):
    """The retries reach the service once it is there, and again after it went away, without restarting the client:
    the real SDK against the fake XRoboToolkit PC Service (tests/support/fake_pico_service.py, its gRPC protocol)."""
    pytest.importorskip("xrobotoolkit_sdk")
    port = free_port()
    (tmp_path / "PXREASetting.ini").write_text(f"[Client]\nconnectAddr=127.0.0.1\nconnectPort={port}\n")
    monkeypatch.chdir(tmp_path)
    client = PicoClient(PicoLink(retry_s=0.2), XrJoyConfig(), "controllers")

    def start_service() -> subprocess.Popen:
        return subprocess.Popen([sys.executable, str(FAKE_SERVICE), "--port", str(port), "--rate", "60"],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)

    def until_state(state: LinkState, reached: bool = True) -> None:
        deadline = time.monotonic() + 30.0
        while (client.status().state is state) != reached and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (client.status().state is state) == reached, client.status().text

    client.start()
    service = None
    try:
        until_state(LinkState.FAILED)
        service = start_service()
        until_state(LinkState.CONNECTED)
        samples = client.figures()["samples"]
        service.terminate()
        service.wait(10)
        until_state(LinkState.CONNECTED, reached=False)
        service = start_service()
        until_state(LinkState.CONNECTED)
        assert client.figures()["samples"] > samples
    finally:
        client.stop()
        if service is not None and service.poll() is None:
            service.terminate()
            service.wait(10)
