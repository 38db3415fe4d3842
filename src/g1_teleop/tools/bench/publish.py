"""`g1-teleop bench publish`: how long a ROS publish can stall its whole process when a subscriber dies.

rclpy publishes with the GIL held, so a publish that blocks inside Fast DDS stops every Python thread of
the publishing process (in hw_bridge: the LowCmd loop). For each transport choice (Fast DDS's default,
shared memory + UDP; and UDPv4 only, what hw_bridge uses), a publisher process sends a JointState and an
Imu every 5 ms, reliable, depth 5 (hw_bridge's pattern), while a second thread of it ticks every 2 ms (the
LowCmd loop's pattern); a subscriber process is started and SIGKILLed ``kills`` times, with two busy
processes loading the 2 cores. Figures per transport: the longest publish and the longest gap of the 2 ms
thread (ms), and the publishes over 50 ms. Runs on its own ROS domain, localhost only.

Then, without the load, what one publish of that JointState costs this process (``publish_cost_*``, µs p50/p99):
back to back (``hot``) and after 20 ms asleep (``after_idle``, a 50 Hz node's pattern), with no subscriber and with
three in other processes (``subs0``, ``subs3``). On this project's 2-core VM the second is 10–20 × the first (200–300
µs for a publish without subscribers: the publish path's code and data gone cold in the caches while the process
slept), which is what each hop of the graph pays.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING

from g1_teleop.tools.bench.figures import BenchError

if TYPE_CHECKING:
    from rclpy.qos import QoSProfile
    from sensor_msgs.msg import JointState

DOMAIN_ID = 228  # the bench's own domain: never a robot's (0), the tests' (1–200) nor the other benches'
TRANSPORTS = {"shared_memory": None, "udp": "UDPv4"}  # FASTDDS_BUILTIN_TRANSPORTS: None = Fast DDS's default


def _qos() -> QoSProfile:
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=5, reliability=ReliabilityPolicy.RELIABLE)


def _joints() -> JointState:
    """The published JointState: 29 joints, as hw_bridge's joint_states."""
    from sensor_msgs.msg import JointState

    return JointState(name=[f"joint_{i}" for i in range(29)], position=[0.0] * 29, velocity=[0.0] * 29,
                      effort=[0.0] * 29)


def publisher(seconds: float) -> None:
    """Publish for ``seconds``; print the figures as JSON."""
    import rclpy
    from sensor_msgs.msg import Imu, JointState

    rclpy.init()
    node = rclpy.create_node("bench_publisher")
    joints_pub = node.create_publisher(JointState, "joint_states", _qos())
    imu_pub = node.create_publisher(Imu, "imu", _qos())
    joints = _joints()
    end = time.monotonic() + seconds
    gaps: list[float] = []

    def tick() -> None:
        last = time.monotonic()
        while time.monotonic() < end:
            time.sleep(0.002)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    publishes: list[float] = []
    while time.monotonic() < end:
        start = time.perf_counter()
        joints_pub.publish(joints)
        imu_pub.publish(Imu())
        publishes.append(time.perf_counter() - start)
        time.sleep(0.005)
    ticker.join()
    print(json.dumps({"publish_max_ms": round(max(publishes) * 1e3, 1),
                      "publishes_over_50ms": sum(p > 0.05 for p in publishes),
                      "thread_gap_max_ms": round(max(gaps) * 1e3, 1)}))
    node.destroy_node()
    rclpy.shutdown()


def subscriber() -> None:
    """Subscribe until killed."""
    import rclpy
    from sensor_msgs.msg import Imu, JointState

    rclpy.init()
    node = rclpy.create_node("bench_subscriber")
    node.create_subscription(JointState, "joint_states", lambda _: None, _qos())
    node.create_subscription(Imu, "imu", lambda _: None, _qos())
    rclpy.spin(node)


def publish_cost(env: dict[str, str], module: list[str], samples: int = 300) -> dict[str, float]:
    """One JointState publish's time (µs p50/p99), hot and after 20 ms asleep, with 0 and 3 subscriber processes."""
    import numpy as np
    import rclpy
    from sensor_msgs.msg import JointState

    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN_ID)
    node = rclpy.create_node("bench_publish_cost", context=context)
    pub = node.create_publisher(JointState, "joint_states", _qos())
    joints = _joints()
    figures: dict[str, float] = {}
    subscribers: list[subprocess.Popen] = []
    try:
        for count in (0, 3):
            subscribers += [subprocess.Popen([*module, "subscriber"], env=env, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL) for _ in range(count - len(subscribers))]
            deadline = time.monotonic() + 30.0
            while pub.get_subscription_count() < count:
                if time.monotonic() > deadline:
                    raise BenchError(f"{count} subscriber processes did not match within 30 s")
                time.sleep(0.1)
            time.sleep(1.0)
            for kind, sleep_s in (("hot", 0.0), ("after_idle", 0.02)):
                times = []
                for _ in range(samples):
                    start = time.perf_counter()
                    pub.publish(joints)
                    times.append(time.perf_counter() - start)
                    time.sleep(sleep_s)
                p50, p99 = np.percentile(np.array(times[10:]) * 1e6, [50, 99])
                figures.update({f"publish_cost_{kind}_subs{count}_p50_us": round(float(p50), 1),
                                f"publish_cost_{kind}_subs{count}_p99_us": round(float(p99), 1)})
    finally:
        for process in subscribers:
            process.kill()
            process.wait()
        node.destroy_node()
        context.try_shutdown()
    return figures


def bench_publish(kills: int = 25) -> dict[str, float]:
    env = {**os.environ, "ROS_DOMAIN_ID": str(DOMAIN_ID), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    module = [sys.executable, "-m", "g1_teleop.tools.bench.publish"]
    seconds = 2.0 + kills * 2.5
    load = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    figures: dict[str, float] = {"kills": kills}
    try:
        for name, transports in TRANSPORTS.items():
            pub_env = dict(env)
            pub_env.pop("FASTDDS_BUILTIN_TRANSPORTS", None)
            if transports:
                pub_env["FASTDDS_BUILTIN_TRANSPORTS"] = transports
            pub = subprocess.Popen([*module, "publisher", str(seconds)], env=pub_env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
            time.sleep(1.0)
            for k in range(kills):
                sub = subprocess.Popen([*module, "subscriber"], env=env, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
                time.sleep(2.0 + 0.1 * (k % 5))  # matched and receiving, then killed at varied moments
                sub.kill()
                sub.wait()
            out, _ = pub.communicate(timeout=seconds + 30)
            try:
                result = json.loads(out.strip().splitlines()[-1])
            except (IndexError, ValueError):
                raise BenchError(f"the {name} publisher failed:\n{out[-2000:]}") from None
            figures.update({f"{name}_{key}": value for key, value in result.items()})
    finally:
        for process in load:
            process.kill()
    figures.update(publish_cost(env, module))
    return figures


if __name__ == "__main__":
    if sys.argv[1] == "publisher":
        publisher(float(sys.argv[2]))
    else:
        subscriber()
