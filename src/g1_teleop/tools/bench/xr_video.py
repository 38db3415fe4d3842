"""`g1-teleop bench xr-video`: the robot's stereo frames from a ROS topic to the headset's page, and the pose stream
meanwhile.

xr_input (``source:=webxr``, real time, ``video_fps`` 60: its default; ``video_topic``: the stereo topic) runs as
a process of its own on the xr bench's private ROS domain; the bench publishes ``camera/stereo/image_raw/compressed``
at ``CAMERA_HZ`` (a 1280×480 JPEG of textured content, about the eyes' size, stamped with the wall clock) and the
simulated page (``operator.webxr_client``, a process of its own) receives the frames while it streams the xr bench's
HAND_MOVE events at its ``RATE_HZ``. At the page: frames per second, each frame's latency from the server's send
and from its camera stamp to its arrival (wall clock, one machine), checked to be the eyes' 640×480 images; at the
bench: each hand event's latency to its xr/right_wrist, to compare with ``hands_event_to_topic`` without video
(bench xr).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from g1_teleop.core.camera_images import encode_jpeg
from g1_teleop.operator.webxr_client import HeadsetPage, camera_move, page_ssl_context, video_frame
from g1_teleop.operator.xr_certificates import CertificateFiles, make_certificates
from g1_teleop.operator.xr_frames import DEFAULT_WORLD_T_HEAD, robot_to_openxr
from g1_teleop.tools.bench.figures import BenchError, percentiles
from g1_teleop.tools.bench.xr import (
    BASE_Z_M,
    INDEX_STEP_M,
    RATE_HZ,
    XR_BENCH_DOMAIN_ID,
    _free_port,
    _hand_events,
    _wait_for_port,
    _wrists,
)

CAMERA_HZ = 30.0
VIDEO_FPS = 60.0  # xr_input's default


def _camera_jpegs(count: int = 8) -> list[bytes]:
    """Stereo JPEGs (1280×480) of smooth textures with detail, as a scene codes (quality 80, as the eyes)."""
    rng = np.random.default_rng(0)
    jpegs = []
    for _ in range(count):
        coarse = rng.integers(0, 256, (30, 80, 3), dtype=np.uint8)
        image = np.kron(coarse, np.ones((16, 16, 1), dtype=np.uint8))
        image = np.clip(image.astype(int) + rng.integers(-12, 13, image.shape), 0, 255).astype(np.uint8)
        jpegs.append(encode_jpeg(image))
    return jpegs


def bench_xr_video() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        figures = video_figures(make_certificates(Path(folder), ("127.0.0.1",), ("localhost",)))
    return {**figures, "load_average_1min": round(os.getloadavg()[0], 2)}


def video_figures(files: CertificateFiles) -> dict[str, float]:
    import rclpy
    from geometry_msgs.msg import PoseStamped
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import CompressedImage

    from g1_teleop.launching.graph_description import NodeSpec
    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.ros.image_messages import QOS_IMAGE, STEREO_TOPIC, compressed_msg
    from g1_teleop.ros.messages import to_stamp

    port = _free_port()
    log: list[str] = []
    xr_input = NodeSpec("xr_input", "xr_input", True, {"source": "webxr", "lockstep": False, "host": "127.0.0.1",
                                                        "port": port, "cert_dir": str(files.folder),
                                                        "video_fps": VIDEO_FPS, "video_topic": STEREO_TOPIC})
    graph = GraphProcesses([xr_input], env={"ROS_DOMAIN_ID": str(XR_BENCH_DOMAIN_ID),
                                            "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}, output=log.append)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=XR_BENCH_DOMAIN_ID)
    node = rclpy.create_node("bench_xr_video", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    camera = node.create_publisher(CompressedImage, STEREO_TOPIC, QOS_IMAGE)
    jpegs = _camera_jpegs()
    published = [0]

    def publish() -> None:
        camera.publish(compressed_msg(jpegs[published[0] % len(jpegs)], to_stamp(time.time_ns()), "stereo"))
        published[0] += 1

    arrived: dict[int, float] = {}
    node.create_subscription(PoseStamped, "xr/right_wrist", lambda m: arrived.setdefault(
        round((m.pose.position.z - BASE_Z_M) / INDEX_STEP_M), time.monotonic()), QoSProfile(
        history=HistoryPolicy.KEEP_LAST, depth=100, reliability=ReliabilityPolicy.BEST_EFFORT))
    stop = threading.Event()
    spinner = threading.Thread(target=lambda: [executor.spin_once(timeout_sec=0.01) for _ in iter(stop.is_set, True)],
                               daemon=True)
    try:
        graph.start()
        _wait_for_port(port, graph, log)
        spinner.start()
        deadline = time.monotonic() + 30.0  # the wrists' best-effort subscription matched, xr_input hears the camera
        while (node.count_publishers("xr/right_wrist") == 0 or node.count_subscribers(STEREO_TOPIC) == 0) and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        node.create_timer(1.0 / CAMERA_HZ, publish)
        page = subprocess.run([sys.executable, "-m", "g1_teleop.tools.bench.xr_video", str(port), str(files.ca)],
                              capture_output=True, text=True, timeout=180)
        if page.returncode != 0:
            raise BenchError(f"the simulated page failed: {page.stderr.strip().splitlines()[-1:]}")
        time.sleep(1.0)
    finally:
        stop.set()
        if spinner.is_alive():
            spinner.join()
        graph.stop()
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()
    result = json.loads(page.stdout.strip().splitlines()[-1])
    frames = np.array(result["frames"], dtype=np.int64).reshape(-1, 4)  # seq, stamp, sent, received (ns)
    if len(frames) < 2:
        raise BenchError("fewer than two camera frames reached the page: " + "\n".join(log[-10:]))
    sent = result["sent"]
    latency = [arrived[i] - sent[i] for i in sorted(arrived) if 0 <= i < len(sent)]
    span_s = (frames[-1, 3] - frames[0, 3]) / 1e9
    return {"video_page_fps": round((len(frames) - 1) / span_s, 2),
            "video_camera_hz": CAMERA_HZ, "video_fps_limit": VIDEO_FPS,
            **percentiles("video_send_to_page", list((frames[:, 3] - frames[:, 2]) / 1e9)),
            **percentiles("video_camera_to_page", list((frames[:, 3] - frames[:, 1]) / 1e9)),
            "video_jpeg_kb": round(float(np.mean([len(j) for j in jpegs])) / 1e3, 1),
            **(percentiles("hands_event_to_topic_with_video", latency) if latency else {}),
            "hands_topic_samples_lost_with_video": float(len(sent) - len(latency))}


def page(port: int, ca_file: str) -> None:
    """The simulated page's process: the xr bench's hand events at RATE_HZ while it receives the camera frames;
    prints the events' send times (monotonic s) and the frames (seq, camera stamp, sent, received; ns) as JSON."""
    events = _hand_events()
    sent = [0.0] * len(events)
    frames: list[list[int]] = []

    async def stream(headset: HeadsetPage) -> None:
        await headset.send(camera_move(robot_to_openxr(DEFAULT_WORLD_T_HEAD, *_wrists(0)).xr_T_head))
        start = time.monotonic()
        for i, data in enumerate(events):
            await asyncio.sleep(max(0.0, start + i / RATE_HZ - time.monotonic()))
            sent[i] = time.monotonic()
            await headset.send_bytes(data)

    async def watch(headset: HeadsetPage) -> None:
        while True:
            event, received_ns = await headset.receive_stamped(timeout_s=30.0)
            frame = video_frame(event, received_ns)
            if frame is not None:
                if frame.left.shape != (480, 640, 3) or frame.right.shape != frame.left.shape:
                    raise BenchError(f"the page got eye images of {frame.left.shape} and {frame.right.shape}")
                frames.append([frame.seq, frame.stamp_ns, frame.sent_ns, frame.received_ns])

    async def run() -> None:
        async with HeadsetPage(f"wss://127.0.0.1:{port}/", page_ssl_context(ca_file)) as headset:
            await headset.receive()  # the Hands element
            await headset.while_watching(stream(headset), watch, linger_s=0.5)  # (the last events, before it closes)

    asyncio.run(run())
    print(json.dumps({"sent": sent, "frames": frames}))


if __name__ == "__main__":
    page(int(sys.argv[1]), sys.argv[2])
