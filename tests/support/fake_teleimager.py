"""A fake of Unitree's image service (teleimager 1.6, ``src/teleimager/image_server.py`` and ``image_client.py``),
speaking its protocol byte for byte with pyzmq as the real server does:

- a REP socket on the configuration port answers any request with ``send_json(cam_config)`` (pyzmq: the UTF-8 bytes
  of ``json.dumps(cam_config)``), ``cam_config`` being the server's ``cam_config_server.yaml`` as ``yaml.safe_load``
  reads it (``HEAD_CONFIG`` below: the repository's head_camera section, ports replaced);
- a PUB socket (CONFLATE, SNDHWM 1, LINGER 0) on the head camera's port sends each frame as one message holding the
  JPEG bytes and nothing else, ``fps`` times a second.

Run as ``python -m support.fake_teleimager CONFIG_PORT HEAD_PORT JPEG_FILE [FPS]`` (tests/ on sys.path) or in a
thread (:class:`FakeTeleimager`).
"""

from __future__ import annotations

import copy
import sys
import threading
import time
from pathlib import Path
from typing import Any

import zmq

HEAD_CONFIG: dict[str, Any] = {
    "head_camera": {"enable_zmq": True, "zmq_port": 55555, "enable_webrtc": False, "webrtc_port": 60001,
                    "webrtc_codec": "h264", "type": "uvc", "image_shape": [480, 1280], "binocular": True, "fps": 30,
                    "video_id": 0, "serial_number": "01.00.00", "physical_path": None},
    "left_wrist_camera": {"enable_zmq": False, "zmq_port": 55556, "enable_webrtc": False, "webrtc_port": 60002,
                          "type": "uvc", "image_shape": [480, 640], "binocular": False, "fps": 30},
    "right_wrist_camera": {"enable_zmq": False, "zmq_port": 55557, "enable_webrtc": False, "webrtc_port": 60003,
                           "type": "uvc", "image_shape": [480, 640], "binocular": False, "fps": 30},
}


def head_config(head_port: int, height: int = 480, width: int = 1280, binocular: bool = True,
                fps: float = 30) -> dict[str, Any]:
    """The server's configuration with the head camera on ``head_port`` streaming ``width`` × ``height`` frames."""
    config = copy.deepcopy(HEAD_CONFIG)
    config["head_camera"].update(zmq_port=head_port, image_shape=[height, width], binocular=binocular, fps=fps)
    return config


class FakeTeleimager:
    """The fake service in a thread: configuration on ``config_port`` (None: none at all, as xr_teleoperate's older
    image server), ``frames`` sent in turn on ``head_port`` at ``fps``. ``sent`` counts the frames sent."""

    def __init__(self, config_port: int | None, head_port: int, frames: list[bytes], config: dict[str, Any],
                 fps: float = 30.0) -> None:
        self.context = zmq.Context()
        self.frames, self.config, self.period_s = frames, config, 1.0 / fps
        self.requests: list[bytes] = []
        self.sent = 0
        self._halt = threading.Event()
        self._rep = None
        if config_port is not None:
            self._rep = self.context.socket(zmq.REP)
            self._rep.bind(f"tcp://127.0.0.1:{config_port}")
        self._pub = self.context.socket(zmq.PUB)
        self._pub.setsockopt(zmq.CONFLATE, 1)
        self._pub.setsockopt(zmq.SNDHWM, 1)
        self._pub.setsockopt(zmq.LINGER, 0)
        self._pub.bind(f"tcp://127.0.0.1:{head_port}")
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> FakeTeleimager:
        self._thread.start()
        return self

    def _run(self) -> None:
        next_s = time.monotonic()
        while not self._halt.is_set():
            if self._rep is not None and self._rep.poll(0, zmq.POLLIN):
                self.requests.append(self._rep.recv())
                self._rep.send_json(self.config)
            if time.monotonic() >= next_s:
                try:
                    self._pub.send(self.frames[self.sent % len(self.frames)], zmq.NOBLOCK)
                    self.sent += 1
                except zmq.Again:
                    pass
                next_s += self.period_s
            time.sleep(0.001)

    def stop(self) -> None:
        self._halt.set()
        self._thread.join(timeout=2.0)
        for sock in (self._rep, self._pub):
            if sock is not None:
                sock.close()
        self.context.term()


if __name__ == "__main__":
    config_port, head_port, jpeg_file = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    server = FakeTeleimager(config_port, head_port, [jpeg_file.read_bytes()], head_config(head_port),
                            float(sys.argv[4]) if len(sys.argv) > 4 else 30.0).start()
    try:
        while True:
            time.sleep(1.0)
    except KeyboardInterrupt:
        server.stop()
