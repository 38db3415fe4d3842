"""The robot's head camera through Unitree's image service, teleimager (github.com/unitreerobotics/teleimager, the
image server of xr_teleoperate), spoken with pyzmq. ROS-free.

The PyPI package ``teleimager`` pins numpy < 2 and OpenCV, so it is not imported; its protocol (teleimager 1.6,
``src/teleimager/image_client.py`` and ``image_server.py``) is small:

- Configuration: a ZeroMQ REQ socket to ``tcp://HOST:60000`` sends the bytes ``GET_DATA``; the server's REP socket
  answers with its camera configuration as JSON (pyzmq's ``send_json``: the ``cam_config_server.yaml`` it runs with).
  ``head_camera`` holds ``enable_zmq``, ``zmq_port`` (55555), ``image_shape`` [height, width] of the whole frame,
  ``binocular`` and ``fps``.
- Frames: a SUB socket (subscribed to everything, CONFLATE: newest only) connected to ``tcp://HOST:zmq_port``
  receives one message per frame: the JPEG bytes of the whole head image, nothing else (no header, no stamp). A
  binocular head camera sends left | right side by side (1280×480 for two 640×480 eyes).

xr_teleoperate's older ``teleop/image_server`` publishes the same JPEG-only messages on port 5555 without the
configuration service (give ``head_port`` then); its ``Unit_Test`` mode prefixes a 12-byte header, not read here.
The robot's PC2 is 192.168.123.164.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import zmq

from g1_teleop.core.camera_images import StereoFrame

DEFAULT_HOST = "192.168.123.164"
CONFIG_PORT = 60000
CONFIG_REQUEST = b"GET_DATA"
HEAD_CAMERA = "head_camera"


class TeleimagerError(RuntimeError):
    """The image service did not answer, or answered something unusable; the message says what to check."""


@dataclass(frozen=True)
class HeadCamera:
    """The head camera as the service's configuration describes it."""

    port: int  # the JPEG stream's TCP port
    height: int  # pixels, of the whole frame
    width: int  # pixels, of the whole frame (both eyes when binocular)
    binocular: bool  # left | right side by side
    fps: float

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> HeadCamera:
        """From the service's configuration; TeleimagerError naming what is missing or disabled."""
        head = config.get(HEAD_CAMERA) if isinstance(config, dict) else None
        if not isinstance(head, dict):
            raise TeleimagerError(f"the image service's configuration has no {HEAD_CAMERA} (keys: "
                                  f"{sorted(config) if isinstance(config, dict) else type(config).__name__})")
        if not head.get("enable_zmq", False):
            raise TeleimagerError("the image service does not stream the head camera over ZeroMQ "
                                  "(head_camera.enable_zmq is false in its cam_config_server.yaml)")
        try:
            height, width = (int(v) for v in head["image_shape"])
            return cls(port=int(head["zmq_port"]), height=height, width=width,
                       binocular=bool(head.get("binocular", False)), fps=float(head.get("fps", 30)))
        except (KeyError, TypeError, ValueError) as exc:
            raise TeleimagerError(f"unusable head_camera configuration {head}: {exc!r}") from None

    @property
    def eye_shape(self) -> tuple[int, int]:
        """(height, width) of one eye's image (pixels)."""
        return self.height, self.width // 2 if self.binocular else self.width


def request_config(host: str, port: int = CONFIG_PORT, timeout_s: float = 2.0,
                   context: zmq.Context | None = None) -> dict[str, Any]:
    """The service's camera configuration (REQ ``GET_DATA`` → JSON); TeleimagerError on no answer within
    ``timeout_s`` or an answer that is not JSON."""
    ctx = context or zmq.Context.instance()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    try:
        sock.connect(f"tcp://{host}:{port}")
        sock.send(CONFIG_REQUEST)
        if not sock.poll(int(timeout_s * 1000), zmq.POLLIN):
            raise TeleimagerError(f"no answer from the image service at tcp://{host}:{port} within {timeout_s:g} s: "
                                  "is teleimager-server running on the robot's PC2 and the port reachable?")
        answer = sock.recv()
    finally:
        sock.close()
    try:
        return json.loads(answer)
    except ValueError as exc:
        raise TeleimagerError(f"the image service at tcp://{host}:{port} answered {len(answer)} bytes that are not "
                              f"JSON: {exc}") from None


