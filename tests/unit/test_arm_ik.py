"""DualArmIK: reaches forward-kinematics targets, respects the joint bounds, falls back to the measured
joints on failure, moves smoothly, finds the minimum of its objective, and gives gravity torques. Runs on
our model and, where present, on Unitree's official model (../shared/models/unitree_g1/g1_29dof.xml)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest
from scipy.optimize import minimize

from g1_teleop.core.pinocchio_model import build_pinocchio_model
from g1_teleop.core.robot_description import Robot, load_robot
from g1_teleop.retarget.arm_ik import ArmIKConfig, DualArmIK

OFFICIAL_MJCF = Path(__file__).resolve().parents[2].parent / "shared" / "models" / "unitree_g1" / "g1_29dof.xml"
UNFILTERED = ArmIKConfig(filter_weights=(1.0,))

IKFactory = Callable[..., DualArmIK]


@pytest.fixture(scope="module", params=["ours", "official"])
def model(request: pytest.FixtureRequest, robot: Robot) -> pin.Model:
    if request.param == "ours":
        return build_pinocchio_model(robot)
    if not OFFICIAL_MJCF.is_file():
        pytest.skip(f"official G1 model not found at ../shared/models/unitree_g1: {OFFICIAL_MJCF} is absent")
    return build_pinocchio_model(load_robot(model=OFFICIAL_MJCF))


@pytest.fixture
def make_ik(model: pin.Model, robot: Robot) -> IKFactory:
    def make(config: ArmIKConfig = UNFILTERED) -> DualArmIK:
        return DualArmIK(model, robot.joint_names, config)

    return make


def random_body(robot: Robot, rng: np.random.Generator, margin: float = 0.1) -> np.ndarray:
    """Default pose with random arms (and waist) within the limits, ``margin`` of each range inside."""
    q = robot.default_q.copy()
    span = robot.q_upper - robot.q_lower
    lower, upper = robot.q_lower + margin * span, robot.q_upper - margin * span
    for group in ("arms", "waist"):
        idx = robot.group(group)
        q[idx] = rng.uniform(lower[idx], upper[idx])
    return q


def rotation_angle(A: np.ndarray, B: np.ndarray) -> float:
    return float(np.linalg.norm(pin.log3(A[:3, :3].T @ B[:3, :3])))


def test_arm_joints_are_the_dds_arm_joints(make_ik: IKFactory, robot: Robot) -> None:
    ik = make_ik()
    arms = robot.group("arms")
    assert list(ik.arm_indices) == list(arms)
    assert ik.arm_joint_names == robot.group_names("arms")
    # (the official MJCF rounds the wrist_roll limit ±1.972222054 to ±1.97222)
    assert ik.q_lower == pytest.approx(robot.q_lower[arms], abs=1e-5)
    assert ik.q_upper == pytest.approx(robot.q_upper[arms], abs=1e-5)


def test_end_effectors_are_5cm_beyond_the_wrist_yaw_joints(make_ik: IKFactory, model: pin.Model,
                                                           robot: Robot) -> None:
    q_body = random_body(robot, np.random.default_rng(1))
    left, right = make_ik().end_effector_poses(q_body)
    data = model.createData()
    q = pin.neutral(model)
    for name, value in zip(robot.joint_names, q_body, strict=True):
        q[model.idx_qs[model.getJointId(name)]] = value
    pin.forwardKinematics(model, data, q)
    for side, T in (("left", left), ("right", right)):
        wrist = data.oMi[model.getJointId(f"{side}_wrist_yaw_joint")]
        assert T[:3, :3] == pytest.approx(wrist.rotation, abs=1e-12)
        assert T[:3, 3] == pytest.approx(wrist.translation + wrist.rotation @ [0.05, 0, 0], abs=1e-12)


def test_reaches_forward_kinematics_targets_from_nearby(make_ik: IKFactory, robot: Robot) -> None:
    arms = robot.group("arms")
    ik = make_ik()
    rng = np.random.default_rng(2)
    iterations = []
    for _ in range(60):
        q_goal = random_body(robot, rng)
        left, right = ik.end_effector_poses(q_goal)
        q_measured = q_goal.copy()
        q_measured[arms] += rng.uniform(-0.01, 0.01, arms.size)
        result = ik.solve(left, right, q_measured)
        assert result.ok
        reached = q_measured.copy()
        reached[arms] = result.q_arm
        for target, pose in zip((left, right), ik.end_effector_poses(reached), strict=True):
            assert np.linalg.norm(pose[:3, 3] - target[:3, 3]) < 1e-3
            assert rotation_angle(pose, target) < 0.01
        assert result.pos_err_m.max() < 1e-3
        iterations.append(result.iterations)
    assert np.median(iterations) <= 4  # few kinematics evaluations: the cost of a warm-started solve


@pytest.mark.parametrize(("posture_weight", "tolerance_m"), [(0.0, 1e-4), (ArmIKConfig.posture_weight, 2e-3)])
def test_tracking_settles_on_the_target(make_ik: IKFactory, robot: Robot, posture_weight: float,
                                        tolerance_m: float) -> None:
    """Solving again from the joints it commanded (perfect tracking): the ‖q − q_measured‖ term fades, so
    without a posture term the target is reached exactly; the small default posture term stays within 2 mm."""
    arms = robot.group("arms")
    ik = make_ik(ArmIKConfig(filter_weights=(1.0,), posture_weight=posture_weight))
    rng = np.random.default_rng(3)
    for _ in range(10):
        q_goal = random_body(robot, rng)
        left, right = ik.end_effector_poses(q_goal)
        q = q_goal.copy()
        q[arms] += rng.uniform(-0.05, 0.05, arms.size)
        for _ in range(50):
            result = ik.solve(left, right, q)
            assert result.ok
            q[arms] = result.q_arm
        assert result.pos_err_m.max() < tolerance_m


def test_finds_the_minimum_of_its_objective(make_ik: IKFactory, model: pin.Model, robot: Robot) -> None:
    """Against a general bounded minimizer on the same objective, from the IK's own answer."""
    arms = robot.group("arms")
    config = ArmIKConfig(filter_weights=(1.0,), posture_weight=0.02, max_iterations=100)  # OpenWBT weights
    ik = make_ik(config)
    data = model.createData()
    frames = [model.getFrameId(f) for f in ("left_ee", "right_ee")]
    rng = np.random.default_rng(4)

    for case in range(6):
        q_goal = random_body(robot, rng, margin=0.0)
        left, right = ik.end_effector_poses(q_goal)
        if case % 2:  # out of reach: the bounds and the compromise between terms matter
            left[:3, 3] += [0.3, 0.2, 0.1]
        q_measured = q_goal.copy()
        q_measured[arms] = np.clip(q_goal[arms] + rng.normal(0, 0.2, 14), ik.q_lower, ik.q_upper)
        q_full = pin.neutral(model)
        idx_q = [model.idx_qs[model.getJointId(n)] for n in robot.joint_names]
        q_full[idx_q] = q_measured
        arm_q = [idx_q[i] for i in arms]

        def objective(q_arm: np.ndarray, q_full=q_full, arm_q=arm_q, q_measured=q_measured,
                      targets=(left, right)) -> float:
            q_full = q_full.copy()
            q_full[arm_q] = q_arm
            pin.framesForwardKinematics(model, data, q_full)
            cost = 0.0
            for frame, target in zip(frames, targets, strict=True):
                pose = data.oMf[frame]
                cost += config.position_weight * np.sum((pose.translation - target[:3, 3]) ** 2)
                cost += config.rotation_weight * np.sum(pin.log3(pose.rotation @ target[:3, :3].T) ** 2)
            d = q_arm - q_measured[arms]
            return cost + config.posture_weight * q_arm @ q_arm + config.measured_weight * d @ d

        result = ik.solve(left, right, q_measured)
        assert result.ok
        best = minimize(objective, result.q_arm, method="L-BFGS-B", bounds=list(zip(ik.q_lower, ik.q_upper,
                        strict=True)), options={"ftol": 1e-14, "gtol": 1e-10, "maxiter": 2000})
        # within the solver's stopping rule (predicted relative cost reduction below cost_tolerance)
        assert objective(result.q_arm) <= best.fun * (1.0 + 2.0 * config.cost_tolerance) + 1e-9


