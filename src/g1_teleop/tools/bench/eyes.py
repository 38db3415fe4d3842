"""`g1-teleop bench eyes`: the eye cameras. The renderer alone (both eyes at 640×480, JPEG coding), then the
simulation graph with and without the eyes node, lockstep and real time: frames published and delivered to this
process per wall second, state → image and publish → receive latency, and the simulation's speed."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable

import numpy as np

from g1_teleop.tools.bench.figures import BenchError, percentiles

EYES_BENCH_DOMAIN_ID = 227  # the bench's own ROS domain: never a robot's (0), the tests' (1–200) nor the other benches'
WARM_UP_S = 3.0
# What a headset's server subscribes to (the eyes make only the subscribed forms), and what RViz would.
HEADSET = ("camera/left/image_raw/compressed", "camera/right/image_raw/compressed")  # vuer: one layer per eye
STEREO = ("camera/stereo/image_raw/compressed",)  # one side-by-side JPEG (OpenWBT's stream)
RAW = ("camera/left/image_raw", "camera/right/image_raw")


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used, its threads included."""
    import psutil

    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def _renderer_figures(frames: int) -> dict[str, float]:
    """Both eyes rendered in this process (the reaching pose of the unit test), and their JPEGs coded."""
    from g1_teleop.core.camera_images import encode_jpeg, side_by_side
    from g1_teleop.core.robot_description import load_robot
    from g1_teleop.sim.eye_renderer import EyeRenderer, choose_gl_backend

    robot = load_robot()
    start = time.perf_counter()
    backend = choose_gl_backend()
    probe_s = time.perf_counter() - start
    renderer = EyeRenderer(robot, 640, 480, backend)
    try:
        q = robot.default_q.copy()
        q[robot.joint_names.index("left_shoulder_pitch_joint")] = -1.2
        renderer.set_pose(q)
        renders, eye_jpegs, stereo_jpegs, sizes = [], [], [], []
        for _ in range(frames):
            t0 = time.perf_counter()
            left, right = renderer.render_both()
            t1 = time.perf_counter()
            eye = encode_jpeg(left)
            t2 = time.perf_counter()
            stereo = encode_jpeg(side_by_side(left, right))
            t3 = time.perf_counter()
            renders.append(t1 - t0)
            eye_jpegs.append(t2 - t1)
            stereo_jpegs.append(t3 - t2)
            sizes.append((len(eye), len(stereo)))
    finally:
        renderer.close()
    return {"gl_probe_ms": round(probe_s * 1e3, 1), **percentiles("render_both_eyes", renders),
            **percentiles("jpeg_eye", eye_jpegs), **percentiles("jpeg_stereo", stereo_jpegs),
            "jpeg_eye_kB": round(float(np.mean([s[0] for s in sizes])) / 1e3, 1),
            "jpeg_stereo_kB": round(float(np.mean([s[1] for s in sizes])) / 1e3, 1)}


