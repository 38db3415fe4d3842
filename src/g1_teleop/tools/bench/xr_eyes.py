"""`g1-teleop bench xr-eyes`: the whole chain, the simulation's rendered eyes to the headset's page.

The simulation graph (``config/graphs/sim.yaml``: sim_bridge, policy, retarget, robot_state, xr_input with
``source:=webxr`` serving its page over TLS on loopback, and the eyes node rendering on the CPU) runs in real time
(gantry: the robot stands whatever the load) on the xr bench's private ROS domain. The simulated page
(``operator.webxr_client``, a process of its own) connects and streams a still operator (HAND_MOVE, both hands at
rest, at ``STREAM_HZ``: the server's ``stream_fps``) and answers each binary message it takes with FRAME_TAKEN, as
the page's ``web/frame_taken.js`` does (on arrival); it decodes one frame in ``CHECK_EVERY`` (checking the eyes'
640×480 images), since a headset decodes on its own hardware. Over ``SECONDS`` after ``WARM_UP_S``:

- ``video_page_fps``: eye frames the page received per wall second;
- ``video_render_to_page_*``: the eyes node's publish of the frame (the left eye's JPEG, which xr_input pairs with
  the right one's: its DDS source timestamp, heard by this process's subscription and paired with the page's frame
  by its header stamp) → the page's receipt (wall clock, one machine). The render itself and the JPEG coding come
  before: ``video_state_to_page_*`` runs from the simulated state the frame shows (its stamp, simulated time, mapped
  to wall time by the source timestamp of the first /clock at or after it: sim_bridge's publish) to the page's
  receipt;
- ``video_send_to_page_*``: xr_input's send → the page's receipt; ``video_published_fps``: frames heard here;
- ``realtime_eyes_sim_speed`` and ``realtime_no_eyes_sim_speed``: simulated seconds per wall second (/clock) during
  the window, the same graph and page with ``eyes:=false`` for the second.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import msgpack
import numpy as np

from g1_teleop.operator.webxr_client import (
    HeadsetPage,
    camera_move,
    encode,
    hand_move,
    page_ssl_context,
    synthetic_hand,
    video_frame,
)
from g1_teleop.operator.webxr_video import FRAME_TAKEN
from g1_teleop.operator.xr_certificates import CertificateFiles, make_certificates
from g1_teleop.operator.xr_frames import DEFAULT_WORLD_T_HEAD, robot_to_openxr
from g1_teleop.tools.bench.figures import BenchError, percentiles
from g1_teleop.tools.bench.xr import XR_BENCH_DOMAIN_ID, _free_port, _wait_for_port, _wrists

WARM_UP_S = 5.0  # after the page connects: the eyes and the server settle
SECONDS = 15.0  # the measured window (wall s)
STREAM_HZ = 60.0  # the page's hand events (the server's stream_fps)
CHECK_EVERY = 30  # the page decodes one frame in this many
START_TIMEOUT_S = 120.0  # the graph: models, the eyes' GL probe and renderer
CLOCK_DEPTH = 250  # /clock messages kept between takes: 0.5 s of real time


def sim_speed(clock: np.ndarray, window_ns: tuple[int, int]) -> float:
    """Simulated seconds per wall second over ``window_ns`` (wall ns); ``clock``: rows (wall ns, simulated ns)."""
    inside = clock[(clock[:, 0] >= window_ns[0]) & (clock[:, 0] < window_ns[1])]
    if len(inside) < 2:
        return 0.0
    return round(float((inside[-1, 1] - inside[0, 1]) / (inside[-1, 0] - inside[0, 0])), 3)


def video_figures(frames: np.ndarray, published: dict[int, int], clock: np.ndarray,
                  window_ns: tuple[int, int]) -> dict[str, float]:
    """The page's figures over ``window_ns`` (wall ns). ``frames``: rows (seq, stamp: simulated ns, server send,
    page receipt: wall ns); ``published``: a frame's stamp → its publish (wall ns); ``clock``: rows (wall ns
    of /clock's publish, simulated ns), simulated time increasing."""
    seconds = (window_ns[1] - window_ns[0]) / 1e9
    frames = frames.reshape(-1, 4)
    frames = frames[(frames[:, 3] >= window_ns[0]) & (frames[:, 3] < window_ns[1])]
    shown = [p for p in published.values() if window_ns[0] <= p < window_ns[1]]
    out = {"video_page_fps": round(len(frames) / seconds, 2), "video_published_fps": round(len(shown) / seconds, 2)}
    if len(frames) == 0:
        return out
    render = [(received - published[stamp]) / 1e9 for _, stamp, _, received in frames if stamp in published]
    at = np.searchsorted(clock[:, 1], frames[:, 1]) if len(clock) else np.zeros(len(frames), dtype=int)
    state = [(received - clock[i, 0]) / 1e9 for i, received in zip(at, frames[:, 3], strict=True) if i < len(clock)]
    out["video_render_stamps_matched"] = round(len(render) / len(frames), 3)
    for name, samples in (("render_to_page", render), ("state_to_page", state),
                          ("send_to_page", list((frames[:, 3] - frames[:, 2]) / 1e9))):
        if samples:
            out.update(percentiles(f"video_{name}", samples))
    return out