def test_respects_joint_bounds(make_ik: IKFactory, robot: Robot) -> None:
    arms = robot.group("arms")
    ik = make_ik(ArmIKConfig())  # filtered output too
    rng = np.random.default_rng(5)
    active = solved = 0
    for case in range(40):
        q_goal = random_body(robot, rng, margin=0.0)
        left, right = ik.end_effector_poses(q_goal)
        left[:3, 3] += rng.normal(0, 0.3, 3)  # mostly out of reach
        right[:3, 3] += rng.normal(0, 0.3, 3)
        q_measured = random_body(robot, rng, margin=0.0)
        if case % 4 == 0:  # measured a little beyond the limits
            q_measured[arms] = robot.q_upper[arms] + 0.01
        result = ik.solve(left, right, q_measured)
        if result.ok:
            solved += 1
            assert np.all(result.q_arm >= ik.q_lower) and np.all(result.q_arm <= ik.q_upper)
            active += int(np.sum((result.q_arm == ik.q_lower) | (result.q_arm == ik.q_upper)))
    assert solved >= 36
    assert active > 0  # some solutions lie on a bound, so the bounds were actually enforced


@pytest.mark.parametrize(
    "spoil",
    [
        lambda T: T.__setitem__((0, 3), np.nan),
        lambda T: T.__setitem__((slice(0, 3), slice(0, 3)), 2.0 * T[:3, :3]),  # not a rotation
        lambda T: T.__setitem__((3, 0), 1.0),  # not homogeneous
    ],
    ids=["nan", "scaled-rotation", "bottom-row"],
)
def test_unusable_target_returns_the_measured_joints(make_ik: IKFactory, model: pin.Model, robot: Robot,
                                                     spoil: Callable[[np.ndarray], None]) -> None:
    arms = robot.group("arms")
    ik = make_ik()
    q_measured = random_body(robot, np.random.default_rng(6))
    left, right = ik.end_effector_poses(random_body(robot, np.random.default_rng(7)))
    spoil(right)
    result = ik.solve(left, right, q_measured)
    assert not result.ok
    assert result.iterations == 0
    assert np.array_equal(result.q_arm, q_measured[arms])
    assert result.tau_ff == pytest.approx(gravity(model, robot, q_measured), abs=1e-4)
    assert np.isnan(result.pos_err_m).all()


