from types import SimpleNamespace

import numpy as np

from g1_teleop.control.default_pose_hold import DefaultPoseHold
from g1_teleop.control.whole_body_target import WholeBodyTargetBuilder
from g1_teleop.core.robot_description import ARM_INDICES


def state(q):
    return SimpleNamespace(q=q, dq=np.zeros(29), world_q_pelvis=np.array([1.0, 0, 0, 0]), pelvis_w_pelvis=np.zeros(3))


def test_arms_start_from_the_measured_pose_and_move_at_most_the_step_limit(robot):
    builder = WholeBodyTargetBuilder(robot, DefaultPoseHold(robot), arm_step_limit_rad=0.01)
    q = robot.default_q.copy()
    q[ARM_INDICES] += 0.2  # measured arms away from the default
    far = robot.default_q[ARM_INDICES] - 1.0
    previous = q[ARM_INDICES]
    for _ in range(20):
        target = builder.step(state(q), far, np.ones(14))
        step = np.abs(target.q[ARM_INDICES] - previous)
        assert step.max() <= 0.01 + 1e-12
        previous = target.q[ARM_INDICES]
    np.testing.assert_allclose(target.q[: ARM_INDICES.start], robot.default_q[: ARM_INDICES.start])
    np.testing.assert_array_equal(target.tau_ff[ARM_INDICES], np.ones(14))
    assert np.all(target.tau_ff[: ARM_INDICES.start] == 0)


def test_no_arm_target_holds_the_arms(robot):
    builder = WholeBodyTargetBuilder(robot, DefaultPoseHold(robot))
    first = builder.step(state(robot.default_q), None, None)
    second = builder.step(state(robot.default_q + 0.1), None, None)
    np.testing.assert_array_equal(first.q, second.q)


def test_arm_targets_stay_inside_the_joint_limits(robot):
    builder = WholeBodyTargetBuilder(robot, DefaultPoseHold(robot), arm_step_limit_rad=10.0)
    target = builder.step(state(robot.default_q), robot.q_upper[ARM_INDICES] + 1.0, None)
    np.testing.assert_array_equal(target.q[ARM_INDICES], robot.q_upper[ARM_INDICES])
