"""The Vision Pro app's stream without the headset: its messages (built from field numbers; the fake app of the
integration test checks them against avp-stream's generated code), the wrist axes found from the landmarks whatever
axes the tracker's wrist has, untracked hands, and the status line when the app is not there."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from g1_teleop.operator import avp_protocol
from g1_teleop.operator.avp_client import AvpClient, AvpLink, hands_tracking
from g1_teleop.operator.hand_landmark_frame import wrist_from_landmarks
from g1_teleop.operator.webxr_status import LinkState
from g1_teleop.operator.xr_joy import XrJoyConfig
from g1_teleop.tools.bench.hand_poses import hand_joint_points
from support.ports import free_port

FAKE_APP = Path(__file__).resolve().parents[1] / "support" / "fake_vision_pro.py"


def pose(seed: int) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = Rotation.random(random_state=seed).as_matrix()
    T[:3, 3] = np.random.default_rng(seed).uniform(-1.0, 1.0, 3)
    return T


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("pinch", [0.0, 1.0])
def test_the_wrist_axes_come_from_the_landmarks(side, pinch):
    xr_T_wrist = pose(7)
    points = hand_joint_points(side, pinch=pinch) @ xr_T_wrist[:3, :3].T + xr_T_wrist[:3, 3]
    np.testing.assert_allclose(wrist_from_landmarks(side, points), xr_T_wrist, atol=1e-12)
    with pytest.raises(ValueError, match="do not span a plane"):
        wrist_from_landmarks(side, np.zeros((25, 3)))


def app_update(anchor_R_wrist: np.ndarray, xr_T_head: np.ndarray, wrists: dict[str, np.ndarray | None]) -> object:
    """A HandUpdate as the app sends it: each wrist in an anchor of other axes, the joints relative to it."""
    update = avp_protocol.HandUpdate()
    avp_protocol.set_matrix(update.Head, xr_T_head)
    for side, xr_T_wrist in wrists.items():
        message = getattr(update, f"{side}_hand")
        if xr_T_wrist is None:
            continue  # untracked: the app leaves the hand's matrices at zero
        anchor = xr_T_wrist.copy()
        anchor[:3, :3] = xr_T_wrist[:3, :3] @ anchor_R_wrist
        avp_protocol.set_matrix(message.wristMatrix, anchor)
        for p in hand_joint_points(side) @ xr_T_wrist[:3, :3].T + xr_T_wrist[:3, 3]:
            joint = np.eye(4)
            joint[:3, 3] = p
            avp_protocol.set_matrix(message.skeleton.jointMatrices.add(), np.linalg.inv(anchor) @ joint)
    return avp_protocol.HandUpdate.FromString(update.SerializeToString())  # (through the wire format)


def test_an_update_gives_the_head_and_each_tracked_hand_in_openxr_axes():
    head, left = pose(1), pose(2)
    anchor_R_wrist = Rotation.from_euler("xyz", [90, 30, -90], degrees=True).as_matrix()
    head_pose, hands = hands_tracking(app_update(anchor_R_wrist, head, {"left": left, "right": None}))
    np.testing.assert_allclose(head_pose.xr_T_head, head, atol=1e-6)  # (floats on the wire)
    np.testing.assert_allclose(hands.left.xr_T_wrist, left, atol=1e-5)
    assert hands.right is None and hands.left.xr_T_joints.shape == (25, 4, 4)
    np.testing.assert_allclose(hands.left.xr_points, hand_joint_points("left") @ left[:3, :3].T + left[:3, 3],
                               atol=1e-5)


def test_the_request_announces_the_client_as_avp_stream_does():
    request = avp_protocol.HandUpdate.FromString(avp_protocol.discovery_request("10.0.2.15").SerializeToString())
    head = avp_protocol.matrix(request.Head)
    assert head[0].tolist() == [888.0, 10.0, 0.0, 2.0] and head[1, 0] == 15.0 and head[3, 0] == 25000.0
    with pytest.raises(ValueError, match="not an IPv4 address"):
        avp_protocol.discovery_request("vision-pro.local")


def test_without_the_app_the_status_says_what_to_check_and_retries():
    with pytest.raises(ValueError, match="avp_ip"):
        AvpLink("")
    link = AvpLink("127.0.0.1", free_port(), retry_s=0.2)
    client = AvpClient(link, XrJoyConfig())
    client.start()
    try:
        time.sleep(0.8)
        status = client.status()
    finally:
        client.stop()
    assert status.state is LinkState.NO_CLIENT and client.newest() is None
    assert status.text.startswith(f"no Vision Pro at 127.0.0.1:{link.port} (not reachable): open the Vision Pro app")
    assert "retrying every 0.2 s" in status.text


def test_the_client_connects_when_the_app_starts_and_again_after_it_restarts():
    """The retries reach the app once it is there: no app (NO_CLIENT), the app started (tracked samples), the app
    gone (DROPPED, the line says what to check), the app back (samples again), without restarting the client.
    The app is the fake one serving avp-stream's own generated code (tests/support/fake_vision_pro.py)."""
    port = free_port()
    client = AvpClient(AvpLink("127.0.0.1", port, retry_s=0.2), XrJoyConfig())

    def until(state: LinkState, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while client.status().state is not state and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.status().state is state, client.status().text

    def start_app() -> subprocess.Popen:
        return subprocess.Popen([sys.executable, str(FAKE_APP), "--port", str(port), "--rate", "60"],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)

    client.start()
    app = None
    try:
        until(LinkState.NO_CLIENT, 2.0)
        app = start_app()
        until(LinkState.CONNECTED)
        samples = client.figures()["samples"]
        app.terminate()
        app.wait(10)
        until(LinkState.DROPPED)
        assert client.status().text.startswith(f"no Vision Pro at 127.0.0.1:{port}"), client.status().text
        app = start_app()
        until(LinkState.CONNECTED)
        assert client.figures()["samples"] > samples
    finally:
        client.stop()
        if app is not None and app.poll() is None:
            app.terminate()
            app.wait(10)
