"""`g1-teleop bench xr`: how long a headset's event takes to become an operator sample in the WebXR server.

The WebXR server (vuer over HTTPS/WSS on loopback, a certificate from a throw-away CA) is fed by the simulated
page (``operator.webxr_client``: vuer's web-client protocol, msgpackr's bytes) from a process of its own, as a
headset is another machine, over a real TLS WebSocket: ``EVENTS`` HAND_MOVE events with hand tracking, then as
many CONTROLLER_MOVE events with controllers, at ``RATE_HZ`` (a headset renders at 72–120 Hz; the page sends at
the server's ``stream_fps``, 60 Hz by default). Each event's latency runs from just before the page hands its
bytes to the WebSocket to the server's ``on_sample`` callback (TLS, vuer's decoding and dispatch, parsing,
xr_frames' conversion, landmarks, Joy), both read on the machine's monotonic clock; ``processing`` is the part
after the event reached the server's handler. Then the same HAND_MOVE events to xr_input (``source:=webxr``, real
time) as a process of its own on a private ROS domain: each event's latency from the page to the arrival of its
xr/right_wrist (in real time xr_input publishes the head and the wrists of a sample first, then joy and the hands'
landmarks: ros.operator_topics) in another process, the bench's (rclpy, best effort as retarget subscribes; it
listens to the hands' landmarks too, as hand_retarget does with Dex3 hands), each message paired with
its event by the position it carries (the left wrist's height encodes the event's index). Also: the server
process's CPU while one page is connected and idle (vuer's own uplink task spins a core; the server replaces it),
and the machine's load average, since other processes on the cores delay the server's thread. The robot's camera
frames to the page, and the hand events meanwhile: `g1-teleop bench xr-video` (``xr_video``)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from g1_teleop.operator.webxr_client import (
    ControllerInput,
    HeadsetPage,
    camera_move,
    controller_move,
    encode,
    hand_move,
    page_ssl_context,
    synthetic_hand,
)
from g1_teleop.operator.webxr_samples import XrSample
from g1_teleop.operator.webxr_server import WebXrConfig, WebXrServer, WebXrServerError
from g1_teleop.operator.xr_certificates import CertificateFiles, make_certificates
from g1_teleop.operator.xr_frames import DEFAULT_WORLD_T_HEAD, robot_to_openxr
from g1_teleop.tools.bench.figures import BenchError, percentiles

EVENTS = 2000
RATE_HZ = 90.0
START_MS = 1.7e12  # the pages' Date.now() stamps: START_MS + event index, to pair each sample with its event
INDEX_STEP_M = 1e-5  # event i's right wrist is INDEX_STEP_M · i higher: pairs each xr/right_wrist with its event
BASE_Z_M = 0.1
XR_BENCH_DOMAIN_ID = 229  # the bench's own ROS domain: never a robot's (0), the tests' (1–200) nor the other benches'


def bench_xr() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        files = make_certificates(Path(folder), ("127.0.0.1",), ("localhost",))
        out: dict[str, float] = {}
        for input in ("hands", "controllers"):
            out.update(_run(files, input))
        out.update(_topic_latency(files))
        out["idle_connected_cpu_percent"] = _idle_cpu_percent(files)
        out["load_average_1min"] = round(os.getloadavg()[0], 2)
        return out


def _wrists(i: int) -> tuple[np.ndarray, np.ndarray]:
    """Wrist targets moving on 5 cm circles, pelvis frame; the right one rising by INDEX_STEP_M per event."""
    left, right = np.eye(4), np.eye(4)
    a = 2 * np.pi * i / 200
    left[:3, 3] = (0.3 + 0.05 * np.cos(a), 0.2 + 0.05 * np.sin(a), BASE_Z_M)
    right[:3, 3] = (0.3 + 0.05 * np.cos(a), -0.2 - 0.05 * np.sin(a), BASE_Z_M + INDEX_STEP_M * i)
    return left, right


def _hand_events() -> list[bytes]:
    events = []
    for i in range(EVENTS):
        xr = robot_to_openxr(DEFAULT_WORLD_T_HEAD, *_wrists(i))
        events.append(encode(hand_move(synthetic_hand(xr.xr_T_left_wrist), synthetic_hand(xr.xr_T_right_wrist),
                                       START_MS + i)))
    return events


def _controller_events() -> list[bytes]:
    events = []
    for i in range(EVENTS):
        xr = robot_to_openxr(DEFAULT_WORLD_T_HEAD, *_wrists(i), hand_tracking=False)
        events.append(encode(controller_move(ControllerInput(xr.xr_T_left_wrist, thumbstick=(0.0, -0.5)),
                                             ControllerInput(xr.xr_T_right_wrist, trigger=0.7), START_MS + i)))
    return events


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server(files: CertificateFiles, input: str, on_sample=None) -> WebXrServer:
    server = WebXrServer(WebXrConfig(host="127.0.0.1", port=_free_port(), input=input,
                                     cert_dir=str(files.folder)), on_sample=on_sample)
    try:
        server.start()
    except WebXrServerError as exc:
        raise BenchError(str(exc)) from exc
    return server


def _run(files: CertificateFiles, input: str) -> dict[str, float]:
    delivered: dict[int, tuple[float, float]] = {}  # event index → (delivery time, handler time)

    def on_sample(sample: XrSample) -> None:
        delivered[round(sample.device_time_s * 1000 - START_MS)] = (time.monotonic(), sample.received_s)

    server = _server(files, input, on_sample)
    try:
        page = subprocess.run([sys.executable, "-m", "g1_teleop.tools.bench.xr", "page", str(server.config.port),
                               str(files.ca), input], capture_output=True, text=True, timeout=120)
        if page.returncode != 0:
            raise BenchError(f"the simulated page failed: {page.stderr.strip().splitlines()[-1:]}")
        sent = json.loads(page.stdout.strip().splitlines()[-1])
        deadline = time.monotonic() + 5.0
        while len(delivered) < len(sent) and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        server.stop()
    if not delivered:
        raise BenchError(f"no {input} sample came out of the WebXR server")
    latency = [delivered[i][0] - sent[i] for i in sorted(delivered)]
    processing = [d - h for d, h in delivered.values()]
    return {**percentiles(f"{input}_event_to_sample", latency),
            **percentiles(f"{input}_processing", processing, unit="us", digits=1),
            f"{input}_events": float(len(sent)), f"{input}_samples_lost": float(len(sent) - len(delivered))}


def _topic_latency(files: CertificateFiles) -> dict[str, float]:
    """HAND_MOVE events from the page process → xr_input (real time, its own process) → xr/right_wrist received
    here; the latency of each event from the page's send to its message's arrival (s)."""
    import rclpy
    from geometry_msgs.msg import PoseArray, PoseStamped
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

    from g1_teleop.launching.graph_description import NodeSpec
    from g1_teleop.launching.process_runner import GraphProcesses

    port = _free_port()
    log: list[str] = []
    xr_input = NodeSpec("xr_input", "xr_input", True, {"source": "webxr", "lockstep": False, "host": "127.0.0.1",
                                                        "port": port, "cert_dir": str(files.folder)})
    graph = GraphProcesses([xr_input], env={"ROS_DOMAIN_ID": str(XR_BENCH_DOMAIN_ID),
                                            "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}, output=log.append)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=XR_BENCH_DOMAIN_ID)
    node = rclpy.create_node("bench_xr", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    arrived: dict[int, float] = {}  # event index → arrival here (monotonic s)

    def on_wrist(msg: PoseStamped) -> None:
        arrived.setdefault(round((msg.pose.position.z - BASE_Z_M) / INDEX_STEP_M), time.monotonic())

    node.create_subscription(PoseStamped, "xr/right_wrist", on_wrist, QoSProfile(
        history=HistoryPolicy.KEEP_LAST, depth=100, reliability=ReliabilityPolicy.BEST_EFFORT))
    for side in ("left", "right"):  # as hand_retarget (dex3:=true): xr_input builds the landmarks only for a listener
        node.create_subscription(PoseArray, f"xr/{side}_hand", lambda msg: None, QoSProfile(
            history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
    try:
        graph.start()
        _wait_for_port(port, graph, log)
        deadline = time.monotonic() + 30.0  # best effort: the subscription must be matched before the page streams
        while node.count_publishers("xr/right_wrist") == 0 and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        page = subprocess.Popen([sys.executable, "-m", "g1_teleop.tools.bench.xr", "page", str(port), str(files.ca),
                                 "hands"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120.0
        while page.poll() is None and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.01)
        out, err = page.communicate(timeout=10)
        if page.returncode != 0:
            raise BenchError(f"the simulated page failed: {err.strip().splitlines()[-1:]}")
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.01)
    finally:
        graph.stop()
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()
    sent = json.loads(out.strip().splitlines()[-1])
    latency = [arrived[i] - sent[i] for i in sorted(arrived) if 0 <= i < len(sent)]
    if not latency:
        raise BenchError("no xr/right_wrist came from xr_input: " + "\n".join(log[-10:]))
    return {**percentiles("hands_event_to_topic", latency),
            "hands_topic_samples_lost": float(len(sent) - len(latency))}


def _wait_for_port(port: int, graph, log: list[str], timeout_s: float = 60.0) -> None:
    """Until xr_input's server listens on ``port``."""
    deadline = time.monotonic() + timeout_s
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        if (failure := graph.check()) is not None or time.monotonic() > deadline:
            raise BenchError(f"xr_input's WebXR server did not listen on {port} ({failure or 'timeout'}): "
                             + "\n".join(log[-10:]))
        time.sleep(0.2)


