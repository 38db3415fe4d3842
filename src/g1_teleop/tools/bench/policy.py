"""`g1-teleop bench policy`: the 50 Hz lower-body step in closed loop, and the command period in the
real-time graph."""

from __future__ import annotations

import time

import numpy as np

from g1_teleop.tools.bench.figures import BenchError, percentiles


def _policy_step_times(robot, controller, ticks: int) -> tuple[list[float], float]:
    """Closed loop with the simulator (no gantry), the command's gains applied: time of each 50 Hz step
    (observation or model update, inference or IK, 29-joint target), the simulator's own time not counted; and the
    final pelvis height (m)."""
    from g1_teleop.control.whole_body_target import WholeBodyTargetBuilder
    from g1_teleop.core.limits import JointCommand
    from g1_teleop.core.mujoco_model import build_mujoco_model
    from g1_teleop.sim.simulator import SimConfig, Simulator

    sim = Simulator(robot, build_mujoco_model(robot), SimConfig(gantry=False))
    builder = WholeBodyTargetBuilder(robot, controller)
    samples = []
    for _ in range(ticks):
        state = sim.state()
        t = time.perf_counter()
        target = builder.step(state, None, None)
        samples.append(time.perf_counter() - t)
        sim.step_control_period(JointCommand(target.q, np.zeros(29), target.tau_ff, target.gains.kp, target.gains.kd))
    return samples, float(sim.state().world_p_pelvis[2])


POLICY_BENCH_DOMAIN_ID = 232  # the bench's own ROS domain: never a robot's (0), the tests' (1–200) nor lowcmd's


def _realtime_command_periods(controller: str, seconds: float) -> tuple[list[float], list[float]]:
    """The simulation graph in real time (as `g1-teleop sim` runs it: the composed control process and robot_state;
    no gantry, the default scenario and policy folder) on a private domain: periods (s) between joint_command
    arrivals here, and between their stamps (the policy's 50 Hz timer on the simulator's clock), over ``seconds``
    after a 2 s warm-up."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    from g1_teleop.launching.graph_description import load_graph
    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.ros.qos import QOS_COMMAND

    env = {"ROS_DOMAIN_ID": str(POLICY_BENCH_DOMAIN_ID), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    log: list[str] = []
    graph = GraphProcesses(load_graph("sim").resolve({"controller": controller, "lockstep": "false",
                                                      "gantry": "false"}),
                           env=env, output=log.append)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=POLICY_BENCH_DOMAIN_ID)
    node = rclpy.create_node("bench_policy", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    arrivals: list[tuple[float, float]] = []  # (time.monotonic(), stamp s)
    node.create_subscription(JointState, "joint_command", lambda m: arrivals.append(
        (time.monotonic(), m.header.stamp.sec + m.header.stamp.nanosec * 1e-9)), QOS_COMMAND)
    try:
        graph.start()
        deadline = time.monotonic() + 60.0
        while not arrivals or time.monotonic() - arrivals[0][0] < 2.0 + seconds:
            if (failure := graph.check()) is not None:
                raise BenchError(f"{failure}: " + "\n".join(log[-10:]))
            if time.monotonic() > deadline + seconds:
                raise BenchError(f"no joint_command from the real-time graph ({controller}): " + "\n".join(log[-10:]))
            executor.spin_once(timeout_sec=0.005)
    finally:
        graph.stop()
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()
    kept = np.array([a for a in arrivals if a[0] - arrivals[0][0] >= 2.0])
    return list(np.diff(kept[:, 0])), list(np.diff(kept[:, 1]))


def bench_policy(ticks: int = 1000, realtime_s: float = 10.0) -> dict[str, float]:
    """The 50 Hz policy step in closed loop with the simulator, for OpenWBT's squat policy (observation,
    inference, target) and the built-in controller (model update, leg IK, balance torques); then each in
    the real-time graph: the period of joint_command as received by another process, its jitter
    (|period − 20 ms|) p99, and the same from the command stamps (the policy's timer)."""
    from g1_teleop.control.controller_factory import make_lower_body
    from g1_teleop.core.robot_description import load_robot

    robot = load_robot()
    controllers = {name: make_lower_body(robot, name) for name in ("openwbt", "builtin")}
    figures: dict[str, float] = {"ticks": ticks}
    for name, controller in controllers.items():
        samples, pelvis_z = _policy_step_times(robot, controller, ticks)
        figures.update({**percentiles(f"{name}_step", samples), f"{name}_pelvis_z_end_m": round(pelvis_z, 4)})
    for name in controllers:
        received, stamped = _realtime_command_periods(name, realtime_s)
        jitter_ms = {kind: round(float(np.percentile(np.abs(np.asarray(periods) - 0.02), 99)) * 1e3, 4)
                     for kind, periods in (("", received), ("_stamp", stamped))}
        figures.update({**percentiles(f"{name}_realtime_period", received),
                        f"{name}_realtime_jitter_p99_ms": jitter_ms[""],
                        f"{name}_realtime_stamp_jitter_p99_ms": jitter_ms["_stamp"],
                        f"{name}_realtime_commands": len(received) + 1})
    figures["realtime_s"] = realtime_s
    return figures
