"""Self-collision: the MuJoCo clearance monitor, the IK's sphere proxies (conservative, with exact
gradients) and the IK's clearance constraints on the bench's seeded target set."""

import numpy as np
import pinocchio as pin
import pytest

from g1_teleop.arm_ik import ArmIKConfig, DualArmIK
from g1_teleop.bench import IK_CASE_KINDS, ik_target_set
from g1_teleop.robot import ARM_INDICES, build_pinocchio_model
from g1_teleop.self_collision import ArmCollisionModel, ClearanceMonitor


@pytest.fixture(scope="module")
def monitor(robot, mj_model):
    return ClearanceMonitor(robot, mj_model)


def test_default_pose_is_clear_and_a_hand_in_the_belly_is_not(robot, monitor):
    assert monitor.clearance(robot.default_q).distance_m > 0.05
    q = robot.default_q.copy()
    q[robot.joint_names.index("left_shoulder_roll_joint")] = -0.3  # arm across the body
    q[robot.joint_names.index("left_elbow_joint")] = 1.8
    hit = monitor.clearance(q)
    assert hit.distance_m < 0
    assert hit.links[0].startswith("left_") and hit.links[1] in ("pelvis", "torso_link")


def test_unknown_groups_are_refused(robot, mj_model):
    with pytest.raises(ValueError, match="unknown self-collision groups"):
        ClearanceMonitor(robot, mj_model, groups=("tail",))


def test_ik_target_set_is_seeded_and_has_each_kind(robot, monitor):
    ik = DualArmIK(build_pinocchio_model(robot, floating_base=False), robot.joint_names)
    first = ik_target_set(robot, ik, monitor, count=40, seed=3)
    again = ik_target_set(robot, ik, monitor, count=40, seed=3)
    assert [c.kind for c in first] == [k for k in IK_CASE_KINDS for _ in range(10)]
    np.testing.assert_array_equal(first[7].pelvis_T_left, again[7].pelvis_T_left)
    reach = [np.linalg.norm(c.pelvis_T_left[:3, 3] - [0.0, 0.1, 0.3]) for c in first]
    # unreachable targets lie 0.15–0.4 m beyond reachable ones from the shoulder (near (0, 0.1, 0.3))
    assert min(reach[10:20]) > 0.25 and np.median(reach[10:20]) > np.median(reach[:10]) + 0.1


@pytest.fixture(scope="module")
def pin_model(robot):
    return build_pinocchio_model(robot, floating_base=False)


@pytest.fixture(scope="module")
def proxies(robot, mj_model, pin_model):
    return ArmCollisionModel(robot, mj_model, pin_model)


def random_arms(robot, rng):
    q = robot.default_q.copy()
    arm = list(ARM_INDICES)
    q[arm] = rng.uniform(robot.q_lower[arm], robot.q_upper[arm])
    return q


def proxy_clearance(proxies, pin_model, robot, q_body, activation_m=0.05):
    data = pin_model.createData()
    q = pin.neutral(pin_model)
    q[[pin_model.idx_qs[pin_model.getJointId(n)] for n in robot.joint_names]] = q_body
    pin.computeJointJacobians(pin_model, data, q)
    proxies.place_static(data)
    return proxies.clearance(pin_model, data, activation_m), q


def test_proxies_never_report_more_clearance_than_the_mujoco_geoms(robot, monitor, proxies, pin_model):
    """The sphere covers contain the geoms: where the proxies are clear, MuJoCo's exact distance is at least
    as large (and not much larger: the covers are tight)."""
    rng = np.random.default_rng(11)
    excess = []
    for _ in range(300):
        q = random_arms(robot, rng)
        found, _ = proxy_clearance(proxies, pin_model, robot, q)
        exact = monitor.clearance(q).distance_m
        if found.smallest_m >= 0.0:
            assert found.smallest_m <= exact + 1e-9
            excess.append(exact - found.smallest_m)
        else:
            assert exact < monitor.search_range_m  # in contact for the proxies: close for MuJoCo too
    assert len(excess) > 100 and np.percentile(excess, 95) < 0.02


def test_clearance_gradients_match_finite_differences(robot, proxies, pin_model):
    rng = np.random.default_rng(12)
    arm_v = [pin_model.idx_vs[pin_model.getJointId(robot.joint_names[i])] for i in ARM_INDICES]
    checked = 0
    for _ in range(20):
        q_body = random_arms(robot, rng)
        found, q = proxy_clearance(proxies, pin_model, robot, q_body, activation_m=1.0)
        dv = np.zeros(pin_model.nv)
        dv[arm_v] = rng.normal(0.0, 1e-6, len(arm_v))
        data = pin_model.createData()
        pin.computeJointJacobians(pin_model, data, pin.integrate(pin_model, q, dv))
        moved = proxies.clearance(pin_model, data, 1.0)
        if moved.distance_m.shape != found.distance_m.shape:
            continue  # a different closest sphere: not differentiable across the switch
        assert moved.distance_m - found.distance_m == pytest.approx(found.gradient @ dv, abs=1e-10)
        checked += 1
    assert checked >= 15


def test_ik_keeps_the_minimum_clearance_on_the_seeded_targets(robot, monitor, proxies, pin_model):
    """A seeded subset of the bench's target set (every kind; near-collision starts often touch): every
    solution keeps min_clearance_m for MuJoCo's exact geometry."""
    ik = DualArmIK(pin_model, robot.joint_names, ArmIKConfig(filter_weights=(1.0,)), collision=proxies)
    cases = ik_target_set(robot, ik, monitor, count=120, seed=5)
    starts_in_contact = 0
    for case in cases:
        starts_in_contact += monitor.clearance(case.q_start).distance_m < ik.config.min_clearance_m
        result = ik.solve(case.pelvis_T_left, case.pelvis_T_right, case.q_start)
        assert result.ok, case.kind
        q = case.q_start.copy()
        q[ik.arm_indices] = result.q_arm
        assert monitor.clearance(q).distance_m >= ik.config.min_clearance_m, case.kind
        assert result.clearance_m >= ik.config.min_clearance_m
    assert starts_in_contact >= 5  # the constraints had work to do


def test_a_hand_sent_into_the_chest_stops_at_the_clearance(robot, monitor, proxies, pin_model):
    plain = DualArmIK(pin_model, robot.joint_names, ArmIKConfig(filter_weights=(1.0,)))
    guarded = DualArmIK(pin_model, robot.joint_names, ArmIKConfig(filter_weights=(1.0,), min_clearance_m=0.02),
                        collision=proxies)
    left, right = plain.end_effector_poses(robot.default_q)
    left[:3, 3] = [0.05, 0.05, 0.2]  # inside the chest box (x ±0.07 around 0.005, z 0.0–0.34 m above the waist)
    q = robot.default_q.copy()
    for ik in (plain, guarded):
        for _ in range(20):  # tracking: each solve starts from the last answer
            result = ik.solve(left, right, q)
            q[ik.arm_indices] = result.q_arm
        gap = monitor.clearance(q).distance_m
        if ik is plain:
            assert gap < 0.0
            q = robot.default_q.copy()
        else:
            assert result.ok and gap >= 0.02 and result.pos_err_m[0] > 0.02