def page(port: int, ca_file: str, input: str) -> None:
    """The simulated page's process: stream the events at RATE_HZ; print their send times (monotonic s) as JSON."""
    events = _hand_events() if input == "hands" else _controller_events()
    sent = [0.0] * len(events)

    async def stream() -> None:
        async with HeadsetPage(f"wss://127.0.0.1:{port}/", page_ssl_context(ca_file)) as headset:
            await headset.receive()
            await headset.send(camera_move(robot_to_openxr(DEFAULT_WORLD_T_HEAD, *_wrists(0)).xr_T_head))
            start = time.monotonic()
            for i, data in enumerate(events):
                await asyncio.sleep(max(0.0, start + i / RATE_HZ - time.monotonic()))
                sent[i] = time.monotonic()
                await headset.send_bytes(data)
            await asyncio.sleep(0.5)  # let the last events arrive before the WebSocket closes

    asyncio.run(stream())
    print(json.dumps(sent))


def _idle_cpu_percent(files: CertificateFiles, seconds: float = 2.0) -> float:
    server = _server(files, "hands")
    result: list[float] = []

    async def page() -> None:
        async with HeadsetPage(f"wss://127.0.0.1:{server.config.port}/", page_ssl_context(str(files.ca))) as p:
            await p.receive()
            cpu, wall = time.process_time(), time.monotonic()
            await asyncio.sleep(seconds)
            result.append(100.0 * (time.process_time() - cpu) / (time.monotonic() - wall))

    try:
        asyncio.run(page())
    finally:
        server.stop()
    return round(result[0], 1)


if __name__ == "__main__":
    page(int(sys.argv[2]), sys.argv[3], sys.argv[4])
