"""`g1-teleop bench policy`: the 50 Hz lower-body step in closed loop, and the command period in the
real-time graph."""

from __future__ import annotations

import time

import numpy as np

from g1_teleop.tools.bench.figures import BenchError, jitter_p99_ms, percentiles


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


TAKE_S = 0.1  # how often this process takes them


def _realtime_command_times(controller: str, seconds: float) -> dict[str, np.ndarray]:
    """The simulation graph in real time (as `g1-teleop sim` runs it: the composed control process and robot_state;
    no gantry, the default scenario and policy folder) on a private domain: each joint_command's write time (the
    policy's, DDS source timestamp), its reception time here (the middleware's, not this process's wake-up: the
    commands are taken every ``TAKE_S`` from a reader 2 s deep) and its stamp (the policy's 50 Hz timer on the
    simulator's clock), all in s, over ``seconds`` after a 2 s warm-up."""
    import rclpy

    from g1_teleop.launching.graph_description import load_graph
    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.ros.polled_subscription import command_reader

    env = {"ROS_DOMAIN_ID": str(POLICY_BENCH_DOMAIN_ID), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    log: list[str] = []
    graph = GraphProcesses(load_graph("sim").resolve({"controller": controller, "lockstep": "false",
                                                      "gantry": "false"}),
                           env=env, output=log.append)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=POLICY_BENCH_DOMAIN_ID)
    reader = command_reader(context, "_bench_policy")
    times: list[tuple[int, int, float]] = []  # (written ns, received ns, stamp s)
    try:
        graph.start()
        deadline = time.monotonic() + 60.0
        while not times or (times[-1][1] - times[0][1]) * 1e-9 < 2.0 + seconds:
            if (failure := graph.check()) is not None:
                raise BenchError(f"{failure}: " + "\n".join(log[-10:]))
            if time.monotonic() > deadline + seconds:
                raise BenchError(f"no joint_command from the real-time graph ({controller}): " + "\n".join(log[-10:]))
            time.sleep(TAKE_S)
            times.extend((info["source_timestamp"], info["received_timestamp"],
                          msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9) for msg, info in reader.take_all())
    finally:
        graph.stop()
        context.try_shutdown()
    kept = np.array([t for t in times if (t[1] - times[0][1]) * 1e-9 >= 2.0], dtype=float)
    if not kept[:, 1].all():
        raise BenchError("the middleware gave no reception time for joint_command (rmw without received_timestamp)")
    return {"written": kept[:, 0] * 1e-9, "received": kept[:, 1] * 1e-9, "stamp": kept[:, 2]}


def bench_policy(ticks: int = 1000, realtime_s: float = 10.0) -> dict[str, float]:
    """The 50 Hz policy step in closed loop with the simulator, for OpenWBT's squat policy (observation,
    inference, target) and the built-in controller (model update, leg IK, balance torques); then each in
    the real-time graph: the period of joint_command as another process's middleware receives it, its jitter
    (|period − 20 ms|) p99, and the same from the policy's write times and from the command stamps (the policy's
    timer)."""
    from g1_teleop.control.controller_factory import make_lower_body
    from g1_teleop.core.robot_description import load_robot

    robot = load_robot()
    controllers = {name: make_lower_body(robot, name) for name in ("openwbt", "builtin")}
    figures: dict[str, float] = {"ticks": ticks}
    for name, controller in controllers.items():
        samples, pelvis_z = _policy_step_times(robot, controller, ticks)
        figures.update({**percentiles(f"{name}_step", samples), f"{name}_pelvis_z_end_m": round(pelvis_z, 4)})
    for name in controllers:
        times = _realtime_command_times(name, realtime_s)
        periods = {kind: np.diff(t) for kind, t in times.items()}
        figures.update(percentiles(f"{name}_realtime_period", periods["received"]))
        for kind, prefix in (("received", ""), ("written", "_written"), ("stamp", "_stamp")):
            figures[f"{name}_realtime{prefix}_jitter_p99_ms"] = jitter_p99_ms(periods[kind], 0.02, digits=4)
        figures[f"{name}_realtime_commands"] = len(times["received"])
    figures["realtime_s"] = realtime_s
    return figures
