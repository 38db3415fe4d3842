"""The robot's eyes in the headset: stereo camera frames through the WebXR server to a page, for real.

The server alone (loopback, TLS, a certificate from our CA) and then xr_input as a process of its own
(``source:=webxr``, real time) fed by a real ROS publisher of ``camera/stereo/image_raw/compressed``; on the other
side the simulated page (``webxr_client``), which decodes what vuer's web client would get: an UPSERT of two
``ImageBackground`` elements into ``bgChildren``, the left eye's JPEG on layer 1, the right eye's on layer 2. The
images must be the published ones (to JPEG's loss), at a rate the server's limit allows and no slower than it
could, without frames piling up (each arrives well within a frame period of being sent), while the page's hand
events keep becoming samples.
"""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest
import rclpy
from geometry_msgs.msg import PoseStamped
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CompressedImage

from g1_teleop.core.camera_images import SIDES, encode_jpeg, side_by_side
from g1_teleop.launching.graph_description import NodeSpec
from g1_teleop.launching.process_runner import GraphProcesses
from g1_teleop.operator.webxr_client import (
    HeadsetPage,
    VideoFrame,
    camera_move,
    hand_move,
    page_ssl_context,
    synthetic_hand,
    video_frame,
)
from g1_teleop.operator.webxr_server import ANSWER_WAIT_S, WebXrConfig, WebXrServer
from g1_teleop.operator.xr_frames import DEFAULT_WORLD_T_HEAD, robot_to_openxr
from g1_teleop.ros.image_messages import QOS_IMAGE, STEREO_TOPIC, compressed_msg, image_topics
from g1_teleop.ros.messages import to_stamp
from support.ports import free_port

pytestmark = pytest.mark.integration

WIDTH, HEIGHT = 640, 480  # one eye (the eyes' default)


def stereo_image(seq: int) -> np.ndarray:
    """A stereo frame telling its eyes and its number apart: the left eye a red ramp, the right a green one, a white
    square whose place follows ``seq`` in each."""
    ramp = np.linspace(0, 200, WIDTH, dtype=np.uint8)[None, :].repeat(HEIGHT, axis=0)
    left, right = np.zeros((HEIGHT, WIDTH, 3), np.uint8), np.zeros((HEIGHT, WIDTH, 3), np.uint8)
    left[..., 0], left[..., 2] = ramp, 60
    right[..., 1], right[..., 2] = ramp[:, ::-1], 120
    x = 40 + (seq * 37) % (WIDTH - 160)
    left[100:220, x:x + 120] = right[260:380, x:x + 120] = 255
    return side_by_side(left, right)


def assert_shows(frame: VideoFrame, published: np.ndarray) -> None:
    """The page's eye images are the published frame's halves (to the loss of coding twice as JPEG)."""
    assert frame.left.shape == frame.right.shape == (HEIGHT, WIDTH, 3)
    for got, sent in ((frame.left, published[:, :WIDTH]), (frame.right, published[:, WIDTH:])):
        error = np.abs(got.astype(int) - sent.astype(int))
        assert error.mean() < 3.0 and np.percentile(error, 99) < 40, (error.mean(), np.percentile(error, 99))
    assert frame.fields["left"]["layers"] == 1 and frame.fields["right"]["layers"] == 2
    for side in ("left", "right"):
        fields = frame.fields[side]
        assert (fields["tag"], fields["key"], fields["interpolate"]) == ("ImageBackground", f"robot-eye-{side}", True)
        assert fields["aspect"] == pytest.approx(WIDTH / HEIGHT, rel=1e-6)
        assert (fields["height"], fields["distanceToCamera"]) == (1.0, 1.0)


async def watch(page: HeadsetPage, seconds: float, frames: list[VideoFrame], hand_events: list[float]) -> None:
    """For ``seconds``: the page streams its head and hands at 60 Hz and collects the camera frames it receives."""
    xr = robot_to_openxr(DEFAULT_WORLD_T_HEAD, *(np.eye(4),) * 2)
    hands = synthetic_hand(xr.xr_T_left_wrist), synthetic_hand(xr.xr_T_right_wrist)

    async def stream() -> None:
        while True:
            await page.send(camera_move(xr.xr_T_head))
            await page.send(hand_move(*hands, time.time() * 1000.0))
            hand_events.append(time.monotonic())
            await asyncio.sleep(1 / 60)

    streaming = asyncio.ensure_future(stream())
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            try:
                event, received_ns = await page.receive_stamped(timeout_s=max(0.01, end - time.monotonic()))
            except asyncio.TimeoutError:
                break
            if (frame := video_frame(event, received_ns)) is not None:
                frames.append(frame)
    finally:
        streaming.cancel()


