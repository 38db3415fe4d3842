"""Benchmarks for `g1-teleop bench NAME --json`: each returns flat figures named quantity_stat_unit."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def _percentiles(prefix: str, samples_s: list[float]) -> dict[str, float]:
    ms = np.asarray(samples_s) * 1e3
    return {f"{prefix}_p50_ms": round(float(np.percentile(ms, 50)), 4),
            f"{prefix}_p99_ms": round(float(np.percentile(ms, 99)), 4),
            f"{prefix}_max_ms": round(float(ms.max()), 4)}


def bench_sim(periods: int = 1000) -> dict[str, float]:
    """Simulator core: one 20 ms control period (4 physics steps with PD), on the gantry."""
    from g1_teleop.limits import JointCommand
    from g1_teleop.robot import build_mujoco_model, load_robot
    from g1_teleop.simulator import SimConfig, Simulator

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
    return {"model_build_ms": round(build_s * 1e3, 3), **_percentiles("control_period", samples),
            "realtime_factor": round(sim.config.control_dt / float(np.mean(samples)), 2), "periods": periods}


def bench_ik(pairs: int = 500, seed: int = 7) -> dict[str, float]:
    """Dual-arm IK on FK-generated reachable targets near the previous solution (teleoperation-like)."""
    from g1_teleop.arm_ik import DualArmIK
    from g1_teleop.robot import ARM_INDICES, build_pinocchio_model, load_robot

    robot = load_robot()
    ik = DualArmIK(build_pinocchio_model(robot, floating_base=False), robot.joint_names)
    rng = np.random.default_rng(seed)
    lower, upper = robot.q_lower[ARM_INDICES], robot.q_upper[ARM_INDICES]
    q = robot.default_q.copy()
    times, pos_err = [], []
    for _ in range(pairs):
        q_goal = q.copy()
        q_goal[ARM_INDICES] = np.clip(q[ARM_INDICES] + rng.normal(0, 0.05, 14), lower, upper)
        left, right = ik.end_effector_poses(q_goal)
        t = time.perf_counter()
        result = ik.solve(left, right, q)
        times.append(time.perf_counter() - t)
        pos_err.extend(result.pos_err_m)
        q[ARM_INDICES] = q_goal[ARM_INDICES]
    err = np.asarray(pos_err)
    return {**_percentiles("solve", times), "pos_err_p50_m": float(np.percentile(err, 50)),
            "pos_err_p95_m": float(np.percentile(err, 95)), "pairs": pairs}


BENCHMARKS: dict[str, Callable[[], dict[str, float]]] = {"sim": bench_sim, "ik": bench_ik}
