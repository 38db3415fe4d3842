"""`g1-teleop bench graph`: where a control period's time goes in the lockstep simulation graph.

The graph of `g1-teleop sim` (default scenario, built-in controller) runs in lockstep: each 20 ms period is
sim_bridge's joint_states → xr_input's wrist sample (on /clock) → retarget's arm target → the policy's
joint_command → sim_bridge's four physics steps and the next joint_states. Every message of a period carries the
period's stamp, and DDS gives each its publisher's wall time (source timestamp), so the wall time of each hop is
measured per period without touching the nodes. Beside it, each process's CPU time per period (user + system,
its threads included: DDS's too; ``control``: the container that runs sim_bridge, xr_input, retarget and the policy
on one thread) and the real-time factor. Then the same graph with a process per node (``compose:=false``): its
real-time factor, CPU per period and period wall time as ``processes_*``. This process listens with deep queues: its
own CPU shares the machine's cores with the graph's, as a recorder's does in `g1-teleop sim`.
"""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np

from g1_teleop.tools.bench.figures import BenchError, percentiles

GRAPH_BENCH_DOMAIN_ID = 223  # the bench's own ROS domain: not a robot's (0), the tests' (1–200), the other benches'
WARM_UP_S = 3.0  # wall seconds after the first period: start-up, discovery, the first solves
# The hops of a lockstep period, each from the topic that starts it to the one that ends it (same stamp), and the
# node whose work it is; the last hop ends at the next period's joint_states.
HOPS = (("xr_input", "joint_states", "xr/left_wrist"), ("retarget", "xr/left_wrist", "teleop/arm_target"),
        ("policy", "teleop/arm_target", "joint_command"), ("sim_bridge", "joint_command", "joint_states"))
PERIOD_NS = 20_000_000


def _cpu_s(pid: int) -> float:
    import psutil

    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def bench_graph(seconds: float = 20.0, domain_id: int = GRAPH_BENCH_DOMAIN_ID) -> dict[str, float]:
    """The lockstep graph over ``seconds`` of wall time after a warm-up, composed (as `g1-teleop sim` runs it) and a
    process per node (``processes_*``): see the module docstring."""
    figures = measure_graph(seconds, domain_id, compose=True)
    separate = measure_graph(seconds, domain_id, compose=False)
    figures.update({f"processes_{name}": separate[name]
                    for name in ("realtime_factor", "period_wall_p50_ms", "cpu_per_period_total_ms")})
    return figures


def measure_graph(seconds: float, domain_id: int, compose: bool) -> dict[str, float]:
    """One lockstep graph over ``seconds`` of wall time after a warm-up: real-time factor, each hop's wall time per
    period (p50/p99, ms), the period's wall time, and each process's CPU time per period (ms)."""
    import rclpy
    from geometry_msgs.msg import PoseStamped
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    from g1_teleop.launching.graph_description import load_graph, process_name, processes
    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.ros.messages import stamp_ns
    from g1_teleop.ros.qos import QOS_OBSERVER, QOS_SENSOR

    env = {"ROS_DOMAIN_ID": str(domain_id), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    log: list[str] = []
    nodes = load_graph("sim").resolve({"lockstep": "true", "compose": str(compose).lower()})
    graph = GraphProcesses(nodes, env=env, output=log.append)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain_id)
    node = rclpy.create_node("bench_graph", context=context)
    published: dict[str, dict[int, int]] = defaultdict(dict)  # topic -> stamp ns -> publisher's wall time ns

    def keep(topic: str):
        def callback(msg, info) -> None:
            published[topic].setdefault(stamp_ns(msg.header.stamp), info["source_timestamp"])
        return callback

    for topic, msg_type, qos in (("joint_states", JointState, QOS_OBSERVER), ("xr/left_wrist", PoseStamped, QOS_SENSOR),
                                 ("teleop/arm_target", JointState, QOS_OBSERVER),
                                 ("joint_command", JointState, QOS_OBSERVER)):
        node.create_subscription(msg_type, topic, keep(topic), qos)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    names = [process_name(members) for members in processes(nodes)]
    cpu: list[dict[str, float]] = []
    window: list[int] = []  # wall times (ns) of the measurement's start and end

    def sample() -> None:
        window.append(time.time_ns())
        cpu.append({name: _cpu_s(graph.pid(name)) for name in names})

    try:
        graph.start()
        deadline = time.monotonic() + 90.0
        while not window or time.time_ns() < window[0] + seconds * 1e9:
            states = published["joint_states"]
            if states and not window and time.time_ns() - min(states.values()) >= WARM_UP_S * 1e9:
                sample()
            if (failure := graph.check()) is not None:
                raise BenchError(f"{failure}: " + "\n".join(log[-10:]))
            if not states and time.monotonic() > deadline:
                raise BenchError("no joint_states within 90 s: " + "\n".join(log[-10:]))
            executor.spin_once(timeout_sec=0.005)
        sample()
    finally:
        graph.stop()
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()
    return _figures(published, cpu, window)


def _figures(published: dict[str, dict[int, int]], cpu: list[dict[str, float]],
             window: list[int]) -> dict[str, float]:
    """Figures of the periods whose joint_states were published inside ``window`` (wall ns)."""
    states = published["joint_states"]
    inside = [s for s in sorted(states) if window[0] <= states[s] <= window[1]]
    if len(inside) < 10:
        raise BenchError(f"only {len(inside)} periods in the window: the graph did not run")
    periods = (inside[-1] - inside[0]) // PERIOD_NS
    figures: dict[str, float] = {
        "periods": periods,
        "realtime_factor": round(periods * PERIOD_NS / ((states[inside[-1]] - states[inside[0]]) or 1), 2)}
    complete = []  # per period: the wall time of each hop (s)
    for s in inside:
        chain = [states.get(s), *(published[end].get(s) for _, _, end in HOPS[:-1]), states.get(s + PERIOD_NS)]
        if None not in chain:
            complete.append(np.diff(np.array(chain, dtype=np.int64)) * 1e-9)
    if not complete:
        raise BenchError("no period with all its hops heard here")
    hops = np.array(complete)
    for k, (name, *_) in enumerate(HOPS):
        figures.update(percentiles(f"hop_{name}", list(hops[:, k]), digits=2, with_max=False))
    figures.update(percentiles("period_wall", list(hops.sum(axis=1)), digits=2, with_max=False))
    figures["periods_with_every_hop"] = len(complete)
    for name in cpu[0]:
        figures[f"cpu_per_period_{name}_ms"] = round((cpu[1][name] - cpu[0][name]) / periods * 1e3, 2)
    figures["cpu_per_period_total_ms"] = round(sum((cpu[1][n] - cpu[0][n]) for n in cpu[0]) / periods * 1e3, 2)
    figures["seconds"] = round((window[1] - window[0]) * 1e-9, 1)
    return figures