class Camera:
    """A camera handing the server ``count`` distinct stereo frames in turn at ``rate_hz``, stamped with the wall
    clock, from a thread of its own between ``start`` and ``stop``; ``published``: stamp (ns) → the image sent."""

    def __init__(self, server: WebXrServer, rate_hz: float, count: int) -> None:
        self.server, self.period_s = server, 1.0 / rate_hz
        self.images = [stereo_image(seq) for seq in range(count)]
        self.jpegs = [encode_jpeg(image) for image in self.images]
        self.published: dict[int, np.ndarray] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        seq = 0
        while not self._stop.is_set():
            seq += 1
            stamp_ns = time.time_ns()
            self.published[stamp_ns] = self.images[seq % len(self.images)]
            self.server.put_frame(self.jpegs[seq % len(self.jpegs)], stamp_ns)
            time.sleep(self.period_s)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


def test_the_newest_frame_at_most_video_fps_and_the_samples_keep_coming(certificates) -> None:
    """Frames put at 60 Hz, video_fps 20: each page gets 20 a second, the newest each time, none queued; a frame
    that is no JPEG is counted and said; the hand events still all become samples."""
    samples: list[float] = []
    config = WebXrConfig(host="127.0.0.1", port=free_port(), cert_dir=str(certificates.folder), video_fps=20.0)
    server = WebXrServer(config, on_sample=lambda s: samples.append(time.monotonic()))
    camera = Camera(server, 60.0, 30)
    published = camera.published

    frames: list[VideoFrame] = []
    hand_events: list[float] = []
    start_ns: list[int] = []

    async def session() -> None:
        async with HeadsetPage(f"wss://127.0.0.1:{config.port}/", page_ssl_context(str(certificates.ca))) as page:
            assert (await page.receive())["data"]["nodes"][0]["tag"] == "Hands"  # the element comes first
            start_ns.append(time.time_ns())
            # no FRAME_TAKEN, but hand events: the frames come from its first event on, not after ANSWER_WAIT_S
            await watch(page, 5.0, frames, hand_events)
            await asyncio.to_thread(camera.stop)
            server.put_frame(b"not a jpeg", time.time_ns())  # (only frames for an open page are split)
            await asyncio.sleep(0.3)

    server.start()
    try:
        camera.start()
        asyncio.run(session())
    finally:
        camera.stop()
        server.stop()
    assert len(frames) > 10, f"{len(frames)} frames"
    first_s = (frames[0].received_ns - start_ns[0]) / 1e9
    assert first_s < min(3.0, ANSWER_WAIT_S), f"the first frame {first_s:.1f} s after the page's first event"
    for frame in frames[:: max(1, len(frames) // 8)]:
        assert_shows(frame, published[frame.stamp_ns])
    span_s = (frames[-1].received_ns - frames[0].received_ns) / 1e9
    fps = (len(frames) - 1) / span_s
    # 20 at load average 5, 8 at 19 (other runs' soak tests) on the 2 cores
    assert 5.0 <= fps <= 20.5, f"{fps:.1f} frames/s at video_fps 20 (published 60)"
    for numbers in ([f.seq for f in frames], [f.stamp_ns for f in frames]):
        assert numbers == sorted(set(numbers))  # each frame once, newer and newer
    latency = sorted(f.latency_s for f in frames)
    assert latency[len(latency) // 2] < 0.05 and latency[-1] < 0.25, latency  # sent at once, never queued
    age = sorted((f.received_ns - f.stamp_ns) / 1e9 for f in frames)
    assert age[len(age) // 2] < 0.1 and age[-1] < 0.3, age  # the newest frame, not an old one
    figures = server.video_figures()
    assert figures.frames_in > 2 * figures.frames_ready  # the camera's extra frames were dropped, not sent late
    assert figures.bad_frames == 1 and "not a JPEG" in figures.last_bad
    assert len(samples) >= 0.9 * len(hand_events), (len(samples), len(hand_events))


@pytest.mark.parametrize("form", ["eyes", "side_by_side"])
def test_xr_input_shows_the_published_camera_frames(form, rclpy_context, ros_domain, certificates) -> None:
    """xr_input (source webxr, real time, its own process) and a ROS camera at 30 Hz, publishing each eye's JPEG on
    camera/{left,right}/image_raw/compressed (xr_input's default ``video_camera``) or one side-by-side JPEG on the
    stereo topic (``video_topic``): the page shows the published images at ≥ 5 frames/s (video_fps 30), while its
    hands still reach xr/right_wrist."""
    port = free_port()
    log: list[str] = []
    parameters = {"source": "webxr", "lockstep": False, "host": "127.0.0.1", "port": port,
                  "cert_dir": str(certificates.folder), "video_fps": 30.0}
    if form == "side_by_side":
        parameters["video_topic"] = STEREO_TOPIC
    xr_input = NodeSpec("xr_input", "xr_input", True, parameters)
    graph = GraphProcesses([xr_input], output=log.append)
    node = rclpy.create_node("webxr_video_camera", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    topics = [STEREO_TOPIC] if form == "side_by_side" else [image_topics(side)["compressed"] for side in SIDES]
    cameras = [node.create_publisher(CompressedImage, topic, QOS_IMAGE) for topic in topics]
    wrists: list[float] = []
    node.create_subscription(PoseStamped, "xr/right_wrist", lambda m: wrists.append(time.monotonic()), QoSProfile(
        history=HistoryPolicy.KEEP_LAST, depth=100, reliability=ReliabilityPolicy.BEST_EFFORT))
    images = [stereo_image(seq) for seq in range(30)]
    jpegs = [[encode_jpeg(image)] if form == "side_by_side" else [encode_jpeg(half) for half in
                                                                   (image[:, :WIDTH], image[:, WIDTH:])]
             for image in images]
    published: dict[int, np.ndarray] = {}
    seq = 0

    def publish() -> None:
        nonlocal seq
        seq += 1
        stamp_ns = time.time_ns()
        published[stamp_ns] = images[seq % len(images)]
        for camera, jpeg in zip(cameras, jpegs[seq % len(jpegs)], strict=True):
            camera.publish(compressed_msg(jpeg, to_stamp(stamp_ns), "camera"))

    node.create_timer(1 / 30, publish)
    stop = threading.Event()
    spinner = threading.Thread(target=lambda: [executor.spin_once(timeout_sec=0.05) for _ in iter(stop.is_set, True)],
                               daemon=True)
    frames: list[VideoFrame] = []
    hand_events: list[float] = []

    async def session() -> None:
        deadline = time.monotonic() + 60.0
        while True:
            assert graph.check() is None, "\n".join(log[-20:])
            try:
                page = HeadsetPage(f"wss://127.0.0.1:{port}/", page_ssl_context(str(certificates.ca)))
                await page.__aenter__()
                break
            except OSError:
                assert time.monotonic() < deadline, "xr_input's WebXR server did not listen\n" + "\n".join(log[-20:])
                await asyncio.sleep(0.5)
        try:
            await page.receive()  # the Hands element
            await watch(page, 1.0, [], [])  # the camera's and xr_input's topics matched, the pose stream running
            wrists.clear()
            await watch(page, 5.0, frames, hand_events)  # (no FRAME_TAKEN, but hand events: frames from the first)
        finally:
            await page.__aexit__()

    graph.start()
    spinner.start()
    try:
        deadline = time.monotonic() + 60.0
        while not all(node.count_subscribers(topic) for topic in topics):
            assert time.monotonic() < deadline and graph.check() is None, "\n".join(log[-20:])
            time.sleep(0.1)
        asyncio.run(session())
        time.sleep(0.2)
    finally:
        stop.set()
        spinner.join()
        graph.stop()
        executor.shutdown()
        node.destroy_node()
    assert len(frames) > 20, f"{len(frames)} frames\n" + "\n".join(log[-20:])
    for frame in frames[:: max(1, len(frames) // 10)]:
        assert_shows(frame, published[frame.stamp_ns])
    fps = (len(frames) - 1) / ((frames[-1].received_ns - frames[0].received_ns) / 1e9)
    assert 5.0 <= fps <= 30.5, f"{fps:.1f} frames/s (published 30 Hz, video_fps 30; 7.2 at load average 19)"
    age = sorted((f.received_ns - f.stamp_ns) / 1e9 for f in frames)  # camera stamp → page
    assert age[len(age) // 2] < 0.15 and age[int(0.99 * (len(age) - 1))] < 0.5, age
    assert len(wrists) >= 0.8 * len(hand_events), (len(wrists), len(hand_events))