def graph_run(eyes: bool, lockstep: bool, images: tuple[str, ...], seconds: float,
              domain_id: int = EYES_BENCH_DOMAIN_ID) -> dict[str, float]:
    """The simulation graph (builtin controller, gantry: the robot stands whatever the machine's load) on ROS domain
    ``domain_id``, with ``images`` subscribed here when the eyes run. Over ``seconds`` after a warm-up: simulated
    seconds per wall second (/clock); frames the eyes published per wall second (their diagnostics); each topic's
    messages received here per wall second (a loaded receiver drops some: depth 1); state → image latency (the
    image's arrival here after that of the joint_states it shows) and publish → receive (DDS source timestamp)."""
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.executors import SingleThreadedExecutor
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import CameraInfo, CompressedImage, Image, JointState

    from g1_teleop.launching.graph_description import load_graph
    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.ros.image_messages import QOS_IMAGE
    from g1_teleop.ros.messages import stamp_ns
    from g1_teleop.ros.qos import QOS_OBSERVER

    env = {"ROS_DOMAIN_ID": str(domain_id), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    log: list[str] = []
    nodes = load_graph("sim").resolve({"eyes": str(eyes).lower(), "lockstep": str(lockstep).lower(), "gantry": "true"})
    graph = GraphProcesses(nodes, env=env, output=log.append)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain_id)
    node = rclpy.create_node("bench_eyes", context=context)
    heard: dict[str, list[tuple[float, int, int]]] = defaultdict(list)  # (monotonic s, stamp ns, latency ns)

    def keep(topic: str) -> Callable:
        def callback(msg, info) -> None:
            now_ns = time.time_ns()
            stamp = stamp_ns(msg.clock if topic == "/clock" else msg.header.stamp)
            heard[topic].append((time.monotonic(), stamp, now_ns - (info["source_timestamp"] or now_ns)))
        return callback

    published: list[tuple[float, int]] = []  # (monotonic s, the eyes' frames_published)

    def on_diagnostics(msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name.endswith("/eyes"):
                published.extend((time.monotonic(), int(v.value)) for v in status.values if v.key == "frames_published")

    node.create_subscription(DiagnosticArray, "diagnostics", on_diagnostics, 10)
    node.create_subscription(Clock, "/clock", keep("/clock"), QOS_OBSERVER)
    node.create_subscription(JointState, "joint_states", keep("joint_states"), QOS_OBSERVER)
    if eyes:
        for topic in images:
            node.create_subscription(Image if topic in RAW else CompressedImage, topic, keep(topic), QOS_IMAGE)
        node.create_subscription(CameraInfo, "camera/left/camera_info", keep("camera_info"), QOS_IMAGE)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    first = images[0] if eyes else "/clock"
    cpu: list[float] = []  # the eyes' CPU seconds (user + system) at the window's start and end
    try:
        graph.start()
        deadline = time.monotonic() + 90.0
        while not heard[first] or time.monotonic() - heard[first][0][0] < WARM_UP_S + seconds:
            if eyes and heard[first] and len(cpu) == 0 and time.monotonic() - heard[first][0][0] >= WARM_UP_S:
                cpu.append(_cpu_s(graph.pid("eyes")))
            if (failure := graph.check()) is not None:
                raise BenchError(f"{failure}: " + "\n".join(log[-10:]))
            if not heard[first] and time.monotonic() > deadline:
                raise BenchError(f"nothing on {first} within 90 s (eyes {eyes}): " + "\n".join(log[-10:]))
            executor.spin_once(timeout_sec=0.005)
        if eyes:
            cpu.append(_cpu_s(graph.pid("eyes")))
    finally:
        graph.stop()
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()
    start = heard[first][0][0] + WARM_UP_S
    window = {topic: [a for a in arrivals if start <= a[0] < start + seconds] for topic, arrivals in heard.items()}
    clock = np.array([(a[0], a[1]) for a in window["/clock"]])
    name = f"{'lockstep' if lockstep else 'realtime'}_{'eyes' if eyes else 'no_eyes'}"
    figures = {f"{name}_sim_speed": round(float((clock[-1, 1] - clock[0, 1]) * 1e-9 / (clock[-1, 0] - clock[0, 0])), 3)}
    if eyes:
        states = {a[1]: a[0] for a in heard["joint_states"]}
        for topic in (*images, "camera_info"):
            short = topic.removeprefix("camera/").replace("/image_raw", "").replace("/", "_")
            figures[f"{name}_{short}_fps"] = round(len(window[topic]) / seconds, 2)
        counts = np.array([p for p in published if start <= p[0] < start + seconds])
        (t0, n0), (t1, n1) = counts[0], counts[-1]
        figures[f"{name}_published_fps"] = round(float((n1 - n0) / (t1 - t0)), 2)
        # CPU time is what a frame costs whatever else runs: the wall-clock rates above depend on the load
        figures[f"{name}_eyes_cpu_cores"] = round((cpu[1] - cpu[0]) / seconds, 2)
        frames = figures[f"{name}_published_fps"] * seconds
        figures[f"{name}_eyes_cpu_per_frame_ms"] = round((cpu[1] - cpu[0]) / frames * 1e3, 1) if frames else 0.0
        images_seen = window[images[0]]
        figures.update(percentiles(f"{name}_state_to_image", [t - states[s] for t, s, _ in images_seen if s in states]))
        figures.update(percentiles(f"{name}_publish_to_receive", [lat * 1e-9 for _, _, lat in images_seen]))
        figures[f"{name}_stamps_matching_joint_states"] = round(
            float(np.mean([s in states for _, s, _ in images_seen])) if images_seen else 0.0, 3)
    return figures


def bench_eyes(frames: int = 60, seconds: float = 15.0) -> dict[str, float]:
    """The renderer alone, then the graph: lockstep and real time, without and with the eyes (each eye's JPEG
    subscribed, as a headset's server would), and lockstep with the stereo JPEG alone and with both raw images."""
    figures: dict[str, float] = {"frames": frames, **_renderer_figures(frames)}
    for lockstep in (True, False):
        for eyes in (False, True):
            figures.update(graph_run(eyes, lockstep, HEADSET, seconds))
    for label, images in (("stereo", STEREO), ("raw", RAW)):
        run = graph_run(True, True, images, seconds)
        figures.update({key.replace("lockstep_eyes", f"lockstep_{label}_eyes"): value for key, value in run.items()})
    figures["seconds"] = seconds
    return figures