def bench_xr_eyes(seconds: float = SECONDS) -> dict[str, float]:
    """The graph with the eyes and the page, then without the eyes (see the module docstring)."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        files = make_certificates(Path(folder), ("127.0.0.1",), ("localhost",))
        figures = _graph_run(files, True, seconds)
        figures.update(_graph_run(files, False, seconds))
    return {**figures, "seconds": seconds, "load_average_1min_start": round(load, 2),
            "load_average_1min": round(os.getloadavg()[0], 2)}


def _graph_run(files: CertificateFiles, eyes: bool, seconds: float) -> dict[str, float]:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import CompressedImage

    from g1_teleop.launching.graph_description import load_graph
    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.ros.image_messages import QOS_IMAGE, image_topics
    from g1_teleop.ros.messages import stamp_ns
    from g1_teleop.ros.polled_subscription import PolledSubscription
    from g1_teleop.ros.qos import QOS_OBSERVER

    port = _free_port()
    log: list[str] = []
    nodes = load_graph("sim").resolve({"source": "webxr", "eyes": str(eyes).lower(), "lockstep": "false",
                                       "gantry": "true", "xr_port": str(port)})
    nodes = [dataclasses.replace(n, parameters={**n.parameters, "host": "127.0.0.1", "cert_dir": str(files.folder)})
             if n.name == "xr_input" else n for n in nodes]
    graph = GraphProcesses(nodes, env={"ROS_DOMAIN_ID": str(XR_BENCH_DOMAIN_ID),
                                       "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}, output=log.append)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=XR_BENCH_DOMAIN_ID)
    node = rclpy.create_node("bench_xr_eyes", context=context)
    clock: list[tuple[int, int]] = []  # (sim_bridge's publish: wall ns, simulated ns)
    published: dict[int, int] = {}  # frame stamp (simulated ns) → the eyes' publish (wall ns)

    def on_eye(msg: CompressedImage, info) -> None:
        published[stamp_ns(msg.header.stamp)] = info["source_timestamp"] or time.time_ns()

    # /clock (500 a second) taken in batches between spins, not a callback each: this process is not the graph
    clock_reader = PolledSubscription(rclpy.create_node("bench_xr_eyes_clock", context=context), Clock, "/clock",
                                      QOS_OBSERVER, depth=CLOCK_DEPTH)

    def spin() -> None:
        while not stop.is_set():
            executor.spin_once(timeout_sec=0.01)
            clock.extend((info["source_timestamp"] or time.time_ns(), stamp_ns(msg.clock))
                         for msg, info in clock_reader.take_all())

    if eyes:
        node.create_subscription(CompressedImage, image_topics("left")["compressed"], on_eye, QOS_IMAGE)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    stop = threading.Event()
    spinner = threading.Thread(target=spin, daemon=True)
    page: subprocess.Popen | None = None
    name = f"realtime_{'eyes' if eyes else 'no_eyes'}"
    try:
        graph.start()
        spinner.start()
        _wait_for_port(port, graph, log, START_TIMEOUT_S)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not clock or (eyes and not published):  # the simulation runs, the eyes render
            if (failure := graph.check()) is not None or time.monotonic() > deadline:
                raise BenchError(f"{name}: {failure or 'no /clock or no eye frame in time'}: "
                                 + "\n".join(log[-10:]))
            time.sleep(0.1)
        page = subprocess.Popen([sys.executable, "-m", "g1_teleop.tools.bench.xr_eyes", str(port), str(files.ca),
                                 str(WARM_UP_S + seconds)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + WARM_UP_S + seconds + 60.0
        while page.poll() is None:
            if (failure := graph.check()) is not None or time.monotonic() > deadline:
                raise BenchError(f"{name}: {failure or 'the page did not end'}: " + "\n".join(log[-10:]))
            time.sleep(0.1)
        out, err = page.communicate()
        if page.returncode != 0:
            raise BenchError(f"the simulated page failed: {err.strip().splitlines()[-1:]}")
    finally:
        if page is not None and page.poll() is None:
            page.kill()
            page.communicate()
        stop.set()
        if spinner.is_alive():
            spinner.join()
        graph.stop()
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()
    result = json.loads(out.strip().splitlines()[-1])
    start = result["start_ns"] + int(WARM_UP_S * 1e9)
    window = (start, start + int(seconds * 1e9))
    clocks = np.array(sorted(clock), dtype=np.int64).reshape(-1, 2)
    figures = {f"{name}_sim_speed": sim_speed(clocks, window)}
    if eyes:
        frames = np.array(result["frames"], dtype=np.int64).reshape(-1, 4)
        figures.update(video_figures(frames, published, clocks[np.argsort(clocks[:, 1], kind="stable")], window))
        if figures["video_page_fps"] == 0:
            raise BenchError("no eye frame reached the page in the window: " + "\n".join(log[-10:]))
    return figures


def page(port: int, ca_file: str, seconds: float) -> None:
    """The simulated page's process, for ``seconds``: a still operator's hand events at STREAM_HZ, FRAME_TAKEN for
    each binary message on its arrival; prints its start and the frames (seq, stamp, sent, received; ns) as JSON."""
    xr = robot_to_openxr(DEFAULT_WORLD_T_HEAD, *_wrists(0))
    hands = synthetic_hand(xr.xr_T_left_wrist), synthetic_hand(xr.xr_T_right_wrist)
    frames: list[list[int]] = []
    start_ns = time.time_ns()

    async def stream(headset: HeadsetPage, end: float) -> None:
        await headset.send(camera_move(xr.xr_T_head))
        start, i = time.monotonic(), 0
        while time.monotonic() < end:
            await asyncio.sleep(max(0.0, start + i / STREAM_HZ - time.monotonic()))
            await headset.send_bytes(encode(hand_move(*hands, time.time_ns() // 1_000_000)))
            i += 1

    async def watch(headset: HeadsetPage) -> None:
        while True:
            data = await headset.socket.recv()
            received_ns = time.time_ns()
            if not isinstance(data, bytes):
                continue
            await headset.send({"etype": FRAME_TAKEN, "ts": float(time.time_ns() // 1_000_000), "value": len(data)})
            event = msgpack.unpackb(data, raw=False)
            camera = event.get("camera")
            if event.get("etype") != "UPSERT" or not isinstance(camera, dict):
                continue
            if len(frames) % CHECK_EVERY == 0:
                frame = video_frame(event, received_ns)
                if frame is None or frame.left.shape != (480, 640, 3) or frame.right.shape != frame.left.shape:
                    raise BenchError(f"the page got eye images of {frame and frame.left.shape}")
            frames.append([int(camera["seq"]), int(camera["stamp_ns"]), int(camera["sent_ns"]), received_ns])

    async def run() -> None:
        nonlocal start_ns
        async with HeadsetPage(f"wss://127.0.0.1:{port}/", page_ssl_context(ca_file)) as headset:
            start_ns = time.time_ns()
            await headset.while_watching(stream(headset, time.monotonic() + seconds), watch)

    asyncio.run(run())
    print(json.dumps({"start_ns": start_ns, "frames": frames}))


if __name__ == "__main__":
    page(int(sys.argv[1]), sys.argv[2], float(sys.argv[3]))
