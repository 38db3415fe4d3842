"""`g1-teleop bench sim`: the simulator core alone, control period time and real-time factor."""

from __future__ import annotations

import time

import numpy as np

from g1_teleop.tools.bench.figures import percentiles


def bench_sim(periods: int = 1000) -> dict[str, float]:
    """Simulator core: one 20 ms control period (4 physics steps with PD), on the gantry."""
    from g1_teleop.core.limits import JointCommand
    from g1_teleop.core.mujoco_model import build_mujoco_model
    from g1_teleop.core.robot_description import load_robot
    from g1_teleop.sim.simulator import SimConfig, Simulator

    robot = load_robot()
    t0 = time.perf_counter()
    model = build_mujoco_model(robot, timestep=0.005)
    build_s = time.perf_counter() - t0
    sim = Simulator(robot, model, SimConfig())
    kp, kd = robot.gains("default")
    command = JointCommand.hold(robot.default_q, kp, kd)
    samples = []
    for _ in range(periods):
        t = time.perf_counter()
        sim.step_control_period(command)
        samples.append(time.perf_counter() - t)
    return {"model_build_ms": round(build_s * 1e3, 3), **percentiles("control_period", samples),
            "realtime_factor": round(sim.config.control_dt / float(np.mean(samples)), 2), "periods": periods}
