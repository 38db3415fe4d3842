import numpy as np
import pytest

from g1_teleop.arm_ik import DualArmIK
from g1_teleop.bench import IK_CASE_KINDS, ik_target_set
from g1_teleop.robot import build_pinocchio_model
from g1_teleop.self_collision import ClearanceMonitor


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
