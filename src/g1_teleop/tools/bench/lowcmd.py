"""`g1-teleop bench lowcmd`: the hardware bridge's LowCmd path, measured against the virtual robot.

Runs the virtual robot (on its gantry) and hw_bridge as separate processes, the robot's topics on
CycloneDDS over lo, the ROS side on a private domain with localhost-only discovery (so nothing here can
reach a robot or a graph on the network). Figures:

* ``encode_crc``: packing one LowCmd with its CRC and its CDR bytes, this process (µs);
  ``write``: handing those bytes to CycloneDDS with the virtual robot's reader matched (µs). Measured
  before the bridge starts, at 500 Hz, with zero-gain commands.
* ``lowcmd_period``: time between LowCmd arrivals at a probe on the robot's domain, at 500 Hz, while the
  bridge is ACTIVE (ms); ``lowcmd_jitter_p99_ms`` is the 99th percentile of |period − 2 ms|.
  ``lowcmd_written_period`` and ``lowcmd_written_jitter_p99_ms``: the same from the LowCmds' DDS source timestamps,
  the bridge's writes alone (the arrivals add the probe's own wake-ups, on cores it shares with the virtual robot
  and the bridge). ``bridge_*``
  are the bridge's own figures from its diagnostics (its loop period and tick time; the CPU use of the LowCmd
  loop, of the LowCmd process and of the ROS side: ``bridge_process_cpu_percent``).
* ``command_latency``: this process publishes joint_command at 50 Hz, each with a distinct left elbow
  target; the latency is from the publish to the arrival of the first LowCmd that carries it (ms), over
  every phase of the 2 ms loop (``COMMAND_PERIOD_S``).

``G1_TELEOP_BENCH_LOWCMD_PRIORITY=P`` runs the bridge as a robot's computer would (the graph's priorities under P:
``lowcmd_priority:=P``, ``control_priority:=P-10``) and the virtual robot and this process's probe, which stand for
the robot, at SCHED_FIFO P; ``priority`` in the figures (0: normal scheduling).
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from g1_teleop.core.realtime_loop import Pacer
from g1_teleop.core.realtime_priority import use_fifo_scheduling
from g1_teleop.tools.bench.figures import BenchError, jitter_p99_ms, percentiles, require_robot_sdk

if TYPE_CHECKING:
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.client import Client
    from rclpy.context import Context

    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.tools.robot_probe import LowCmdSample, RobotProbe

ROS_DOMAIN_ID = 231  # the bench's own domains: never a robot's (0) nor the tests' (1–200)
ROBOT_DOMAIN_ID = 230
ELBOW = "left_elbow_joint"
ELBOW_STEP_RAD = 1e-5  # distinct targets, 0–999 steps above the default: 20 s of them (float32: 84 ulp a step)
MAX_LATENCY_S = 0.5  # a command whose LowCmd has not come by then counts as lost
# 50 Hz, but 0.3 ms longer: a command's wait for the next 2 ms LowCmd tick sweeps the whole period every
# 7 commands. At exactly 20 ms (ten ticks) the phase between publisher and loop hardly moves, and a run's
# latency would be that one phase's (measured: p50 1.2 to 3.3 ms between runs of the same code).
COMMAND_PERIOD_S = 0.0203
PRIORITY_ENV = "G1_TELEOP_BENCH_LOWCMD_PRIORITY"
LOWCMD_PERIOD_S = 0.002  # the bridge's 500 Hz


def _encode_and_write(probe: RobotProbe, writes: int) -> dict[str, float]:
    """Pack + CRC + CDR, then the DDS write, of zero-gain LowCmds at 500 Hz to the virtual robot."""
    from g1_teleop.core.limits import JointCommand
    from g1_teleop.hardware.lowcmd import NUM_BODY_JOINTS, LowCmdEncoder
    from g1_teleop.hardware.robot_dds import TOPIC_LOWCMD, DdsError
    from g1_teleop.tools.virtual_robot import DEFAULT_MODE_MACHINE

    writer = probe.dds.raw_writer(TOPIC_LOWCMD)
    zero = JointCommand.damping(NUM_BODY_JOINTS, 0.0)
    encoder = LowCmdEncoder()  # (hw_bridge's LowCmd loop encodes so)
    encode, write = [], []
    pacer = Pacer(LOWCMD_PERIOD_S, max_lag_s=math.inf)
    for _ in range(writes):
        pacer.wait()
        t0 = time.perf_counter()
        cdr = encoder.encode(zero, DEFAULT_MODE_MACHINE)
        t1 = time.perf_counter()
        try:
            writer.write(cdr)
        except DdsError as exc:
            raise BenchError(f"CycloneDDS refused a LowCmd write on lo: {exc}") from None
        write.append(time.perf_counter() - t1)
        encode.append(t1 - t0)
    writer.close()  # (the bridge is the one LowCmd writer from here on)
    total = np.asarray(encode) + np.asarray(write)
    figures: dict[str, float] = {"writes": writes}
    for name, samples in (("encode_crc", encode), ("write", write), ("encode_crc_write", list(total))):
        figures.update(percentiles(name, samples, "us", 2, with_max=False))
    return figures


class _Operator:
    """The bench's ROS node: the bridge's state from diagnostics, its services, and a 50 Hz policy."""

    def __init__(self, context: Context, joint_names: tuple[str, ...], default_q: np.ndarray) -> None:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState
        from std_srvs.srv import Trigger

        from g1_teleop.ros.qos import QOS_COMMAND, QOS_STATE

        self._trigger, self._joint_state = Trigger, JointState
        self.node = rclpy.create_node("bench_lowcmd", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.state = ""
        self.figures: dict[str, str] = {}
        self.node.create_subscription(DiagnosticArray, "diagnostics", self._on_diagnostics, QOS_STATE)
        self.publisher = self.node.create_publisher(JointState, "joint_command", QOS_COMMAND)
        self.names, self.default_q = list(joint_names), default_q
        self.elbow = self.names.index(ELBOW)
        self.published: list[tuple[float, float]] = []  # (time.monotonic() before publish, elbow target)
        self.publishing = threading.Event()
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._policy, daemon=True)
        self._thread.start()

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name.endswith("hw_bridge"):
                self.state = status.message.split(":")[0]
                values = {kv.key: kv.value for kv in status.values}
                if "lowcmd_period_p99_ms" in values:
                    self.figures = values

    def _policy(self) -> None:
        k, pacer = 0, Pacer(COMMAND_PERIOD_S, max_lag_s=math.inf)
        while not self._closing.is_set():
            pacer.wait()
            if self.publishing.is_set():
                q = self.default_q.copy()
                q[self.elbow] += ELBOW_STEP_RAD * (k % 1000)
                k += 1
                self.published.append((time.monotonic(), float(q[self.elbow])))
                self.publisher.publish(self._joint_state(name=self.names, position=q.tolist()))

    def spin_until(self, condition: Callable[[], bool], timeout_s: float, graph: GraphProcesses, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if (failure := graph.check()) is not None:
                raise BenchError(f"{failure} while waiting for {what}")
            if time.monotonic() > deadline:
                raise BenchError(f"no {what} within {timeout_s:g} s (bridge state: {self.state or 'unknown'})")
            self.executor.spin_once(timeout_sec=0.01)

    def call(self, service: str, graph: GraphProcesses) -> None:
        client: Client = self.node.create_client(self._trigger, service)
        self.spin_until(client.service_is_ready, 30.0, graph, f"service {service}")
        future = client.call_async(self._trigger.Request())
        self.spin_until(future.done, 5.0, graph, f"an answer from {service}")
        result = future.result()
        if result is None or not result.success:
            raise BenchError(f"{service} refused: {'no answer' if result is None else result.message}")

    def close(self) -> None:
        self._closing.set()
        self._thread.join(timeout=1.0)
        self.executor.shutdown()
        self.node.destroy_node()


def _latencies(published: list[tuple[float, float]], lowcmds: list[LowCmdSample],
               elbow: int) -> tuple[list[float], int]:
    """Publish → first LowCmd carrying that elbow target (float32 in the LowCmd); and how many did not come
    within MAX_LATENCY_S (a newer command replaced them before the bridge's executor took them)."""
    times = np.array([s.t for s in lowcmds])
    elbows = np.array([s.q[elbow] for s in lowcmds])
    latencies, missing = [], 0
    for t_pub, value in published:
        start = int(np.searchsorted(times, t_pub, side="right"))
        end = int(np.searchsorted(times, t_pub + MAX_LATENCY_S, side="right"))
        hits = np.flatnonzero(np.abs(elbows[start:end] - value) < ELBOW_STEP_RAD / 4)
        if len(hits):
            latencies.append(float(times[start + hits[0]] - t_pub))
        else:
            missing += 1
    return latencies, missing


def bench_lowcmd(seconds: float = 5.0, writes: int = 2500) -> dict[str, float]:
    import rclpy

    from g1_teleop.core.robot_description import load_robot
    from g1_teleop.hardware.robot_dds import TOPIC_LOWCMD
    from g1_teleop.launching.graph_description import load_graph
    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.tools.robot_probe import RobotProbe
    from g1_teleop.tools.virtual_graph import GraphPriorities

    require_robot_sdk()
    robot = load_robot()
    priority = _priority(os.environ.get(PRIORITY_ENV, ""))
    env = {"ROS_DOMAIN_ID": str(ROS_DOMAIN_ID), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    nodes = load_graph("real").resolve({"robot": "virtual", "network_interface": "lo",
                                        "robot_domain_id": str(ROBOT_DOMAIN_ID), "controller": "hold",
                                        "command_timeout_s": "0.25",
                                        **GraphPriorities.under(priority).arguments()})
    nodes = [n if n.name != "hw_bridge" else dataclasses.replace(
        n, parameters={**n.parameters, "ramp_duration_s": 0.5, "activate_blend_s": 0.0})
        for n in nodes if n.name in ("virtual_robot", "hw_bridge")]
    log: list[str] = []
    graph = GraphProcesses([n for n in nodes if n.name == "virtual_robot"], env=env, output=log.append)
    bridge = GraphProcesses([n for n in nodes if n.name == "hw_bridge"], env=env, output=log.append)
    if priority and (refused := use_fifo_scheduling(priority, "bench lowcmd's probe")) is not None:
        raise BenchError(f"{PRIORITY_ENV}={priority}: {refused}")
    probe = RobotProbe(ROBOT_DOMAIN_ID)  # (its DDS threads inherit the priority)
    written = probe.dds.raw_reader(TOPIC_LOWCMD, history=round((seconds + 5.0) * 1000))  # 2× the LowCmds of the window
    os.environ.update(env)  # this process's ROS side too
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ROS_DOMAIN_ID)
    operator = None
    try:
        graph.start()
        deadline = time.monotonic() + 60.0
        while not probe.lowstate_times:
            if time.monotonic() > deadline or graph.check():
                raise BenchError("the virtual robot published no LowState within 60 s:\n" + "\n".join(log[-20:]))
            time.sleep(0.05)
        figures = _encode_and_write(probe, writes)
        bridge.start()
        operator = _Operator(context, robot.joint_names, robot.default_q)
        operator.spin_until(lambda: operator.state == "ZERO_TORQUE", 60.0, bridge, "ZERO_TORQUE")
        operator.call("hw_bridge/start", bridge)
        operator.spin_until(lambda: operator.state == "HOLD", 5.0, bridge, "HOLD")
        operator.publishing.set()
        operator.spin_until(lambda: len(operator.published) > 5, 2.0, bridge, "joint_command")
        operator.call("hw_bridge/activate", bridge)
        operator.spin_until(lambda: operator.state == "ACTIVE", 2.0, bridge, "ACTIVE")
        window_start = time.monotonic()
        written.take_timed()  # (the window's writes from here)
        operator.published.clear()
        operator.spin_until(lambda: time.monotonic() - window_start > seconds, seconds + 5.0, bridge, "the end")
        if operator.state != "ACTIVE":
            raise BenchError(f"the bridge left ACTIVE during the measurement ({operator.state}):\n"
                             + "\n".join(log[-20:]))
        published = [p for p in operator.published if p[0] < time.monotonic() - 0.2]  # their LowCmds are in
        lowcmds = [s for s in probe.lowcmds if s.t >= window_start]
        written_periods = np.diff([t for _, t in written.take_timed()])
        bridge_figures = dict(operator.figures)
    finally:
        if operator is not None:
            operator.publishing.clear()
            operator.close()
        bridge.stop()
        graph.stop()
        probe.close()
        context.try_shutdown()
    arrivals = np.diff([s.t for s in lowcmds])
    latencies, missing = _latencies(published, lowcmds, robot.joint_names.index(ELBOW))
    if not latencies:
        raise BenchError("no joint_command reached a LowCmd")
    return {
        **figures,
        **percentiles("lowcmd_period", list(arrivals), "ms", 3),
        "lowcmd_jitter_p99_ms": jitter_p99_ms(arrivals, LOWCMD_PERIOD_S),
        **percentiles("lowcmd_written_period", list(written_periods), "ms", 3),
        "lowcmd_written_jitter_p99_ms": jitter_p99_ms(written_periods, LOWCMD_PERIOD_S),
        **percentiles("command_latency", latencies, "ms", 3),
        "commands": len(published), "commands_without_lowcmd": missing,
        **{f"bridge_{key}": float(bridge_figures[key]) for key in (
            "lowcmd_period_p50_ms", "lowcmd_period_p99_ms", "lowcmd_tick_p50_us", "lowcmd_tick_p99_us",
            "lowcmd_loop_cpu_percent", "lowcmd_process_cpu_percent", "process_cpu_percent") if key in bridge_figures},
        "seconds": seconds, "priority": priority,
    }


def _priority(text: str) -> int:
    """``PRIORITY_ENV``'s value: 0 (unset or empty) or a SCHED_FIFO priority; BenchError naming the variable."""
    try:
        priority = int(text.strip() or 0)
    except ValueError:
        raise BenchError(f"{PRIORITY_ENV}={text!r}: give a whole number 0–99") from None
    if not 0 <= priority <= 99:
        raise BenchError(f"{PRIORITY_ENV}={text!r}: give 0 (normal scheduling) or a SCHED_FIFO priority 1–99")
    return priority
