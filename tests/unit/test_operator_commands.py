"""The operator's joystick, cmd_vel and body → a lower-body controller's commands and mode requests."""

from __future__ import annotations

import numpy as np
import pytest

from g1_teleop.control.heading_follower import HeadingFollower, HeadingFollowerConfig
from g1_teleop.control.operator_commands import (
    HeadingCommand,
    JoystickMapping,
    JoystickSample,
    OperatorCommands,
    SquatHeightCommand,
    VelocityCommand,
)
from g1_teleop.control.squat_command import SquatCommand, SquatCommandLimits
from g1_teleop.core.modes import Mode

MAPPING = JoystickMapping(axes=(1, 4, 1, 0, 3), buttons=(0, 1), joy_timeout_s=0.5, cmd_vel_timeout_s=0.5)


class Recorder:
    """A lower-body controller that records its commands."""

    max_velocity = np.array([0.3, 0.2, 0.5])
    min_velocity = np.array([0.0, 0.0, 0.1])

    def __init__(self, walking: bool = False) -> None:
        self.walking = walking
        self.squat: tuple[float, float] | None = None
        self.height_m: float | None = None
        self.velocity: tuple[float, float, float] | None = None

    def command_squat(self, height_rate: float, pitch_rate: float, height_m: float | None = None) -> None:
        self.squat, self.height_m = (height_rate, pitch_rate), height_m

    def command_velocity(self, vx: float, vy: float, wz: float) -> None:
        self.velocity = (vx, vy, wz)


def test_sticks_give_squat_rates_and_a_fraction_of_the_full_velocity():
    commands, controller = OperatorCommands(MAPPING), Recorder()
    commands.put_joy(JoystickSample(axes=(0.5, -1.0, 0.0, 1.0, float("nan")), buttons=(), received_s=10.0))
    commands.apply(controller, now_s=10.2, robot_yaw_rad=0.0)
    assert controller.squat == (-1.0, 0.0)  # height axis 1, pitch axis 4 (NaN counts as 0)
    np.testing.assert_allclose(controller.velocity, [-0.3, 0.1, 0.5])  # vx axis 1, vy axis 0, wz axis 3


def test_old_sticks_count_as_released_and_a_fresh_cmd_vel_overrides_them():
    commands, controller = OperatorCommands(MAPPING), Recorder()
    commands.put_joy(JoystickSample(axes=(0.5, 1.0), buttons=(), received_s=10.0))
    commands.apply(controller, now_s=10.6, robot_yaw_rad=0.0)
    assert controller.squat == (0.0, 0.0) and controller.velocity == (0.0, 0.0, 0.0)
    commands.put_joy(JoystickSample(axes=(0.5, 1.0), buttons=(), received_s=10.6))
    commands.put_cmd_vel(VelocityCommand((0.25, -0.1, float("inf")), received_s=10.6))
    commands.apply(controller, now_s=10.7, robot_yaw_rad=0.0)
    assert controller.squat == (1.0, 0.0)
    assert controller.velocity[:2] == (0.25, -0.1) and np.isfinite(controller.velocity[2])
    commands.put_joy(JoystickSample(axes=(0.5, 1.0), buttons=(), received_s=11.0))
    commands.apply(controller, now_s=11.15, robot_yaw_rad=0.0)  # cmd_vel too old: the sticks again
    np.testing.assert_allclose(controller.velocity, [0.3, 0.1, 0.0])


def test_a_button_press_requests_its_mode_once():
    commands = OperatorCommands(MAPPING)
    assert commands.put_joy(JoystickSample((), (1, 1), 0.0)) == [Mode.LOCOMOTION, Mode.SQUAT]
    assert commands.put_joy(JoystickSample((), (1, 0), 0.1)) == []  # held
    assert commands.put_joy(JoystickSample((), (0, 1), 0.2)) == [Mode.SQUAT]
    assert commands.put_joy(JoystickSample((), (1,), 0.3)) == [Mode.LOCOMOTION]  # a short buttons array


def test_the_mapping_is_checked():
    with pytest.raises(ValueError, match="needs 5 axes"):
        JoystickMapping((1, 4), (0, 1), 0.5, 0.5)
    with pytest.raises(ValueError, match="must be >= 0"):
        JoystickMapping((1, 4, 1, 0, -3), (0, 1), 0.5, 0.5)


