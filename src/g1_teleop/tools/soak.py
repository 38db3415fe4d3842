"""`g1-teleop soak`: the real-time graph against the virtual robot for hours, ACTIVE, the scenario on loop.

Starts ``real`` with ``robot:=virtual`` on loopback (the robot's topics on a private CycloneDDS domain, the ROS side
on a private domain with localhost-only discovery: nothing here reaches a robot or a graph on the network), brings
the bridge up as an operator does (start, activate once the policy's commands arrive) and plays the scenario again
each time it ends. Every ``interval_s`` it prints one line of figures of that interval:

* ``rss_mb``: the resident memory of every process of the graph (hw_bridge's LowCmd process as ``hw_bridge/lowcmd``);
* ``joint_command``: arrivals at this process, their period p99 (ms) and ``misses`` (periods over 1.5 × 20 ms);
* ``lowcmd``: LowCmd arrivals at a probe on the robot's domain, period p99 (ms) and ``misses`` (over 2 × 2 ms);
* ``trips``: safety transitions to DAMP since the start (goal 0), and the bridge's state.

At the end: each process's memory growth from the first interval to the last (%, goal < 5), the totals, and the exit
code 0 only if nothing tripped and every node lived. Times: wall seconds (monotonic).
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

ROS_DOMAIN_ID = 229  # the soak's own domains: never a robot's (0), the tests' (1–200) or the benches' (230, 231);
ROBOT_DOMAIN_ID = 228  # DDS ports (7400 + 250 · domain + …) leave nothing above 232
COMMAND_PERIOD_S, LOWCMD_PERIOD_S = 0.02, 0.002
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*(h|m|s)?\s*$")


def parse_duration(text: str) -> float:
    """Seconds of '1h', '10m', '90s' or '90'."""
    match = _DURATION.match(text)
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"duration {text!r}: give a positive number with h, m or s (e.g. 1h, 10m, 90s)")
    return float(match.group(1)) * {"h": 3600.0, "m": 60.0, "s": 1.0, None: 1.0}[match.group(2)]


@dataclass(frozen=True)
class SoakConfig:
    duration_s: float
    interval_s: float = 60.0
    controller: str = "builtin"
    scenario: str = "default"
    ros_domain_id: int = ROS_DOMAIN_ID
    robot_domain_id: int = ROBOT_DOMAIN_ID
    state_timeout_s: float | None = None  # hw_bridge's LowState timeout; None: the bridge's default

    def __post_init__(self) -> None:
        if not 0 < self.interval_s <= self.duration_s:
            raise ValueError(f"--interval ({self.interval_s:g} s) must be positive and at most --duration "
                             f"({self.duration_s:g} s)")


@dataclass
class _Arrivals:
    """Arrival times (monotonic s) of one stream since the last take."""

    times: list[float] = field(default_factory=list)
    last: float | None = None

    def take(self, nominal_s: float, miss_factor: float) -> dict[str, float]:
        times, self.times = self.times, []
        stamps = ([self.last] if self.last is not None else []) + times
        if times:
            self.last = times[-1]
        periods = np.diff(stamps) if len(stamps) > 1 else np.zeros(0)
        return {"count": len(times),
                "period_p99_ms": round(float(np.percentile(periods, 99)) * 1e3, 2) if len(periods) else None,
                "misses": int(np.sum(periods > miss_factor * nominal_s))}


def process_memory_mb(pids: dict[str, int]) -> dict[str, float]:
    """Resident memory (MB) of each named process and of the processes it started (``name/child``)."""
    import psutil

    out: dict[str, float] = {}
    for name, pid in pids.items():
        try:
            process = psutil.Process(pid)
            out[name] = round(process.memory_info().rss / 2**20, 1)
            for child in process.children(recursive=True):
                label = f"{name}/lowcmd" if name == "hw_bridge" else f"{name}/{child.pid}"
                out[label] = round(child.memory_info().rss / 2**20, 1)
        except psutil.NoSuchProcess:
            out[name] = float("nan")
    return out


def memory_growth_percent(first: dict[str, float], last: dict[str, float]) -> dict[str, float]:
    return {name: round(100.0 * (last[name] - mb) / mb, 2) for name, mb in first.items() if name in last and mb > 0}


def run_soak(cfg: SoakConfig, emit: Callable[[str], None] = print) -> dict:
    """Run the soak (module doc); the figures of every interval and the totals."""
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    from std_srvs.srv import Trigger

    from g1_teleop.core.paths import scenario_path
    from g1_teleop.hardware.robot_dds import TOPIC_LOWCMD, RobotDds
    from g1_teleop.launching.graph_description import load_graph
    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.operator.scenario import Scenario
    from g1_teleop.ros.qos import QOS_COMMAND

    scenario_s = Scenario.load(scenario_path(cfg.scenario)).duration
    env = {"ROS_DOMAIN_ID": str(cfg.ros_domain_id), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    nodes = load_graph("real").resolve({"robot": "virtual", "network_interface": "lo",
                                        "robot_domain_id": str(cfg.robot_domain_id), "controller": cfg.controller,
                                        "scenario": cfg.scenario})
    if cfg.state_timeout_s is not None:
        nodes = [dataclasses.replace(n, parameters={**n.parameters, "state_timeout_s": cfg.state_timeout_s})
                 if n.name == "hw_bridge" else n for n in nodes]
    log: list[str] = []
    graph = GraphProcesses(nodes, env=env, output=log.append)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=cfg.ros_domain_id)
    node = rclpy.create_node("soak", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    commands, state = _Arrivals(), {"bridge": "none"}
    node.create_subscription(JointState, "joint_command", lambda _: commands.times.append(time.monotonic()),
                             QOS_COMMAND)

    def on_diagnostics(msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name.endswith("hw_bridge"):
                state["bridge"] = status.message.split(":")[0]

    node.create_subscription(DiagnosticArray, "diagnostics", on_diagnostics, 10)
    clients = {name: node.create_client(Trigger, name) for name in ("hw_bridge/start", "hw_bridge/activate",
                                                                    "xr_input/play")}

    def spin_until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if (failure := graph.check()) is not None:
                raise RuntimeError(f"{failure}; its last lines:\n" + "\n".join(log[-20:]))
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} within {timeout_s:g} s; the graph's last lines:\n" + "\n".join(log[-20:]))
            executor.spin_once(timeout_sec=0.01)

    def call(name: str) -> Trigger.Response:
        spin_until(clients[name].service_is_ready, 60.0, f"no service {name}")
        future = clients[name].call_async(Trigger.Request())
        spin_until(future.done, 5.0, f"no answer from {name}")
        return future.result()

    def spin_for(seconds: float) -> None:
        deadline = time.monotonic() + seconds
        spin_until(lambda: time.monotonic() >= deadline, seconds + 1.0, "")

    lowcmds = _Arrivals()
    robot_dds = RobotDds(cfg.robot_domain_id, "lo")  # arrival times only: decoding 500 LowCmds a second costs CPU
    robot_dds.raw_reader(TOPIC_LOWCMD, on_samples=lambda samples, t: lowcmds.times.extend(t for _ in samples))
    intervals: list[dict] = []
    graph.start()
    try:
        spin_until(lambda: state["bridge"] == "ZERO_TORQUE", 90.0, "hw_bridge did not reach ZERO_TORQUE")
        if not (answer := call("hw_bridge/start")).success:
            raise RuntimeError(f"hw_bridge/start refused: {answer.message}")
        spin_until(lambda: state["bridge"] == "HOLD", 10.0, "hw_bridge did not reach HOLD")
        spin_until(lambda: call("hw_bridge/activate").success, 30.0, "hw_bridge did not activate")
        emit(f"soak: ACTIVE against the virtual robot, controller {cfg.controller}, scenario {cfg.scenario} "
             f"({scenario_s:g} s, on loop) for {cfg.duration_s:g} s; a line every {cfg.interval_s:g} s")
        start = next_play = time.monotonic()
        commands.times.clear(), lowcmds.times.clear()  # (the figures are those of ACTIVE)
        while len(intervals) * cfg.interval_s < cfg.duration_s - 1e-9:
            now = time.monotonic()
            if now >= next_play:
                call("xr_input/play")
                next_play = now + scenario_s
            boundary = start + (len(intervals) + 1) * cfg.interval_s
            if now < boundary:
                spin_for(min(next_play, boundary) - now)
                continue
            trips = [line for line in log if "→ DAMP" in line]
            figures = {"t_s": round(now - start, 1), "state": state["bridge"], "trips": len(trips),
                       "trip_lines": trips[-3:],
                       "joint_command": commands.take(COMMAND_PERIOD_S, 1.5),
                       "lowcmd": lowcmds.take(LOWCMD_PERIOD_S, 2.0),
                       "rss_mb": process_memory_mb({name: graph.pid(name) for name in graph.alive()})}
            intervals.append(figures)
            emit(json.dumps(figures))
    finally:
        alive = graph.alive()
        codes = graph.stop()
        robot_dds.close()
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()
    trips = sum(1 for line in log if "→ DAMP" in line and "(bridge shutdown)" not in line)
    growth = memory_growth_percent(intervals[0]["rss_mb"], intervals[-1]["rss_mb"]) if intervals else {}
    summary = {"duration_s": cfg.duration_s, "intervals": len(intervals), "safety_trips": trips,
               "nodes_dead": sorted(set(codes) - set(alive)),
               "memory_growth_percent": growth,
               "memory_growth_max_percent": max(growth.values(), default=0.0),
               "joint_command_misses": sum(i["joint_command"]["misses"] for i in intervals),
               "lowcmd_misses": sum(i["lowcmd"]["misses"] for i in intervals),
               "lowcmd_period_p99_ms_worst": max((i["lowcmd"]["period_p99_ms"] or 0.0 for i in intervals),
                                                 default=None)}
    return {"summary": summary, "intervals": intervals}
