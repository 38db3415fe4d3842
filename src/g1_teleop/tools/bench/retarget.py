"""`g1-teleop bench retarget`: the retargeters on known motions, one section per retargeter (figures prefixed
with the section's name). ``whole_body``: GMR's whole-body retargeting on the round trip (a G1 motion → the
operator body points that give it → the robot again), ours and GMR's own solver (mink) on the same frames.
``hands``: Dex3 hand retargeting per second per hand (tools.bench.hands, also ``g1-teleop bench hands``)."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from g1_teleop.tools.bench.figures import percentiles
from g1_teleop.tools.bench.hands import bench_hands


def bench_retarget() -> dict[str, float]:
    """Every section's figures, ``{section}_{figure}``."""
    return {f"{name}_{key}": value for name, section in SECTIONS.items() for key, value in section().items()}


@contextmanager
def one_core() -> Iterator[int]:
    """Runs the block on one CPU (the last this process may use), restoring the affinity after."""
    allowed = os.sched_getaffinity(0)
    core = max(allowed)
    os.sched_setaffinity(0, {core})
    try:
        yield core
    finally:
        os.sched_setaffinity(0, allowed)


def bench_whole_body(rate_hz: float = 30.0, seed: int = 0) -> dict[str, float]:
    """Our whole-body retargeting (with the self-collision clearance) and mink with GMR's loop (without: GMR has
    none) on ``demo_motion`` (18 s at ``rate_hz``), on one core: frames per second, time per frame, and the
    errors to the known motion (joints, rad; the tracked links' positions, m) of both. Twice: on the exact body
    points (``exact_``) and with a tracker's noise on them (``noisy_``: 1 cm RMS per axis on the positions, a
    rotation of 2° RMS per axis on the orientations, seeded), where no configuration meets every target."""
    from g1_teleop.core.mujoco_model import build_mujoco_model
    from g1_teleop.core.robot_description import load_robot
    from g1_teleop.core.rotations import matrix_from_wxyz, wxyz_from_matrix
    from g1_teleop.retarget.whole_body import WholeBodyRetargeter
    from g1_teleop.retarget.whole_body_motion import body_frames, demo_motion

    robot = load_robot()
    retargeter = WholeBodyRetargeter(robot, mj_model=build_mujoco_model(robot))
    motion = demo_motion(retargeter, rate_hz)
    positions, quat = body_frames(retargeter, motion)
    rng = np.random.default_rng(seed)
    noisy_R = matrix_from_wxyz(quat) @ _small_rotations(rng, quat.shape[:2], math.radians(2.0))
    cases = {"exact": (positions, quat),
             "noisy": (positions + rng.normal(0.0, 0.01, positions.shape),
                       np.array([[wxyz_from_matrix(R) for R in frame] for frame in noisy_R]))}
    truth = np.array([retargeter.problem.link_poses(np.concatenate([motion.base_position[i], np.zeros(3),
                                                                    motion.joints[i]]), motion.base_wxyz[i])
                      for i in range(motion.stamps.size)])[:, :, :3, 3]
    figures: dict[str, float] = {"frames": int(motion.stamps.size)}
    with one_core():
        retargeter.solve(0.0, positions[0], quat[0])  # loads the compiled function's pages
        for case, (points, orientations) in cases.items():
            retargeter.reset()
            times, joints, links, iterations, clearance = [], [], [], [], []
            for i, stamp in enumerate(motion.stamps):
                start = time.perf_counter()
                frame = retargeter.solve(float(stamp), points[i], orientations[i])
                times.append(time.perf_counter() - start)
                joints.append(frame.joints)
                links.append(frame.link_poses[:, :3, 3])
                iterations.append(frame.iterations)
                clearance.append(frame.clearance_m)
            ours = _figures(f"{case}_", times, np.array(joints), np.array(links), motion.joints, truth)
            mink_times, mink_joints, mink_links = _gmr_with_mink(retargeter, motion.stamps, points, orientations)
            theirs = _figures(f"{case}_mink_", mink_times, mink_joints, mink_links, motion.joints, truth)
            figures |= {**ours, **theirs, f"{case}_iterations_mean": round(float(np.mean(iterations)), 2),
                        f"{case}_clearance_min_m": round(float(np.min(clearance)), 4),
                        f"{case}_ours_over_mink_fps": round(ours[f"{case}_fps"] / theirs[f"{case}_mink_fps"], 1)}
    return figures