def test_a_fresh_squat_height_replaces_the_height_stick_and_the_command_moves_at_full_stick_rate():
    commands, controller = OperatorCommands(MAPPING), Recorder()
    commands.put_joy(JoystickSample(axes=(0.0, 1.0, 0.0, 0.0, 0.3), buttons=(), received_s=10.0))
    commands.put_squat_height(SquatHeightCommand(0.6, received_s=10.0))
    commands.apply(controller, now_s=10.2, robot_yaw_rad=0.0)
    assert controller.height_m == 0.6 and controller.squat == (1.0, 0.3)  # the pitch stick still counts
    commands.apply(controller, now_s=10.6, robot_yaw_rad=0.0)  # older than cmd_vel_timeout_s: the sticks again
    assert controller.height_m is None

    limits = SquatCommandLimits((0.45, 0.75), (0.0, 0.5), (0.0016, 0.002), (0.75, 0.0))
    command = SquatCommand(limits)
    heights = []
    for _ in range(150):
        command.integrate(1.0, 0.0, height_m=0.6)  # (the stick is overridden)
        heights.append(command.value[0])
    steps = -np.diff([0.75, *heights])
    assert steps.max() <= 0.0016 + 1e-12 and heights[-1] == pytest.approx(0.6)  # 94 ticks at full rate, then there
    command.integrate(0.0, 0.0, height_m=0.2)
    assert command.value[0] == pytest.approx(0.6 - 0.0016)  # a target below the range: down at full rate, clipped


def test_while_walking_a_fresh_heading_turns_the_robot_as_much_as_the_operator():
    commands, controller = OperatorCommands(MAPPING), Recorder(walking=True)
    commands.put_joy(JoystickSample(axes=(0.0, 1.0, 0.0, 1.0), buttons=(), received_s=10.0))  # vx and turn sticks
    commands.put_heading(HeadingCommand(2.0, received_s=10.0))
    commands.apply(controller, now_s=10.1, robot_yaw_rad=-0.5)  # engaged: the headings' offset is kept
    np.testing.assert_allclose(controller.velocity, [0.3, 0.0, 0.0])  # the sticks' vx; the heading's turn: none
    commands.put_heading(HeadingCommand(2.3, received_s=10.2))  # the operator turned 0.3 rad left
    commands.apply(controller, now_s=10.2, robot_yaw_rad=-0.5)
    rate = controller.velocity[2]
    assert rate == pytest.approx(1.5 * (0.3 - 0.05))  # the default gain beyond the deadband
    commands.apply(controller, now_s=10.3, robot_yaw_rad=-0.26)  # nearly there: the controller's least rate
    assert controller.velocity[2] == pytest.approx(0.1)
    commands.apply(controller, now_s=10.35, robot_yaw_rad=-0.2)  # the robot turned as much: no more
    assert controller.velocity[2] == 0.0
    commands.put_joy(JoystickSample(axes=(0.0, 1.0, 0.0, 1.0), buttons=(), received_s=10.8))
    commands.apply(controller, now_s=10.8, robot_yaw_rad=-0.5)  # the heading is stale: the turn stick again
    assert controller.velocity[2] == pytest.approx(0.5) and commands.heading_follower.offset_rad is None


def test_a_heading_does_not_turn_a_standing_robot_and_engages_afresh_when_it_walks():
    commands, standing = OperatorCommands(MAPPING), Recorder(walking=False)
    commands.put_heading(HeadingCommand(0.0, received_s=10.0))
    commands.apply(standing, now_s=10.0, robot_yaw_rad=0.0)
    commands.put_heading(HeadingCommand(1.0, received_s=10.1))  # the operator turned while the robot stood
    commands.apply(standing, now_s=10.1, robot_yaw_rad=0.0)
    assert standing.velocity == (0.0, 0.0, 0.0)
    walking = Recorder(walking=True)
    commands.apply(walking, now_s=10.2, robot_yaw_rad=0.0)  # walking now: from here, not the turn missed
    assert walking.velocity[2] == 0.0


def test_the_heading_follower_wraps_the_error_and_stays_within_the_full_stick_rate():
    follower = HeadingFollower(HeadingFollowerConfig(gain_per_s=2.0, deadband_rad=0.0))
    assert follower.turn_rate(3.1, 3.1, 0.5) == 0.0
    assert follower.turn_rate(-3.1, 3.1, 0.5) == pytest.approx(2.0 * (2 * np.pi - 6.2))  # +0.083 rad across ±π
    assert follower.turn_rate(-2.0, 3.1, 0.5) == 0.5  # clipped
    assert follower.turn_rate(-3.1, 3.1, 0.5, min_rate_rad_s=0.3) == 0.3  # at least the controller's least rate
    with pytest.raises(ValueError, match="gain_per_s must be > 0"):
        HeadingFollowerConfig(gain_per_s=0.0)
