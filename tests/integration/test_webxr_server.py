"""The WebXR server for real: vuer on loopback over HTTPS/WSS with a certificate from our CA, a WebSocket client
speaking vuer's web-client protocol (msgpackr-encoded events, ``webxr_client``), the samples that come out
(through xr_frames' conversion), the Joy buttons, the link status through a dropped connection; and, when Debian's
``chromium`` is installed, a headless browser opening the page over HTTPS."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import ssl
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import websockets
from cryptography import x509

from g1_teleop.core.rotations import matrix_from_wxyz, wxyz_from_rpy
from g1_teleop.operator.webxr_client import (
    ControllerInput,
    HeadsetPage,
    camera_move,
    controller_move,
    hand_move,
    page_ssl_context,
    synthetic_hand,
)
from g1_teleop.operator.webxr_samples import XrSample
from g1_teleop.operator.webxr_server import WebXrConfig, WebXrServer, WebXrServerError
from g1_teleop.operator.webxr_status import LinkState
from g1_teleop.operator.xr_certificates import CertificateFiles
from g1_teleop.operator.xr_frames import robot_to_openxr
from g1_teleop.operator.xr_joy import JoyAxis, JoyButton
from support.ports import free_port

FLOAT32 = 1e-6


def pose(x: float, y: float, z: float, roll: float = 0.0, pitch: float = 0.0, yaw: float = 0.0) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = matrix_from_wxyz(wxyz_from_rpy(roll, pitch, yaw))
    T[:3, 3] = (x, y, z)
    return T


HEAD = pose(0.0, 0.0, 1.6, yaw=-0.2)
LEFT, RIGHT = pose(0.32, 0.22, 0.12, 0.3, -0.5, 0.2), pose(0.3, -0.18, 0.02, -0.2, 0.3, -0.1)


class Received:
    """The samples a server hands over, waited for."""

    def __init__(self) -> None:
        self.samples: list[XrSample] = []
        self.cond = threading.Condition()

    def __call__(self, sample: XrSample) -> None:
        with self.cond:
            self.samples.append(sample)
            self.cond.notify_all()

    def wait(self, count: int, timeout_s: float = 5.0) -> list[XrSample]:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.samples) >= count, timeout_s), \
                f"{len(self.samples)} of {count} samples arrived"
            return list(self.samples)


@pytest.fixture
def serve(certificates: CertificateFiles) -> Iterator[Callable[..., tuple[WebXrServer, Received]]]:
    servers: list[WebXrServer] = []

    def start(**settings: object) -> tuple[WebXrServer, Received]:
        received = Received()
        config = WebXrConfig(host="127.0.0.1", port=free_port(), cert_dir=str(certificates.folder), **settings)
        server = WebXrServer(config, on_sample=received)
        server.start()
        servers.append(server)
        return server, received

    yield start
    for server in servers:
        server.stop()


def socket_uri(server: WebXrServer) -> str:
    return f"wss://127.0.0.1:{server.config.port}/"


def wait_for(predicate: Callable[[], bool], timeout_s: float = 3.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def test_the_page_its_assets_and_the_ca_over_https(serve, certificates) -> None:
    server, _ = serve()
    tls = ssl.create_default_context(cafile=str(certificates.ca))  # verifies the chain and 127.0.0.1

    def get(path: str) -> tuple[int, bytes]:
        with urllib.request.urlopen(f"https://127.0.0.1:{server.config.port}{path}", context=tls, timeout=5) as r:
            return r.status, r.read()

    status, page = get("/")
    assert status == 200 and b"<script" in page
    script = page.split(b'src="', 1)[1].split(b'"', 1)[0].decode()  # vuer's client bundle, from the wheel
    assert script.startswith("/assets/") and get(script)[0] == 200
    status, der = get("/ca.crt")
    assert x509.load_der_x509_certificate(der) == x509.load_pem_x509_certificate(certificates.ca.read_bytes())
    assert server.page_url == f"https://127.0.0.1:{server.config.port}/?ws=wss://127.0.0.1:{server.config.port}"


def test_hand_tracking_session_and_a_dropped_connection(serve, certificates) -> None:
    server, received = serve(input="hands")
    assert server.status().state is LinkState.NO_CLIENT
    xr = robot_to_openxr(HEAD, LEFT, RIGHT, hand_tracking=True)
    left_joints = synthetic_hand(xr.xr_T_left_wrist, pinch_m=0.01)

    async def session() -> None:
        async with HeadsetPage(socket_uri(server), page_ssl_context(str(certificates.ca))) as page:
            upsert = await page.receive()
            assert upsert["etype"] == "UPSERT" and upsert["data"]["to"] == "bgChildren"
            node = upsert["data"]["nodes"][0]
            assert (node["tag"], node["key"], node["stream"], node["fps"]) == ("Hands", "hands", True, 60.0)
            await asyncio.sleep(0.1)
            assert server.status().state is LinkState.STALE  # connected, nothing streamed yet
            await page.send(camera_move(xr.xr_T_head))
            for i in range(3):
                await page.send(hand_move(left_joints, synthetic_hand(xr.xr_T_right_wrist), 1717000000000.0 + i))
            await asyncio.to_thread(received.wait, 3)
            assert server.status().state is LinkState.CONNECTED
            page.socket.transport.abort()  # the headset's Wi-Fi goes: no closing handshake

    asyncio.run(session())
    sample = received.samples[-1]
    assert sample.valid and sample.seq == 3 and server.newest() is sample
    assert sample.device_time_s == pytest.approx(1717000000.002)
    assert 0.0 <= time.monotonic() - sample.received_s < 5.0 and 0.0 <= sample.head_age_s < 1.0
    np.testing.assert_allclose(sample.poses.world_T_head, HEAD, atol=FLOAT32)
    np.testing.assert_allclose(sample.poses.pelvis_T_left_wrist, LEFT, atol=FLOAT32)
    np.testing.assert_allclose(sample.poses.pelvis_T_right_wrist, RIGHT, atol=FLOAT32)
    assert sample.left_hand_points.shape == (25, 3) and np.allclose(sample.left_hand_points[0], 0.0, atol=FLOAT32)
    assert abs(np.linalg.norm(sample.left_hand_points[4] - sample.left_hand_points[9]) - 0.01) < 1e-5
    assert sample.joy.pressed(JoyButton.LEFT_TRIGGER) and not sample.joy.pressed(JoyButton.RIGHT_TRIGGER)
    assert sample.joy.axes[JoyAxis.LEFT_TRIGGER] == pytest.approx(0.9, abs=1e-5)
    wait_for(lambda: server.status().state is LinkState.DROPPED)
    status = server.status()
    assert status.clients == 0 and status.text.startswith("headset 127.0.0.1 disconnected")


def test_controller_session_buttons(serve, certificates) -> None:
    server, received = serve(input="controllers")
    xr = robot_to_openxr(HEAD, LEFT, RIGHT, hand_tracking=False)

    async def session() -> None:
        async with HeadsetPage(socket_uri(server), page_ssl_context(str(certificates.ca))) as page:
            node = (await page.receive())["data"]["nodes"][0]
            assert (node["tag"], node["left"], node["right"], node["stream"]) == ("MotionControllers", True, True,
                                                                                   True)
            await page.send(camera_move(xr.xr_T_head))
            await page.send(controller_move(ControllerInput(xr.xr_T_left_wrist, thumbstick=(0.0, -0.5)),
                                            ControllerInput(xr.xr_T_right_wrist, trigger=0.8, a=True), 1.0e12))
            await page.send(controller_move(ControllerInput(xr.xr_T_left_wrist, thumbstick_pressed=True),
                                            ControllerInput(xr.xr_T_right_wrist, thumbstick_pressed=True), 1.1e12))
            await asyncio.to_thread(received.wait, 2)

    asyncio.run(session())
    first, second = received.samples
    np.testing.assert_allclose(first.poses.pelvis_T_left_wrist, LEFT, atol=FLOAT32)
    np.testing.assert_allclose(first.poses.pelvis_T_right_wrist, RIGHT, atol=FLOAT32)
    assert first.joy.pressed(JoyButton.A) and first.joy.pressed(JoyButton.RIGHT_TRIGGER)
    assert first.joy.axes[JoyAxis.LEFT_STICK_Y] == 0.5 and first.joy.axes[JoyAxis.RIGHT_TRIGGER] == 0.8
    assert not first.joy.pressed(JoyButton.ESTOP) and second.joy.pressed(JoyButton.ESTOP)


def test_a_second_page_is_not_followed_and_malformed_events_are_counted(serve, certificates) -> None:
    server, received = serve()
    xr = robot_to_openxr(HEAD, LEFT, RIGHT)
    other = robot_to_openxr(HEAD, RIGHT, LEFT)
    tls = page_ssl_context(str(certificates.ca))

    async def session() -> None:
        async with HeadsetPage(socket_uri(server), tls) as headset, HeadsetPage(socket_uri(server), tls) as laptop:
            await headset.send(camera_move(xr.xr_T_head))
            await headset.send(hand_move(synthetic_hand(xr.xr_T_left_wrist), synthetic_hand(xr.xr_T_right_wrist),
                                         1.0e12))
            await asyncio.to_thread(received.wait, 1)
            await laptop.send(camera_move(other.xr_T_head))
            await laptop.send(hand_move(synthetic_hand(other.xr_T_left_wrist),
                                        synthetic_hand(other.xr_T_right_wrist), 1.0e12))
            await headset.send({"ts": 1.0e12, "etype": "HAND_MOVE", "key": "hands",
                                "value": {"left": [0.0] * 16, "leftState": {}}})
            await asyncio.sleep(0.3)
            status = server.status()
            assert status.clients == 2 and status.malformed == 1
            assert status.last_malformed == "HAND_MOVE value.left must be 400 numbers, got 16 values"
            await headset.send(hand_move(synthetic_hand(xr.xr_T_left_wrist), synthetic_hand(xr.xr_T_right_wrist),
                                         1.1e12))
            await asyncio.to_thread(received.wait, 2)

    asyncio.run(session())
    assert [s.device_time_s for s in received.samples] == [1.0e9, 1.1e9]  # only the first page's samples
    np.testing.assert_allclose(server.newest().poses.pelvis_T_left_wrist, LEFT, atol=FLOAT32)


def test_start_errors_say_what_to_do(tmp_path, certificates) -> None:
    with pytest.raises(WebXrServerError, match=r"no certificate at .*cert\.pem: run `g1-teleop xr-cert`"):
        WebXrServer(WebXrConfig(host="127.0.0.1", port=free_port(), cert_dir=str(tmp_path / "none"))).start()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = WebXrServer(WebXrConfig(host="127.0.0.1", port=port, cert_dir=str(certificates.folder)))
        with pytest.raises(WebXrServerError, match=rf"cannot listen on 127\.0\.0\.1:{port} .*: stop the program"):
            server.start()
        assert server.status().state is LinkState.FAILED


CHROMIUM = Path("/usr/lib/chromium/chromium")  # Debian's binary (/usr/bin/chromium is a wrapper script)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (apt-get install chromium)")
def test_a_headless_browser_opens_the_page(serve, tmp_path) -> None:
    """Chromium (no WebXR device here) loads vuer's client over HTTPS; the page connects back over WSS and streams
    its camera (CAMERA_MOVE), which parses. A screenshot of the page (its Virtual Reality and Pass-through buttons)
    is taken over the DevTools protocol and left in the test's tmp dir."""
    server, _ = serve()
    browser = subprocess.Popen([str(CHROMIUM), "--headless=new", "--no-sandbox", "--ignore-certificate-errors",
                                "--enable-unsafe-swiftshader", "--window-size=1280,800", "--remote-debugging-port=0",
                                f"--user-data-dir={tmp_path / 'profile'}", server.page_url],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        devtools = next(line.split()[-1] for line in browser.stderr if line.startswith("DevTools listening on"))
        wait_for(lambda: server.status().head_poses >= 1, timeout_s=60.0)  # loaded, connected, streaming
        status = server.status()
        assert status.state is LinkState.STALE and status.malformed == 0, status  # no tracking outside XR
        port = devtools.split("/")[2]
        with urllib.request.urlopen(f"http://{port}/json", timeout=10) as r:
            page = next(t for t in json.load(r) if t["type"] == "page")
        shot = tmp_path / "page.png"
        shot.write_bytes(asyncio.run(_screenshot(page["webSocketDebuggerUrl"])))
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    finally:
        browser.terminate()
        browser.wait(timeout=30)
    wait_for(lambda: server.status().state is LinkState.DROPPED)


async def _screenshot(devtools_page: str) -> bytes:
    async with websockets.connect(devtools_page, max_size=None) as cdp:
        await cdp.send(json.dumps({"id": 1, "method": "Page.captureScreenshot", "params": {"format": "png"}}))
        while True:
            answer = json.loads(await asyncio.wait_for(cdp.recv(), 60))
            if answer.get("id") == 1:
                return base64.b64decode(answer["result"]["data"])