class HeadStream:
    """The head camera's JPEG frames, newest only (as teleimager's own client: CONFLATE, receive queue of 1)."""

    def __init__(self, host: str, port: int, context: zmq.Context | None = None) -> None:
        self.address = f"tcp://{host}:{port}"
        self._socket = (context or zmq.Context.instance()).socket(zmq.SUB)
        self._socket.setsockopt(zmq.CONFLATE, 1)
        self._socket.setsockopt(zmq.RCVHWM, 1)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.connect(self.address)
        self._socket.setsockopt(zmq.SUBSCRIBE, b"")

    def receive(self, timeout_s: float) -> bytes | None:
        """The newest frame's JPEG bytes, or None if none came within ``timeout_s``."""
        if not self._socket.poll(int(timeout_s * 1000), zmq.POLLIN):
            return None
        return self._socket.recv()

    def close(self) -> None:
        self._socket.close()


class TeleimagerSource:
    """The head camera's frames as stereo frames: asks the service for its configuration (again every ``retry_s``
    until it answers; skipped when ``head_port`` is given), then receives the newest JPEG. A binocular frame is kept
    as it came (its side-by-side JPEG is never re-coded); without the configuration a frame wider than twice its
    height counts as binocular. ``timeout_s``: how long one configuration request waits for its answer (s);
    ``quality``: JPEG quality of the eyes' images coded from a binocular frame."""

    def __init__(self, host: str, config_port: int = CONFIG_PORT, head_port: int = 0, quality: int = 80,
                 retry_s: float = 2.0, timeout_s: float = 2.0) -> None:
        self.host, self.config_port, self.head_port = host, config_port, head_port
        self.quality, self.retry_s, self.timeout_s = quality, retry_s, timeout_s
        self.camera: HeadCamera | None = None
        self._stream: HeadStream | None = None

    def connect(self, halt: threading.Event, on_error: Callable[[str], None]) -> bool:
        """Learn the head camera and connect to its stream, until ``halt``; each failure goes to ``on_error``.
        False if halted first."""
        while not halt.is_set():
            try:
                self.camera = (HeadCamera(self.head_port, 0, 0, binocular=False, fps=0.0) if self.head_port else
                               HeadCamera.from_config(request_config(self.host, self.config_port, self.timeout_s)))
                self._stream = HeadStream(self.host, self.camera.port)
                return True
            except TeleimagerError as exc:
                on_error(f"{exc} (asking again every {self.retry_s:g} s)")
                halt.wait(self.retry_s)
        return False

    def describe(self) -> str:
        camera, stream = self.camera, self._stream
        if camera is None or stream is None:
            return f"waiting for the image service at {self.host}:{self.config_port}"
        shape = f", {camera.width}x{camera.height} at {camera.fps:g} fps" if camera.width else ""
        return f"head camera at {stream.address}{shape}" + (", binocular" if camera.binocular else "")

    def receive(self, timeout_s: float) -> StereoFrame | None:
        """The newest frame, or None if none came within ``timeout_s``; ValueError for bytes that are not a JPEG."""
        if self._stream is None or self.camera is None:
            raise RuntimeError("TeleimagerSource.receive before connect")
        jpeg = self._stream.receive(timeout_s)
        if jpeg is None:
            return None
        binocular = self.camera.binocular
        if not self.camera.width:
            height, width = StereoFrame(mono_jpeg=jpeg).shape
            binocular = width > 2 * height
        if binocular:
            frame = StereoFrame(stereo_jpeg=jpeg, quality=self.quality)
        else:
            frame = StereoFrame(mono_jpeg=jpeg, quality=self.quality)
        frame.shape  # noqa: B018 - reads the JPEG header: ValueError now, not when publishing
        return frame

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