def test_iteration_cap_returns_the_best_point_so_far(make_ik: IKFactory, robot: Robot) -> None:
    arms = robot.group("arms")
    rng = np.random.default_rng(8)
    q_measured = random_body(robot, rng)
    targets = make_ik().end_effector_poses(random_body(robot, rng))

    start = make_ik(ArmIKConfig(max_iterations=1, filter_weights=(1.0,))).solve(*targets, q_measured)
    assert start.ok and not start.converged and start.iterations == 1
    assert np.array_equal(start.q_arm, q_measured[arms])  # no step taken yet
    errors = [start.pos_err_m.sum()]
    for cap in (3, 6, 50):
        result = make_ik(ArmIKConfig(max_iterations=cap, filter_weights=(1.0,))).solve(*targets, q_measured)
        assert result.ok and result.iterations <= cap
        errors.append(result.pos_err_m.sum())
    assert result.converged
    assert errors == sorted(errors, reverse=True) and errors[-1] < 0.5 * errors[0]  # each cap: closer


def test_failure_leaves_the_filter(make_ik: IKFactory, robot: Robot) -> None:
    """ok, failure, ok gives the same as ok, ok: a failed solve does not enter the output filter."""
    arms = robot.group("arms")
    rng = np.random.default_rng(8)
    q_measured = random_body(robot, rng)
    plain, interrupted = make_ik(ArmIKConfig()), make_ik(ArmIKConfig())
    near = q_measured.copy()
    near[arms] += 0.01
    goal = make_ik().end_effector_poses(near)
    first = [ik.solve(*goal, q_measured) for ik in (plain, interrupted)]
    assert all(r.ok for r in first)
    broken = goal[0].copy()
    broken[0, 3] = np.nan
    failed = interrupted.solve(broken, goal[1], q_measured)
    assert not failed.ok and np.array_equal(failed.q_arm, q_measured[arms])
    second = [ik.solve(*make_ik().end_effector_poses(q_measured), q_measured) for ik in (plain, interrupted)]
    assert second[0].ok and second[1].ok
    assert np.array_equal(second[0].q_arm, second[1].q_arm)


