from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from g1_teleop.control.default_pose_hold import DefaultPoseHold
from g1_teleop.control.gains import JointGains
from g1_teleop.control.whole_body_target import MAX_CATCH_UP_PERIODS, WholeBodyTargetBuilder


def state(q):
    return SimpleNamespace(q=q, dq=np.zeros(29), world_q_pelvis=np.array([1.0, 0, 0, 0]), pelvis_w_pelvis=np.zeros(3))


def test_arms_start_from_the_measured_pose_and_move_at_most_the_step_limit(robot):
    arms, lower = robot.group("arms"), robot.group("lower_body")
    builder = WholeBodyTargetBuilder(robot, DefaultPoseHold(robot), arm_step_limit_rad=0.01)
    q = robot.default_q.copy()
    q[arms] += 0.2  # measured arms away from the default
    far = robot.default_q[arms] - 1.0
    previous = q[arms]
    for _ in range(20):
        target = builder.step(state(q), far, np.ones(14))
        step = np.abs(target.q[arms] - previous)
        assert step.max() <= 0.01 + 1e-12
        previous = target.q[arms]
    np.testing.assert_allclose(target.q[lower], robot.default_q[lower])
    np.testing.assert_array_equal(target.tau_ff[arms], np.ones(14))
    assert np.all(target.tau_ff[lower] == 0)


@pytest.mark.parametrize(("periods", "steps"), [(0, 1), (1, 1), (2, 2), (3, 3), (10, 3)])
def test_a_tick_after_skipped_periods_takes_their_steps_up_to_the_catch_up_bound(robot, periods, steps):
    arms = robot.group("arms")
    builder = WholeBodyTargetBuilder(robot, DefaultPoseHold(robot), arm_step_limit_rad=0.01)
    q = robot.default_q.copy()
    target = builder.step(state(q), q[arms] - 1.0, None, periods)
    assert MAX_CATCH_UP_PERIODS == 3
    np.testing.assert_allclose(np.abs(target.q[arms] - q[arms]).max(), 0.01 * steps)


def test_no_arm_target_holds_the_arms(robot):
    builder = WholeBodyTargetBuilder(robot, DefaultPoseHold(robot))
    first = builder.step(state(robot.default_q), None, None)
    second = builder.step(state(robot.default_q + 0.1), None, None)
    np.testing.assert_array_equal(first.q, second.q)


def test_arm_targets_stay_inside_the_joint_limits(robot):
    builder = WholeBodyTargetBuilder(robot, DefaultPoseHold(robot), arm_step_limit_rad=10.0)
    arms = robot.group("arms")
    target = builder.step(state(robot.default_q), robot.q_upper[arms] + 1.0, None)
    np.testing.assert_array_equal(target.q[arms], robot.q_upper[arms])


class Walker(DefaultPoseHold):
    """The default pose, walking when told."""

    walking = False


def test_the_walking_pose_replaces_the_ik_targets_while_walking(robot):
    arms, lower_body = robot.group("arms"), Walker(robot)
    builder = WholeBodyTargetBuilder(robot, lower_body, arm_step_limit_rad=10.0, walking_pose=True)
    ik_q = robot.default_q[arms] + 0.1
    np.testing.assert_allclose(builder.step(state(robot.default_q), ik_q, np.ones(14)).q[arms], ik_q)
    lower_body.walking = True
    target = builder.step(state(robot.default_q), ik_q, np.ones(14))
    np.testing.assert_array_equal(target.q[arms], robot.default_q[arms])
    assert np.all(target.tau_ff[arms] == 0)
    ik_only = WholeBodyTargetBuilder(robot, lower_body, arm_step_limit_rad=10.0)  # walking_pose off: the IK
    np.testing.assert_allclose(ik_only.step(state(robot.default_q), ik_q, None).q[arms], ik_q)


class Switching(DefaultPoseHold):
    """The default pose with gains set from outside."""

    def __init__(self, robot, gains: JointGains) -> None:
        super().__init__(robot)
        self.gains = gains

    def targets(self, state):
        return replace(super().targets(state), gains=self.gains)


def test_the_command_carries_the_lower_bodys_gains_and_says_when_they_change(robot):
    default = JointGains.profile(robot)
    stiff_waist = JointGains(np.where(np.isin(np.arange(29), robot.group("waist")), 900.0, default.kp), default.kd)
    lower_body = Switching(robot, default)
    builder = WholeBodyTargetBuilder(robot, lower_body)
    first = builder.step(state(robot.default_q), None, None)
    assert first.gains == default and first.gains_changed  # the first command's gains are always new
    assert not builder.step(state(robot.default_q), None, None).gains_changed
    lower_body.gains = stiff_waist
    changed = builder.step(state(robot.default_q), None, None)
    assert changed.gains == stiff_waist and changed.gains_changed
    assert changed.gains.kp[robot.group("waist")].tolist() == [900.0] * 3
    assert not builder.step(state(robot.default_q), None, None).gains_changed
