"""The teleoperable waist: the policy takes the waist with the arms from teleop/arm_target, the built-in standing
controller follows it within its limits and rate while the legs keep the robot balanced (closed loop in MuJoCo),
and controllers that drive the waist themselves say so."""

from __future__ import annotations

import numpy as np
import pytest

from g1_teleop.control.default_pose_hold import DefaultPoseHold
from g1_teleop.control.leg_ik import StanceModel
from g1_teleop.control.operator_commands import JoystickMapping
from g1_teleop.control.policy_inputs import PolicyInputs, RefusedInput
from g1_teleop.control.squat_locomotion import SquatLocomotionController
from g1_teleop.control.standing_controller import StandingConfig, StandingController
from g1_teleop.control.tick_inputs import TickInputs
from g1_teleop.control.whole_body_target import WholeBodyTargetBuilder
from g1_teleop.core.limits import JointCommand
from g1_teleop.core.modes import Mode
from g1_teleop.sim.simulator import SimConfig, Simulator


@pytest.fixture(scope="module")
def stance(robot) -> StanceModel:
    return StanceModel.for_robot(robot)


def test_the_policy_takes_the_waist_with_the_arms_or_the_arms_alone(robot):
    tick = TickInputs(True, 0.1, 0.5)
    inputs = PolicyInputs(robot, tick, JoystickMapping(axes=(1, 4, 1, 0, 3), buttons=(0, 1), joy_timeout_s=0.5,
                                                       cmd_vel_timeout_s=0.5))
    arms, waist = list(robot.group_names("arms")), list(robot.group_names("waist"))
    names = [*reversed(waist), *arms]  # any order: by name
    inputs.arm_target(names, [0.3, 0.2, 0.1, *np.linspace(0, 1, 14)], [], [0.0] * 17, 5, 1.0)
    np.testing.assert_allclose(tick.arm.waist_q, [0.1, 0.2, 0.3])  # yaw, roll, pitch: the waist group's order
    np.testing.assert_allclose(tick.arm.q, np.linspace(0, 1, 14))
    inputs.arm_target(arms, list(np.zeros(14)), [], [], 6, 1.1)
    assert tick.arm.waist_q is None
    with pytest.raises(RefusedInput, match="the 14 arm joints, and the 3 waist joints or none"):
        inputs.arm_target([*arms, waist[0]], [0.0] * 15, [], [], 7, 1.2)


def test_the_standing_controller_follows_the_waist_within_its_limits_and_stays_balanced(robot, mj_model, stance):
    config = StandingConfig()
    controller = StandingController(robot, stance, config)
    sim = Simulator(robot, mj_model, SimConfig(gantry=False))
    builder = WholeBodyTargetBuilder(robot, controller)
    waist = robot.group("waist")
    previous, z = np.zeros(3), []
    for tick in range(int(8.0 / 0.02)):
        t = tick * 0.02
        wanted = np.array([1.0 * np.sin(0.5 * np.pi * t), -0.5, 0.8]) if t < 6.0 else np.zeros(3)
        assert controller.command_waist(wanted)
        target = builder.step(sim.state(), None, None)
        assert np.abs(target.q[waist] - previous).max() <= config.waist_step_limit_rad + 1e-12
        assert np.all(np.abs(target.q[waist]) <= np.array(config.waist_limit_rad) + 1e-12)
        previous = target.q[waist]
        sim.step_control_period(JointCommand(target.q, np.zeros(29), target.tau_ff, target.gains.kp, target.gains.kd))
        z.append(sim.state().world_p_pelvis[2])
        if abs(t - 5.0) < 1e-9:
            # held at the limits (roll and pitch), the measured waist there within 0.05 rad
            np.testing.assert_allclose(target.q[waist][1:], [-0.2, 0.3], atol=1e-9)
            np.testing.assert_allclose(sim.state().q[waist][1:], [-0.2, 0.3], atol=0.05)
    assert min(z) > 0.72  # standing all along (no fall with the torso turned, leaned and bent)
    np.testing.assert_allclose(sim.state().q[waist], 0.0, atol=0.05)  # and back to 0


def test_controllers_that_drive_the_waist_themselves_do_not_take_it(robot, stance):
    assert not DefaultPoseHold(robot).command_waist(np.zeros(3))
    squat = StandingController(robot, stance)
    controller = SquatLocomotionController(squat)
    assert controller.command_waist(np.array([0.1, 0.0, 0.0]))
    controller.mode = Mode.LOCOMOTION  # (as after a switch to walking: the walk part holds the waist)
    assert not controller.command_waist(np.array([0.1, 0.0, 0.0]))
