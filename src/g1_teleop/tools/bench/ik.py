"""`g1-teleop bench ik`: the dual-arm IK on seeded target sets, against mink on the same cases."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from g1_teleop.core.model_files import mjspec_from_file
from g1_teleop.core.rotations import wxyz_from_matrix
from g1_teleop.tools.bench.figures import percentiles


@dataclass(frozen=True)
class IkCase:
    kind: str  # reachable | unreachable | near_singular | near_collision
    q_start: np.ndarray  # (29,) measured joints the solve starts from (DDS order)
    pelvis_T_left: np.ndarray
    pelvis_T_right: np.ndarray


IK_CASE_KINDS = ("reachable", "unreachable", "near_singular", "near_collision")


def ik_target_set(robot, ik, clearance, count: int = 2000, seed: int = 0) -> list[IkCase]:
    """A fixed, seeded set of dual-arm targets, a quarter of each kind.

    reachable: forward kinematics of random collision-free arm configurations (clearance > 2 cm), the
    solve starting 0.1 rad (σ) away. unreachable: those targets pushed 0.15–0.4 m further from the
    shoulder. near_singular: elbows within ±0.05 rad of straight. near_collision: configurations with
    clearance between 0 and 3 cm.
    """
    from g1_teleop.core.robot_description import ARM_INDICES

    rng = np.random.default_rng(seed)
    arm = np.array(list(ARM_INDICES))
    lower, upper = robot.q_lower[arm], robot.q_upper[arm]
    elbows = [robot.joint_names.index(f"{side}_elbow_joint") for side in ("left", "right")]
    shoulders = []
    for side in ("left", "right"):  # shoulder pitch joint origins, pelvis frame, at the default pose
        data = clearance.data
        clearance.clearance(robot.default_q)
        body = clearance.model.body(f"{side}_shoulder_pitch_link").id
        shoulders.append(data.xpos[body] - data.xpos[clearance.model.body("pelvis").id])
    cases: list[IkCase] = []
    per_kind = count // len(IK_CASE_KINDS)
    for kind in IK_CASE_KINDS:
        made = 0
        while made < per_kind:
            q_goal = robot.default_q.copy()
            q_goal[arm] = rng.uniform(lower, upper)
            if kind == "near_singular":
                q_goal[elbows] = rng.uniform(-0.05, 0.05, 2)
            gap = clearance.clearance(q_goal).distance_m
            if (kind == "near_collision") != (0.0 < gap < 0.03) or (kind != "near_collision" and gap <= 0.02):
                continue
            left, right = ik.end_effector_poses(q_goal)
            if kind == "unreachable":
                for T, shoulder in ((left, shoulders[0]), (right, shoulders[1])):
                    direction = T[:3, 3] - shoulder
                    T[:3, 3] += direction / np.linalg.norm(direction) * rng.uniform(0.15, 0.4)
            q_start = q_goal.copy()
            q_start[arm] = np.clip(q_goal[arm] + rng.normal(0, 0.1, arm.size), lower, upper)
            cases.append(IkCase(kind, q_start, left, right))
            made += 1
    return cases


def bench_ik(count: int = 2000, seed: int = 0) -> dict[str, float]:
    """Dual-arm IK with self-collision constraints on the seeded target set: time, accuracy on reachable
    targets, failures, solves stopped by the iteration cap, and the clearance of the solutions measured on
    MuJoCo's collision geoms (failures return the measured joints and are not counted as solutions).

    pos_err / rot_err: the IK's answer to a reachable target, i.e. where the arm comes to rest following its
    answers with the target held (``_settle``); only the posture term pulls there. This is the figure mink's
    iterated solve is compared with. pos_err_first_solve / rot_err_first_solve: the one timed solve, which
    starts 0.1 rad (σ) from the goal, so OpenWBT's 0.1·‖q − q_measured‖² term holds it back by a few mm by
    design (a one-tick lag the next ticks remove). The clearance figures cover both kinds of answer."""
    from g1_teleop.core.mujoco_model import build_mujoco_model
    from g1_teleop.core.pinocchio_model import build_pinocchio_model
    from g1_teleop.core.robot_description import load_robot
    from g1_teleop.retarget.arm_ik import DualArmIK
    from g1_teleop.retarget.self_collision import ArmCollisionModel, ClearanceMonitor

    robot = load_robot()
    mj_model = build_mujoco_model(robot)
    pin_model = build_pinocchio_model(robot, floating_base=False)
    ik = DualArmIK(pin_model, robot.joint_names, collision=ArmCollisionModel(robot, mj_model, pin_model))
    clearance = ClearanceMonitor(robot, mj_model)
    cases = ik_target_set(robot, ik, clearance, count, seed)
    times, gaps = [], []
    errors: dict[str, list[float]] = {name: [] for name in ("pos", "rot", "pos_first_solve", "rot_first_solve")}
    failures = dict.fromkeys(IK_CASE_KINDS, 0)
    capped = dict.fromkeys(IK_CASE_KINDS, 0)
    for case in cases:
        ik.reset()  # independent cases: no filter history
        t = time.perf_counter()
        result = ik.solve(case.pelvis_T_left, case.pelvis_T_right, case.q_start)
        times.append(time.perf_counter() - t)
        failures[case.kind] += not result.ok
        capped[case.kind] += result.ok and not result.converged
        if not result.ok:
            continue  # the measured joints, not a solution
        q = case.q_start.copy()
        q[ik.arm_indices] = result.q_arm
        gaps.append(clearance.clearance(q).distance_m)
        if case.kind == "reachable":
            errors["pos_first_solve"].extend(result.pos_err_m)
            errors["rot_first_solve"].extend(result.rot_err_rad)
            settled = _settle(ik, case, q)
            errors["pos"].extend(settled.pos_err_m)
            errors["rot"].extend(settled.rot_err_rad)
            gaps.append(clearance.clearance(q).distance_m)  # _settle left the settled arm in q
    gaps_arr = np.asarray(gaps)
    return {
        **percentiles("solve", times),
        **{f"{name}_err{suffix}_{stat}_{unit}": float(np.percentile(errors[name + suffix], percent))
           for name, unit in (("pos", "m"), ("rot", "rad")) for suffix in ("", "_first_solve")
           for stat, percent in (("p50", 50), ("p95", 95))},
        **{f"failures_{kind}": n for kind, n in failures.items()},
        **{f"iteration_capped_{kind}": n for kind, n in capped.items()},
        "min_clearance_setting_m": ik.config.min_clearance_m,
        "clearance_min_m": float(gaps_arr.min()),
        "solutions_inside_clearance": int((gaps_arr < ik.config.min_clearance_m).sum()),
        "solutions_in_collision": int((gaps_arr < 0).sum()),
        "cases": len(cases),
        **_mink_comparison(robot, ik, pin_model, cases, times, errors["pos"]),
    }


def _settle(ik, case: IkCase, q: np.ndarray, ticks: int = 40):
    """The answer once the arm has followed it: solves again from the joints it commanded (perfect tracking,
    target held) until they stop moving, so the ‖q − q_measured‖ term has faded."""
    for _ in range(ticks):
        result = ik.solve(case.pelvis_T_left, case.pelvis_T_right, q)
        moved = np.max(np.abs(result.q_arm - q[ik.arm_indices]))
        q[ik.arm_indices] = result.q_arm
        if moved < 1e-5:
            break
    return result


def _mink_comparison(robot, ik, pin_model, cases: list[IkCase], times: list[float], pos_err: list[float],
                     max_steps: int = 50) -> dict[str, float]:
    """The same cases through mink (differential IK iterated to a pose: dt = 1, until a step moves no joint
    more than the IK's step tolerance or after ``max_steps``) with the same weights: frame tasks of cost
    √w (mink squares costs) for both end effectors, a posture task towards q = 0, the joint limits, and
    LM damping w_m on each step in place of the ‖q − q_measured‖ term. No collision avoidance (mink's
    collision limit needs hpp-fcl geometry pairs), so mink solves a less constrained problem."""
    import mink
    import pinocchio as pin

    from g1_teleop.core.robot_description import WAIST_INDICES

    cfg = ik.config
    if np.any(robot.default_q[list(WAIST_INDICES)] != 0.0):
        raise RuntimeError("mink comparison: the arm-only model welds the waist at 0, but the cases lock it "
                           "at the default pose, which is not 0")
    spec = mjspec_from_file(robot.model_path)  # fixed base: world = pelvis
    arm = set(ik.arm_joint_names)
    for joint in list(spec.joints):
        if joint.name not in arm:
            spec.delete(joint)  # welded at 0: the locked pose of the waist in every case
    frames = (cfg.left_frame, cfg.right_frame)
    for frame in frames:  # the end-effector frames as sites on the link of their joint, as in the IK's model
        ee = pin_model.frames[pin_model.getFrameId(frame)]
        link = next(f.name for f in pin_model.frames if f.parentJoint == ee.parentJoint and f.type == pin.BODY
                    and f.placement.isIdentity())
        spec.body(link).add_site(name=frame, pos=ee.placement.translation, quat=wxyz_from_matrix(ee.placement.rotation))
    model = spec.compile()
    order = [model.joint(name).qposadr[0] for name in ik.arm_joint_names]
    configuration = mink.Configuration(model)
    tasks = [mink.FrameTask(frame, "site", position_cost=np.sqrt(cfg.position_weight),
                            orientation_cost=np.sqrt(cfg.rotation_weight)) for frame in frames]
    posture = mink.PostureTask(model, cost=np.sqrt(cfg.posture_weight))
    posture.set_target(np.zeros(model.nq))
    limits = [mink.ConfigurationLimit(model)]
    mink_times, mink_err = [], []
    for case in cases:
        q = np.zeros(model.nq)
        q[order] = case.q_start[ik.arm_indices]
        t = time.perf_counter()
        configuration.update(q)
        for task, target in zip(tasks, (case.pelvis_T_left, case.pelvis_T_right), strict=True):
            task.set_target(mink.SE3.from_matrix(target))
        for _ in range(max_steps):
            velocity = mink.solve_ik(configuration, [*tasks, posture], 1.0, "daqp", damping=cfg.measured_weight,
                                     limits=limits)
            configuration.integrate_inplace(velocity, 1.0)
            if np.max(np.abs(velocity)) < cfg.step_tolerance_rad:
                break
        mink_times.append(time.perf_counter() - t)
        if case.kind == "reachable":
            for frame, target in zip(frames, (case.pelvis_T_left, case.pelvis_T_right), strict=True):
                pose = configuration.get_transform_frame_to_world(frame, "site")
                mink_err.append(float(np.linalg.norm(pose.translation() - target[:3, 3])))
    ours = percentiles("solve", times)
    theirs = percentiles("mink_solve", mink_times)
    return {**theirs,
            "mink_pos_err_p50_m": float(np.percentile(mink_err, 50)),
            "mink_pos_err_p95_m": float(np.percentile(mink_err, 95)),
            "mink_over_ours_p50": round(theirs["mink_solve_p50_ms"] / ours["solve_p50_ms"], 2),
            "mink_over_ours_p99": round(theirs["mink_solve_p99_ms"] / ours["solve_p99_ms"], 2),
            "mink_over_ours_pos_err_p95": round(float(np.percentile(mink_err, 95) / np.percentile(pos_err, 95)), 2)}