@pytest.mark.parametrize("config", [ArmIKConfig(), UNFILTERED], ids=["filtered", "unfiltered"])
def test_small_target_moves_give_small_joint_moves(make_ik: IKFactory, robot: Robot, config: ArmIKConfig) -> None:
    arms = robot.group("arms")
    left_arm = robot.group("left_arm")
    ik = make_ik(config)
    q = robot.default_q.copy()
    q[left_arm] = [-0.9, 0.15, 0.0, 0.5, 0.0, 0.0, 0.0]  # arm forward, away from singularities
    left, right = ik.end_effector_poses(q)
    steps = []
    for tick in range(100):  # 1 mm per tick to the left, then up
        left[:3, 3] += [0, 0.001, 0] if tick < 50 else [0, 0, 0.001]
        result = ik.solve(left, right, q)
        assert result.ok
        steps.append(result.q_arm - q[arms])
        q[arms] = result.q_arm
    steps = np.array(steps)
    assert np.abs(steps).max() < 0.006  # rad per mm of target motion
    assert np.abs(np.diff(steps, axis=0)).max() < 0.005  # no jumps, also where the direction changes
    assert result.pos_err_m[0] < 1e-3


def gravity(model: pin.Model, robot: Robot, q_body: np.ndarray) -> np.ndarray:
    """Arm gravity torques as the gradient of the potential energy (central differences)."""
    arms = robot.group("arms")
    data = model.createData()
    idx_q = [model.idx_qs[model.getJointId(n)] for n in robot.joint_names]
    q = pin.neutral(model)
    q[idx_q] = q_body
    torques = []
    for i in arms:
        up, down = q.copy(), q.copy()
        up[idx_q[i]] += 1e-6
        down[idx_q[i]] -= 1e-6
        energy_up = pin.computePotentialEnergy(model, data, up)
        torques.append((energy_up - pin.computePotentialEnergy(model, data, down)) / 2e-6)
    return np.array(torques)


def test_feed_forward_is_the_gravity_torque_at_the_answer(make_ik: IKFactory, model: pin.Model,
                                                          robot: Robot) -> None:
    arms = robot.group("arms")
    left_arm = robot.group("left_arm")
    ik = make_ik()
    rng = np.random.default_rng(9)
    q_goal = random_body(robot, rng)
    result = ik.solve(*ik.end_effector_poses(q_goal), q_goal)
    at_answer = q_goal.copy()
    at_answer[arms] = result.q_arm
    assert result.tau_ff == pytest.approx(gravity(model, robot, at_answer), abs=1e-4)
    # Upper arm held forward: gravity pulls the arm down (towards larger shoulder pitch), so the holding
    # torque about the pitch axis is negative: about 3.5 kg · g · 0.13 m ahead of the shoulder.
    q = robot.default_q.copy()
    q[left_arm] = [-np.pi / 2, 0.3, 0, 0, 0, 0, 0]
    held = ik.solve(*ik.end_effector_poses(q), q)
    assert -6.0 < held.tau_ff[0] < -3.0


def test_config_validation() -> None:
    for kwargs, message in [
        ({"position_weight": 0.0}, r"position_weight must be > 0"),
        ({"rotation_weight": -1.0}, r"rotation_weight must be >= 0"),
        ({"posture_weight": float("nan")}, r"posture_weight must be finite"),
        ({"min_clearance_m": -0.01}, r"min_clearance_m must be >= 0"),
        ({"posture_weight": 0.0, "measured_weight": 0.0}, r"posture_weight \+ measured_weight must be > 0"),
        ({"max_iterations": 0}, r"max_iterations must be >= 1"),
        ({"step_tolerance_rad": 0.0}, r"step_tolerance_rad must be > 0"),
        ({"filter_weights": (0.5, 0.6)}, r"filter_weights: weights: must sum to 1"),
        ({"left_frame": "x", "right_frame": "x"}, r"left_frame and right_frame are both 'x'"),
    ]:
        with pytest.raises(ValueError, match=message):
            ArmIKConfig(**kwargs)


def test_model_validation(robot: Robot) -> None:
    with pytest.raises(ValueError, match="must be fixed-base"):
        DualArmIK(build_pinocchio_model(robot, floating_base=True), robot.joint_names)
    model = build_pinocchio_model(robot)
    with pytest.raises(ValueError, match=r"frames missing from the Pinocchio model: \['hand'\]"):
        DualArmIK(model, robot.joint_names, ArmIKConfig(left_frame="hand"))
    with pytest.raises(KeyError, match="no_such_joint"):
        DualArmIK(model, [*robot.joint_names[:-1], "no_such_joint"])
    with pytest.raises(ValueError, match="chain of 'right_ee' is empty or has joints not in joint_names"):
        DualArmIK(model, robot.joint_names[:-7])  # right arm not in the list: its chain is unknown


