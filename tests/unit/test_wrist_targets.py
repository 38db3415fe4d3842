"""retarget's wrist targets: the clutch made at the first step on the robot's wrists, the operator samples given
once each, the Joy ENGAGE button toggling on its press only (operator mode; unused in auto mode), an engage press
decided with its own sample's wrists (refused when they do not come), requests before the robot's state refused;
and the clutch's log lines, limited without losing the newest state."""

from __future__ import annotations

import numpy as np

from g1_teleop.retarget.clutch import ClutchConfig, ClutchState, ClutchTransition, Refused, WristPair
from g1_teleop.retarget.wrist_targets import ClutchLog, WristTargets


def at(x: float, y: float, z: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


ROBOT = WristPair(at(0.25, 0.2, 0.05), at(0.25, -0.2, 0.05))
HOME = WristPair(at(0.2, 0.18, -0.05), at(0.2, -0.18, -0.05))
OPERATOR = WristPair(at(0.4, 0.3, 0.3), at(0.4, -0.3, 0.3))
ENGAGE = 10


def pressed(down: bool) -> list[int]:
    buttons = [0] * 12
    buttons[ENGAGE] = int(down)
    return buttons


class Robot:
    """The robot's wrists, counting the forward kinematics asked for."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> WristPair:
        self.calls += 1
        return ROBOT


def shifted(wrists: WristPair, dz: float) -> WristPair:
    return WristPair(*(T @ at(0.0, 0.0, dz) for T in wrists))


def test_operator_mode_holds_until_the_button_is_pressed_then_follows_relatively() -> None:
    targets, robot = WristTargets("operator", ClutchConfig(), HOME, ENGAGE), Robot()
    assert isinstance(targets.engage(0.0, robot), Refused) and not targets.started  # no joint state yet
    assert targets.put_sample(OPERATOR, 1.0)
    step = targets.step(1.0, robot)
    assert targets.state is ClutchState.DISENGAGED and np.array_equal(step.targets.left, ROBOT.left)
    assert robot.calls == 1  # the clutch was made once, on the robot's wrists
    assert targets.joy(pressed(False), 1.01, 1.01, robot) is None
    assert targets.put_sample(shifted(OPERATOR, 0.1), 1.02)  # not seen by a step yet: the engage takes it
    engaged = targets.joy(pressed(True), 1.02, 1.02, robot)
    assert isinstance(engaged, ClutchTransition) and engaged.state is ClutchState.ENGAGED
    assert targets.joy(pressed(True), 1.03, 1.03, robot) is None  # held: no second toggle
    assert targets.put_sample(shifted(OPERATOR, 0.13), 1.04)
    np.testing.assert_allclose(targets.step(1.04, robot).targets.left, shifted(ROBOT, 0.03).left, atol=1e-12)
    targets.joy(pressed(False), 1.05, 1.05, robot)
    paused = targets.joy(pressed(True), 1.06, 1.06, robot)
    assert isinstance(paused, ClutchTransition) and paused.state is ClutchState.DISENGAGED


def test_an_engage_press_waits_for_the_wrists_of_its_own_sample() -> None:
    """After a gap in tracking the press may come before its sample's wrists: it is decided when they come (not
    refused on the wrists from before the gap), and refused only when they have not come stale_after_s later; a
    pause is at once."""
    targets, robot = WristTargets("operator", ClutchConfig(), HOME, ENGAGE), Robot()
    assert targets.put_sample(OPERATOR, 1.0)
    targets.step(1.0, robot)
    assert targets.step(1.5, robot).transitions == ()  # 0.5 s without a sample
    assert targets.joy(pressed(True), 1.5, 1.5, robot) is None  # its wrists are not in yet
    assert targets.engage_press(1.52, robot) is None
    assert targets.put_sample(shifted(OPERATOR, 0.1), 1.5)
    engaged = targets.engage_press(1.53, robot)
    assert isinstance(engaged, ClutchTransition) and engaged.state is ClutchState.ENGAGED
    assert targets.engage_press(1.54, robot) is None  # decided once
    targets.joy(pressed(False), 1.55, 1.55, robot)
    paused = targets.joy(pressed(True), 1.56, 1.56, robot)  # a pause does not wait
    assert isinstance(paused, ClutchTransition) and paused.state is ClutchState.DISENGAGED

    targets.joy(pressed(False), 2.0, 2.0, robot)
    assert targets.joy(pressed(True), 3.0, 3.0, robot) is None  # tracking lost: no sample comes
    assert targets.engage_press(2.99 + ClutchConfig().stale_after_s, robot) is None
    refused = targets.engage_press(3.01 + ClutchConfig().stale_after_s, robot)
    assert isinstance(refused, Refused) and "no valid hand tracking" in refused.reason
    assert targets.state is ClutchState.DISENGAGED


def test_a_sample_is_given_once_and_auto_mode_ignores_the_button() -> None:
    targets, robot = WristTargets("auto", ClutchConfig(), HOME, ENGAGE), Robot()
    assert targets.put_sample(OPERATOR, 2.0)
    assert not targets.put_sample(shifted(OPERATOR, 0.5), 2.0)  # a lockstep re-publication of the same stamp
    step = targets.step(2.0, robot)
    assert step.targets is targets.clutch.targets and step.targets.left is OPERATOR.left
    assert targets.state is ClutchState.ENGAGED
    assert targets.joy(pressed(True), 2.01, 2.01, robot) is None and targets.state is ClutchState.ENGAGED
    assert isinstance(targets.pause(2.02), Refused)
    assert targets.step(2.02, robot).transitions == ()  # no new sample: nothing to follow, still fresh


def test_the_clutch_log_says_each_change_without_flooding() -> None:
    log = ClutchLog(min_interval_s=1.0)

    def t(state: ClutchState, reason: str) -> ClutchTransition:
        return ClutchTransition(0.0, ClutchState.ENGAGED, state, reason)

    assert log.line(0.0) is None
    log.put([t(ClutchState.HOLDING, "no valid tracking for 200 ms")])
    assert log.line(0.0) == "clutch holding: no valid tracking for 200 ms"
    for k in range(10):  # tracking comes and goes
        log.put([t(ClutchState.ENGAGED, "tracking back"), t(ClutchState.HOLDING, "tracking invalid")])
        assert log.line(0.1 + k * 0.05) is None
    assert log.line(1.0) == "clutch holding: tracking invalid (20 clutch transitions since the last line)"
    assert log.line(5.0) is None
    log.put([t(ClutchState.HOMING, "going home")])
    assert log.line(5.0) == "clutch homing: going home"
