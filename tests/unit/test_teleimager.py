"""Unitree's image service (teleimager) spoken with pyzmq, against a fake that speaks it byte for byte
(tests/support/fake_teleimager.py): the configuration request, the head camera's JPEG stream (binocular frames kept
as they came, monocular ones for both eyes, a server without the configuration service), and the errors."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from g1_teleop.core.camera_images import encode_jpeg
from g1_teleop.hardware.teleimager import CONFIG_REQUEST, HeadCamera, TeleimagerError, TeleimagerSource, request_config
from support.fake_teleimager import FakeTeleimager, head_config
from support.ports import free_port


def frame(width: int, height: int = 48, value: int = 0) -> bytes:
    image = np.zeros((height, width, 3), dtype=np.uint8)
    image[:, : width // 2] = (200, 30, 30)
    image[:, width // 2:] = (30, 30, 200 - value)
    return encode_jpeg(image, quality=95)


def receive(source: TeleimagerSource, timeout_s: float = 10.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = source.receive(timeout_s=0.2)
        if got is not None:
            return got
    raise AssertionError("no frame from the fake image service")


def test_configuration_and_binocular_frames_as_they_came() -> None:
    config_port, head_port = free_port(), free_port()
    sent = [frame(128, value=v) for v in (0, 50)]
    server = FakeTeleimager(config_port, head_port, sent, head_config(head_port, 48, 128)).start()
    try:
        config = request_config("127.0.0.1", config_port)
        assert server.requests == [CONFIG_REQUEST]  # b"GET_DATA", as teleimager's client asks
        camera = HeadCamera.from_config(config)
        assert camera == HeadCamera(port=head_port, height=48, width=128, binocular=True, fps=30.0)
        assert camera.eye_shape == (48, 64)
        source = TeleimagerSource("127.0.0.1", config_port)
        errors: list[str] = []
        assert source.connect(threading.Event(), errors.append) and not errors
        assert "binocular" in source.describe()
        got = receive(source)
        assert got.stereo_jpeg() in sent  # the very bytes the camera sent: never re-coded
        assert got.shape == (48, 64)
        left, right = got.rgb("left"), got.rgb("right")
        assert left[..., 0].mean() > 150 and right[..., 2].mean() > 120  # red left half, blue right half
        source.close()
    finally:
        server.stop()


def test_a_monocular_camera_and_a_server_without_configuration() -> None:
    head_port = free_port()
    sent = frame(64)
    server = FakeTeleimager(None, head_port, [sent], {}).start()
    try:
        source = TeleimagerSource("127.0.0.1", head_port=head_port)  # no configuration service: the port given
        assert source.connect(threading.Event(), lambda m: None)
        got = receive(source)
        assert got.shape == (48, 64) and got.jpeg("left") == got.jpeg("right") == sent  # 64×48 is not side by side
        source.close()
    finally:
        server.stop()


def test_no_service_and_bad_configurations_are_told_in_one_line() -> None:
    port = free_port()
    start = time.monotonic()
    with pytest.raises(TeleimagerError, match=f"no answer from the image service at tcp://127.0.0.1:{port} within "
                                              "0.3 s: is teleimager-server running"):
        request_config("127.0.0.1", port, timeout_s=0.3)
    assert time.monotonic() - start < 2.0
    halt, errors = threading.Event(), []
    source = TeleimagerSource("127.0.0.1", port, retry_s=0.05, timeout_s=0.1)
    threading.Timer(0.5, halt.set).start()
    assert not source.connect(halt, errors.append)  # it kept asking until halted
    assert len(errors) >= 2 and "asking again every 0.05 s" in errors[0]
    config = head_config(55555)
    config["head_camera"]["enable_zmq"] = False
    with pytest.raises(TeleimagerError, match="enable_zmq is false"):
        HeadCamera.from_config(config)
    with pytest.raises(TeleimagerError, match="no head_camera"):
        HeadCamera.from_config({"left_wrist_camera": {}})


def test_bytes_that_are_not_a_jpeg_are_refused_when_received() -> None:
    head_port = free_port()
    server = FakeTeleimager(None, head_port, [b"not a jpeg"], {}).start()
    try:
        source = TeleimagerSource("127.0.0.1", head_port=head_port)
        assert source.connect(threading.Event(), lambda m: None)
        with pytest.raises(ValueError, match="not a JPEG image \\(10 bytes\\)"):
            receive(source)
        source.close()
    finally:
        server.stop()