def _small_rotations(rng: np.random.Generator, shape: tuple[int, ...], sigma_rad: float) -> np.ndarray:
    """Rotation matrices (*shape, 3, 3) of rotation vectors with sigma_rad RMS per axis (Rodrigues)."""
    vector = rng.normal(0.0, sigma_rad, (*shape, 3))
    angle = np.linalg.norm(vector, axis=-1)[..., None, None]
    x, y, z = np.moveaxis(vector / np.maximum(angle[..., 0], 1e-12), -1, 0)
    zero = np.zeros_like(x)
    K = np.stack([np.stack([zero, -z, y], -1), np.stack([z, zero, -x], -1), np.stack([-y, x, zero], -1)], -2)
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


def _figures(prefix: str, times: list[float], joints: np.ndarray, links: np.ndarray, true_joints: np.ndarray,
             true_links: np.ndarray) -> dict[str, float]:
    joint_error = np.abs(joints - true_joints).ravel()
    link_error = np.linalg.norm(links - true_links, axis=-1).ravel()
    return {f"{prefix}fps": round(len(times) / sum(times), 1), **percentiles(f"{prefix}frame", times),
            **{f"{prefix}joint_err_{stat}_rad": float(f"{np.percentile(joint_error, p):.3g}")
               for stat, p in (("p50", 50), ("p95", 95), ("max", 100))},
            **{f"{prefix}body_pos_err_{stat}_m": float(f"{np.percentile(link_error, p):.3g}")
               for stat, p in (("p50", 50), ("p95", 95), ("max", 100))}}


def _gmr_with_mink(retargeter, stamps: np.ndarray, positions: np.ndarray,
                   quat: np.ndarray) -> tuple[list[float], np.ndarray, np.ndarray]:
    """GMR's solver on the same targets: per phase mink.solve_ik (DAQP, damping 0.5, frame tasks with the
    tables' costs and lm_damping 1, dt = the model's timestep) integrated while the task error drops by more than
    1e-3, at most 10 more times; ConfigurationLimit and a VelocityLimit of 3π rad/s per joint (YanjieZe/GMR,
    general_motion_retargeting/motion_retarget.py). Time per frame includes the targets, as ours."""
    import mink

    from g1_teleop.core.model_files import mjspec_from_file
    from g1_teleop.retarget.whole_body_config import TOE_FRAMES, TOE_POSITION_M

    robot = retargeter.robot
    spec = mjspec_from_file(robot.model_path)
    spec.body(retargeter.links[0]).add_freejoint(name="floating_base_joint")
    for toe, ankle in TOE_FRAMES.items():
        spec.body(ankle).add_site(name=toe, pos=TOE_POSITION_M)
    model = spec.compile()
    columns = [model.joint(name).qposadr[0] for name in robot.joint_names]
    frame_types = ["site" if link in TOE_FRAMES else "body" for link in retargeter.links]
    phases = [[mink.FrameTask(link, kind, position_cost=cost[0], orientation_cost=cost[1], lm_damping=1.0)
               for link, kind, cost in zip(retargeter.links, frame_types, costs, strict=True)]
              for costs in ([row.phase1 for row in retargeter.table], [row.phase2 for row in retargeter.table])]
    limits = [mink.ConfigurationLimit(model),
              mink.VelocityLimit(model, dict.fromkeys(robot.joint_names, 3.0 * math.pi))]
    q = np.zeros(model.nq)
    q[:7] = [0.0, 0.0, robot.spawn_height, 1.0, 0.0, 0.0, 0.0]
    q[columns] = robot.default_q
    configuration = mink.Configuration(model, q)
    dt = model.opt.timestep

    def error(tasks) -> float:
        return float(np.linalg.norm(np.concatenate([task.compute_error(configuration) for task in tasks])))

    def step(tasks) -> None:
        velocity = mink.solve_ik(configuration, tasks, dt, "daqp", damping=0.5, limits=limits)
        configuration.integrate_inplace(velocity, dt)

    times, joints, links = [], [], []
    for i in range(stamps.size):
        start = time.perf_counter()
        targets = retargeter.targets(positions[i], quat[i])
        for tasks in phases:
            for task, target in zip(tasks, targets, strict=True):
                task.set_target(mink.SE3.from_matrix(target))
            before = error(tasks)
            step(tasks)
            after, extra = error(tasks), 0
            while before - after > 1e-3 and extra < 10:
                before = after
                step(tasks)
                after, extra = error(tasks), extra + 1
        times.append(time.perf_counter() - start)
        joints.append(configuration.q[columns].copy())
        links.append([configuration.get_transform_frame_to_world(link, kind).translation()
                      for link, kind in zip(retargeter.links, frame_types, strict=True)])
    return times, np.array(joints), np.array(links)


SECTIONS: dict[str, Callable[[], dict[str, float]]] = {"whole_body": bench_whole_body, "hands": bench_hands}
"""Sections of the benchmark by name, each a function returning its figures (add a retargeter's here)."""