def test_input_validation(robot: Robot) -> None:
    ik = DualArmIK(build_pinocchio_model(robot), robot.joint_names)
    left, right = ik.end_effector_poses(robot.default_q)
    with pytest.raises(ValueError, match=r"expected 29 body joint positions, got \(14,\)"):
        ik.solve(left, right, np.zeros(14))
    with pytest.raises(ValueError, match="q_measured has non-finite entries"):
        ik.solve(left, right, np.full(29, np.nan))
    with pytest.raises(ValueError, match=r"the right target must be 4x4, got shape \(3, 4\)"):
        ik.solve(left, right[:3], robot.default_q)


@pytest.fixture(scope="module")
def guarded_ik_factory(robot: Robot, mj_model) -> IKFactory:
    """The retarget node's IK: our model with the self-collision constraints."""
    from g1_teleop.retarget.self_collision import ArmCollisionModel

    model = build_pinocchio_model(robot)
    collision = ArmCollisionModel(robot, mj_model, model)

    def make(config: ArmIKConfig | None = None) -> DualArmIK:
        return DualArmIK(model, robot.joint_names, config, collision)

    return make


def arms_forward(robot: Robot) -> np.ndarray:
    left_arm = robot.group("left_arm")
    right_arm = robot.group("right_arm")
    q = robot.default_q.copy()
    q[left_arm] = [-0.9, 0.15, 0.0, 0.5, 0.0, 0.0, 0.0]  # forearms forward, hands apart
    q[right_arm] = [-0.9, -0.15, 0.0, 0.5, 0.0, 0.0, 0.0]
    return q


def test_a_50hz_path_stays_within_the_policy_arm_limiter(guarded_ik_factory: IKFactory, robot: Robot) -> None:
    """Hands drawing 5 cm circles at 0.08 m/s with their orientation held, sampled at 50 Hz, through the IK
    with its output filter and the policy's ±0.01 rad/tick limiter (WholeBodyTargetBuilder), the arm
    following the command exactly: the IK's answers never move a joint more than the limiter allows, so the
    limiter never clips (no distortion, no added lag) and the hands follow within the filter's lag.
    (±0.01 rad per 20 ms is 0.5 rad/s per joint: the wrists holding the orientation reach it near 0.1 m/s
    on this path; faster hands are slowed by the limiter, by design.)"""
    arms = robot.group("arms")
    from g1_teleop.control.default_pose_hold import DefaultPoseHold
    from g1_teleop.control.whole_body_target import WholeBodyTargetBuilder

    ik = guarded_ik_factory()
    builder = WholeBodyTargetBuilder(robot, DefaultPoseHold(robot))
    q = arms_forward(robot)
    left0, right0 = ik.end_effector_poses(q)
    radius, speed, dt = 0.05, 0.08, 0.02
    steps, errors = [], []
    hold = 50  # first the operator holds still (the arm settles on the IK's optimum), then one full circle
    for tick in range(-hold, int(2 * np.pi * radius / speed / dt) + 1):
        angle = speed / radius * max(tick, 0) * dt
        outward = radius * np.array([0.0, 1.0 - np.cos(angle), np.sin(angle)])  # away from the other hand
        left, right = left0.copy(), right0.copy()
        left[:3, 3] += outward
        right[:3, 3] += outward * [1.0, -1.0, 1.0]
        result = ik.solve(left, right, q)
        assert result.ok
        command = builder.step(SimpleNamespace(q=q.copy()), result.q_arm, result.tau_ff).q  # type: ignore[arg-type]
        if tick < 0:
            q[arms] = command[arms]
            continue
        steps.append(np.abs(result.q_arm - q[arms]).max())
        assert command[arms] == pytest.approx(result.q_arm, abs=1e-12)  # the limiter passed it unchanged
        q[arms] = command[arms]
        poses = ik.end_effector_poses(q)
        errors.append(max(np.linalg.norm(pose[:3, 3] - target[:3, 3])
                          for pose, target in zip(poses, (left, right), strict=True)))
    assert max(steps) <= builder.arm_step_limit_rad
    assert max(errors) < 0.005  # about a tick of lag at 0.08 m/s (1.6 mm per tick)


