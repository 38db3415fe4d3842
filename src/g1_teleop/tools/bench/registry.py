"""Benchmarks for `g1-teleop bench NAME --json`: each returns flat figures named quantity_stat_unit."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


class BenchError(RuntimeError):
    """A benchmark could not run (its message says why and what to do)."""


def _percentiles(prefix: str, samples_s: list[float]) -> dict[str, float]:
    ms = np.asarray(samples_s) * 1e3
    return {f"{prefix}_p50_ms": round(float(np.percentile(ms, 50)), 4),
            f"{prefix}_p99_ms": round(float(np.percentile(ms, 99)), 4),
            f"{prefix}_max_ms": round(float(ms.max()), 4)}


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
    return {"model_build_ms": round(build_s * 1e3, 3), **_percentiles("control_period", samples),
            "realtime_factor": round(sim.config.control_dt / float(np.mean(samples)), 2), "periods": periods}


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
        **_percentiles("solve", times),
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
    import mujoco
    import pinocchio as pin

    from g1_teleop.core.robot_description import WAIST_INDICES

    cfg = ik.config
    if np.any(robot.default_q[list(WAIST_INDICES)] != 0.0):
        raise RuntimeError("mink comparison: the arm-only model welds the waist at 0, but the cases lock it "
                           "at the default pose, which is not 0")
    spec = mujoco.MjSpec.from_file(str(robot.model_path))  # fixed base: world = pelvis
    arm = set(ik.arm_joint_names)
    for joint in list(spec.joints):
        if joint.name not in arm:
            spec.delete(joint)  # welded at 0: the locked pose of the waist in every case
    frames = (cfg.left_frame, cfg.right_frame)
    for frame in frames:  # the end-effector frames as sites on the link of their joint, as in the IK's model
        ee = pin_model.frames[pin_model.getFrameId(frame)]
        link = next(f.name for f in pin_model.frames if f.parentJoint == ee.parentJoint and f.type == pin.BODY
                    and f.placement.isIdentity())
        spec.body(link).add_site(name=frame, pos=ee.placement.translation, quat=_wxyz(ee.placement.rotation))
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
    ours = _percentiles("solve", times)
    theirs = _percentiles("mink_solve", mink_times)
    return {**theirs,
            "mink_pos_err_p50_m": float(np.percentile(mink_err, 50)),
            "mink_pos_err_p95_m": float(np.percentile(mink_err, 95)),
            "mink_over_ours_p50": round(theirs["mink_solve_p50_ms"] / ours["solve_p50_ms"], 2),
            "mink_over_ours_p99": round(theirs["mink_solve_p99_ms"] / ours["solve_p99_ms"], 2),
            "mink_over_ours_pos_err_p95": round(float(np.percentile(mink_err, 95) / np.percentile(pos_err, 95)), 2)}


def _wxyz(R: np.ndarray) -> np.ndarray:
    from scipy.spatial.transform import Rotation

    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return np.array([w, x, y, z])


def _policy_step_times(robot, controller, ticks: int) -> tuple[list[float], float]:
    """Closed loop with the simulator (no gantry): time of each 50 Hz step (observation or model update,
    inference or IK, 29-joint target), the simulator's own time not counted; and the final pelvis height (m)."""
    from g1_teleop.control.whole_body_target import WholeBodyTargetBuilder
    from g1_teleop.core.limits import JointCommand
    from g1_teleop.core.mujoco_model import build_mujoco_model
    from g1_teleop.sim.simulator import SimConfig, Simulator

    sim = Simulator(robot, build_mujoco_model(robot), SimConfig(gantry=False))
    builder = WholeBodyTargetBuilder(robot, controller)
    kp, kd = robot.gains("default")
    samples = []
    for _ in range(ticks):
        state = sim.state()
        t = time.perf_counter()
        target = builder.step(state, None, None)
        samples.append(time.perf_counter() - t)
        sim.step_control_period(JointCommand(target.q, np.zeros(29), target.tau_ff, kp, kd))
    return samples, float(sim.state().world_p_pelvis[2])


POLICY_BENCH_DOMAIN_ID = 232  # the bench's own ROS domain: never a robot's (0), the tests' (1–200) nor lowcmd's


def _realtime_command_periods(controller: str, policy_dir: str, seconds: float) -> tuple[list[float], list[float]]:
    """The simulation graph in real time (four nodes as separate processes, no gantry, the default
    scenario) on a private domain: periods (s) between joint_command arrivals here, and between their
    stamps (the policy's 50 Hz timer on the simulator's clock), over ``seconds`` after a 2 s warm-up."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    from g1_teleop.launching.graph_description import load_graph
    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.ros.node_support import QOS_COMMAND

    env = {"ROS_DOMAIN_ID": str(POLICY_BENCH_DOMAIN_ID), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    log: list[str] = []
    graph = GraphProcesses(load_graph("sim").resolve({"controller": controller, "policy_dir": policy_dir,
                                                      "lockstep": "false", "gantry": "false"}),
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
    from g1_teleop.control.learned.policy_config import load_policy_config
    from g1_teleop.control.learned.policy_files import resolve_policy_dir, verify
    from g1_teleop.control.leg_ik import StanceModel
    from g1_teleop.control.squat_locomotion import SquatLocomotionController
    from g1_teleop.control.standing_controller import StandingConfig, StandingController
    from g1_teleop.core.robot_description import load_robot

    folder = resolve_policy_dir()
    for name in ("g1_squat.yaml", "g1_loco.yaml"):
        verify(folder / name)
    robot = load_robot()
    controllers = {
        "openwbt": SquatLocomotionController(load_policy_config(folder / "g1_squat.yaml", folder),
                                             load_policy_config(folder / "g1_loco.yaml", folder)),
        "builtin": StandingController(robot, StanceModel.for_robot(robot), StandingConfig()),
    }
    figures: dict[str, float] = {"ticks": ticks}
    for name, controller in controllers.items():
        samples, pelvis_z = _policy_step_times(robot, controller, ticks)
        figures.update({**_percentiles(f"{name}_step", samples), f"{name}_pelvis_z_end_m": round(pelvis_z, 4)})
    for name in controllers:
        received, stamped = _realtime_command_periods(name, str(folder), realtime_s)
        jitter_ms = {kind: round(float(np.percentile(np.abs(np.asarray(periods) - 0.02), 99)) * 1e3, 4)
                     for kind, periods in (("", received), ("_stamp", stamped))}
        figures.update({**_percentiles(f"{name}_realtime_period", received),
                        f"{name}_realtime_jitter_p99_ms": jitter_ms[""],
                        f"{name}_realtime_stamp_jitter_p99_ms": jitter_ms["_stamp"],
                        f"{name}_realtime_commands": len(received) + 1})
    figures["realtime_s"] = realtime_s
    return figures


def bench_lowcmd() -> dict[str, float]:
    """The hardware bridge's LowCmd path against the virtual robot (:mod:`g1_teleop.tools.bench.lowcmd`)."""
    from g1_teleop.tools.bench.lowcmd import bench_lowcmd as run

    return run()


def bench_publish() -> dict[str, float]:
    """A ROS publish stalling its process when a subscriber dies (:mod:`g1_teleop.tools.bench.publish`)."""
    from g1_teleop.tools.bench.publish import bench_publish as run

    return run()


BENCHMARKS: dict[str, Callable[[], dict[str, float]]] = {"sim": bench_sim, "ik": bench_ik, "policy": bench_policy,
                                                         "lowcmd": bench_lowcmd, "publish": bench_publish}
