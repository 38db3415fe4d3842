"""SquatLocomotionController's mode switches on stand-in parts (no policies, no simulator): refusals with their
reasons, and the blends of targets, torques and gains tick by tick in both directions."""

from __future__ import annotations

import numpy as np
import pytest

from g1_teleop.control.gains import JointGains
from g1_teleop.control.lower_body import LowerBodyTarget
from g1_teleop.control.squat_locomotion import SquatLocomotionController
from g1_teleop.core.modes import Mode

WAIST = [12, 13, 14]
SQUAT_GAINS = JointGains(np.full(29, 100.0), np.full(29, 2.0))
WALK_GAINS = JointGains(np.where(np.isin(np.arange(29), WAIST), 900.0, 100.0),
                        np.where(np.isin(np.arange(29), WAIST), 9.0, 2.0))
STATE = object()  # the stand-in parts do not read the state


class StandInSquat:
    """Targets 0 rad with 1 N·m feed-forward; the command moves 0.01 per full stick and tick."""

    gains = SQUAT_GAINS

    def __init__(self, transition_ticks: int = 4) -> None:
        self.transition_ticks = transition_ticks
        self.squat_command = np.array([0.75, 0.0])
        self.resets = 0

    def command_squat(self, height_rate: float, pitch_rate: float, height_m: float | None = None) -> None:
        if height_m is not None:
            height_rate = float(np.clip((height_m - self.squat_command[0]) / 0.01, -1.0, 1.0))
        self.squat_command = self.squat_command + 0.01 * np.array([height_rate, pitch_rate])

    def reset(self) -> None:
        self.squat_command = np.array([0.75, 0.0])
        self.resets += 1

    def targets(self, state: object) -> LowerBodyTarget:
        return LowerBodyTarget(np.zeros(15), np.ones(15), self.gains)


class StandInWalk:
    """Targets 1 rad without feed-forward."""

    gains = WALK_GAINS
    max_velocity = np.array([0.3, 0.3, 0.3])
    min_velocity = np.zeros(3)

    def __init__(self, transition_ticks: int = 5) -> None:
        self.transition_ticks = transition_ticks
        self.command = np.zeros(3)
        self.resets = 0

    def command_velocity(self, vx: float, vy: float, wz: float) -> None:
        self.command = np.array([vx, vy, wz])

    def stop(self) -> None:
        self.command = np.zeros(3)

    def reset(self) -> None:
        self.stop()
        self.resets += 1

    def targets(self, state: object) -> LowerBodyTarget:
        return LowerBodyTarget(np.ones(15), np.zeros(15), self.gains)


def walking_controller(squat_ticks: int = 4, walk_ticks: int = 5):
    squat, walk = StandInSquat(squat_ticks), StandInWalk(walk_ticks)
    return SquatLocomotionController(squat, walk), squat, walk


def test_to_locomotion_the_squat_part_keeps_the_legs_while_the_gains_move_to_the_walk_parts():
    controller, squat, walk = walking_controller(squat_ticks=4)
    assert controller.request(Mode.LOCOMOTION) is None
    assert controller.walking and controller.mode is Mode.SQUAT
    for tick in range(4):
        assert controller.request(Mode.SQUAT) == f"a switch to LOCOMOTION is in progress ({4 - tick} ticks left)"
        controller.command_squat(-1.0, 0.0)  # frozen during the switch
        controller.command_velocity(0.3, 0.0, 0.0)  # held at zero until walking starts
        assert walk.resets == 0 and not walk.command.any()
        target = controller.targets(STATE)
        np.testing.assert_array_equal(target.q, 0.0)  # the squat part's legs
        np.testing.assert_array_equal(target.tau_ff, 1.0)
        assert target.gains == SQUAT_GAINS.interpolate(WALK_GAINS, tick / 4)
        assert target.gains.kp[12] == 100.0 + 200.0 * tick  # waist kp 100, 300, 500, 700, then the walk's 900
    assert squat.squat_command.tolist() == [0.75, 0.0]
    assert controller.mode is Mode.LOCOMOTION and walk.resets == 1  # the walk part starts from scratch
    first = controller.targets(STATE)
    np.testing.assert_array_equal(first.q, 1.0)
    assert first.gains == WALK_GAINS
    np.testing.assert_array_equal(first.gains.kp[WAIST], 900.0)


def test_back_to_squat_everything_blends_from_the_walk_part_to_the_squat_part():
    controller, squat, walk = walking_controller(squat_ticks=0, walk_ticks=5)
    assert controller.request(Mode.LOCOMOTION) is None and controller.mode is Mode.LOCOMOTION  # no ticks: at once
    controller.command_velocity(0.2, 0.0, 0.0)
    assert controller.request(Mode.SQUAT) == "stop first: SQUAT needs |vx|, |vy|, |wz| < 0.1 (now [0.2 0.  0. ])"
    controller.command_velocity(0.05, -0.05, 0.09)  # below the 0.1 threshold: stopped
    assert controller.request(Mode.SQUAT) is None
    assert squat.resets == 1 and not walk.command.any() and not controller.walking
    for tick in range(5):
        fraction = tick / 5
        target = controller.targets(STATE)
        np.testing.assert_allclose(target.q, 1.0 - fraction)
        np.testing.assert_allclose(target.tau_ff, fraction)
        assert target.gains == WALK_GAINS.interpolate(SQUAT_GAINS, fraction)
    assert controller.mode is Mode.SQUAT and not controller.transitioning
    after = controller.targets(STATE)
    np.testing.assert_array_equal(after.q, 0.0)
    assert after.gains == SQUAT_GAINS


def test_locomotion_is_refused_with_the_reason():
    controller = walking_controller()[0]
    controller.command_squat(-3.0, 0.0)  # 0.75 − 0.03 m: not above 0.72
    assert controller.request(Mode.LOCOMOTION) == ("stand up first: LOCOMOTION needs height > 0.72 m and pitch < "
                                                   "0.05 rad (now 0.72 m, 0.00 rad)")
    assert controller.request(Mode.STAND_HOLD) == "STAND_HOLD is not a mode of this controller (SQUAT, LOCOMOTION)"
    alone = SquatLocomotionController(StandInSquat())
    assert alone.request(Mode.LOCOMOTION).startswith(
        "no locomotion policy configured: the built-in controller stands and squats only; LOCOMOTION needs loco_config")
    assert alone.request(Mode.SQUAT) is None and not alone.walking
    np.testing.assert_array_equal(alone.max_velocity, 0.0)
    alone.command_velocity(0.3, 0.0, 0.0)  # nothing to walk with: ignored
    assert alone.targets(STATE).gains == SQUAT_GAINS
    assert controller.max_velocity == pytest.approx([0.3, 0.3, 0.3])


def test_switches_without_transition_ticks_happen_at_once():
    controller, squat, walk = walking_controller(squat_ticks=0, walk_ticks=0)
    assert controller.request(Mode.LOCOMOTION) is None
    assert controller.mode is Mode.LOCOMOTION and walk.resets == 1 and controller.targets(STATE).gains == WALK_GAINS
    assert controller.request(Mode.SQUAT) is None
    assert controller.mode is Mode.SQUAT and squat.resets == 1 and controller.targets(STATE).gains == SQUAT_GAINS