def test_an_unreachable_target_settles_at_the_closest_pose_without_oscillating(guarded_ik_factory: IKFactory,
                                                                              robot: Robot) -> None:
    """Targets 0.5–0.6 m beyond reach, tracked tick by tick through the ±0.01 rad limiter: the distance to
    the targets never grows, the arms come to rest, and the rest pose is the optimum (a fully converged solve
    from it does not move it)."""
    arms = robot.group("arms")
    ik = guarded_ik_factory()
    q = robot.default_q.copy()
    left, right = ik.end_effector_poses(q)
    left[:3, 3] += [0.5, 0.3, 0.2]
    right[:3, 3] += [0.6, -0.2, -0.1]
    distances, moves = [], []
    for _ in range(300):
        result = ik.solve(left, right, q)
        assert result.ok
        step = np.clip(result.q_arm - q[arms], -0.01, 0.01)
        moves.append(np.abs(step).max())
        q[arms] += step
        poses = ik.end_effector_poses(q)
        distances.append([np.linalg.norm(p[:3, 3] - t[:3, 3]) for p, t in zip(poses, (left, right), strict=True)])
    distances = np.array(distances)
    assert np.diff(distances, axis=0).max() < 5e-4  # never drifts away (0.5 mm: the filter's averaging)
    assert distances[-1].min() > 0.3 and max(moves[-20:]) < 1e-6  # still far (unreachable), and at rest
    settled = guarded_ik_factory(ArmIKConfig(filter_weights=(1.0,), max_iterations=200)).solve(left, right, q)
    assert settled.converged and np.abs(settled.q_arm - q[arms]).max() < 1e-3


def test_the_arm_passes_through_the_straight_elbow_smoothly(guarded_ik_factory: IKFactory, robot: Robot) -> None:
    """Near a singularity: the left hand moves at 0.05 m/s (50 Hz samples) along the line from a bent-elbow
    pose to the pose with the elbow straight (where the arm's Jacobian loses rank) and 3 cm further, then
    back, the arm following the policy's ±0.01 rad/tick limiter. The elbow crosses straight and turns back
    once, with the path; no joint is asked for more than 1.5 limiter steps in a tick; the hand stays on
    the path."""
    arms = robot.group("arms")
    left_arm = robot.group("left_arm")
    right_arm = robot.group("right_arm")
    ik = guarded_ik_factory()
    elbow = robot.joint_names.index("left_elbow_joint")
    q = robot.default_q.copy()
    q[left_arm] = [-0.9, 0.3, 0.0, 0.6, 0.0, 0.0, 0.0]
    q[right_arm] = [-0.9, -0.3, 0.0, 0.6, 0.0, 0.0, 0.0]
    straight = q.copy()
    straight[elbow] = 0.0
    left0, right0 = ik.end_effector_poses(q)
    line = ik.end_effector_poses(straight)[0][:3, 3] - left0[:3, 3]
    length = np.linalg.norm(line) + 0.03
    ticks = int(length / 0.05 / 0.02)
    path = np.concatenate([np.zeros(50), np.linspace(0.0, length, ticks), np.linspace(length, 0.0, ticks)])
    steps, elbows, errors = [], [], []
    for s in path:
        left = left0.copy()
        left[:3, 3] += line / np.linalg.norm(line) * s
        result = ik.solve(left, right0, q)
        assert result.ok
        steps.append(np.abs(result.q_arm - q[arms]).max())
        q[arms] += np.clip(result.q_arm - q[arms], -0.01, 0.01)
        elbows.append(q[elbow])
        errors.append(np.linalg.norm(ik.end_effector_poses(q)[0][:3, 3] - left[:3, 3]))
    steps, elbows, errors = (np.array(v[50:]) for v in (steps, elbows, errors))
    assert elbows.max() > 0.5 and elbows.min() < -0.1  # from bent, through straight, beyond
    moves = np.diff(elbows)
    moves = moves[np.abs(moves) > 1e-6]
    assert np.count_nonzero(np.diff(np.sign(moves))) == 1, moves  # one reversal: where the path turns
    assert steps.max() < 0.015, steps.max()
    assert errors.max() < 0.005, errors.max()
