"""Self-collision: the MuJoCo clearance monitor, the IK's sphere proxies (conservative, with exact
gradients) and the IK's clearance constraints on the bench's seeded target set."""

import casadi as ca
import numpy as np
import pinocchio as pin
import pytest

from g1_teleop.core.pinocchio_model import build_pinocchio_model
from g1_teleop.core.symbolic_kinematics import joint_placements
from g1_teleop.retarget.arm_ik import ArmIKConfig, DualArmIK
from g1_teleop.retarget.self_collision import ArmCollisionModel, ClearanceMonitor
from g1_teleop.tools.bench.ik import IK_CASE_KINDS, ik_target_set


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
    arm = robot.group("arms")
    q[arm] = rng.uniform(robot.q_lower[arm], robot.q_upper[arm])
    return q


@pytest.fixture(scope="module")
def proxy_clearance(proxies, pin_model, robot):
    """Body joints (DDS order) -> (distance (k,), its gradient over the model's q (k, nq)) of every monitored
    pair, through the collision model's clearance function; the gradient from its directions and the
    sphere centres' Jacobians (AD), as the IK assembles it."""
    q = ca.SX.sym("q", pin_model.nq)
    placements = joint_placements(pin_model, q, proxies.joints)
    centers = proxies.sphere_centers(placements)
    distance, direction = proxies.clearance_function()(centers, proxies.static_poses(placements))
    function = ca.Function("proxies", [q], [distance, direction, ca.jacobian(ca.vec(centers), q)])
    first, second = proxies.pair_spheres()
    idx_q = [pin_model.idx_qs[pin_model.getJointId(n)] for n in robot.joint_names]

    def evaluate(q_body):
        q_model = pin.neutral(pin_model)
        q_model[idx_q] = q_body
        d, n, J = (np.asarray(v) for v in function(q_model))
        J = np.concatenate([J.reshape(-1, 3, pin_model.nq), np.zeros((1, 3, pin_model.nq))])  # last: no sphere
        gradient = np.einsum("kx,kxj->kj", n.T, J[first] - J[second])
        return d[:, 0], gradient[:, idx_q]

    return evaluate


def test_proxies_never_report_more_clearance_than_the_mujoco_geoms(robot, monitor, proxy_clearance):
    """The sphere covers contain the geoms: where the proxies are clear, MuJoCo's exact distance is at least
    as large (and not much larger: the covers are tight)."""
    rng = np.random.default_rng(11)
    excess = []
    for _ in range(300):
        q = random_arms(robot, rng)
        smallest = min(float(proxy_clearance(q)[0].min()), monitor.search_range_m)
        exact = monitor.clearance(q).distance_m
        if smallest >= 0.0:
            assert smallest <= exact + 1e-9
            excess.append(exact - smallest)
        else:
            assert exact < monitor.search_range_m  # in contact for the proxies: close for MuJoCo too
    assert len(excess) > 100 and np.percentile(excess, 95) < 0.02


def test_clearance_gradients_match_finite_differences(robot, proxy_clearance):
    rng = np.random.default_rng(12)
    arm = robot.group("arms")
    for _ in range(20):
        q = random_arms(robot, rng)
        distance, gradient = proxy_clearance(q)
        dq = np.zeros(q.size)
        dq[arm] = rng.normal(0.0, 1e-6, len(arm))
        moved, _ = proxy_clearance(q + dq)
        close = distance < 0.3  # pairs of groups that may not touch sit 1 km away, with the same gradients
        assert moved[close] - distance[close] == pytest.approx(gradient[close] @ dq, abs=1e-10)


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
