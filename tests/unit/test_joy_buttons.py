"""Operator actions from a Joy device's buttons: each acts on the press of its button."""

from g1_teleop.hardware.bridge_safety import OperatorAction, OperatorEvent
from g1_teleop.hardware.joy_buttons import JoyButtons


def test_an_action_acts_once_per_press():
    warnings = []
    joy = JoyButtons({OperatorAction.START: 0, OperatorAction.ESTOP: 3})

    def press(*held):
        return joy.presses([int(i in held) for i in range(8)], lambda kind, text: warnings.append(kind))

    assert press(0) == [OperatorEvent(OperatorAction.START, "joy button 0")]
    assert press(0) == []  # held: no new press
    assert press(0, 3) == [OperatorEvent(OperatorAction.ESTOP, "joy button 3")]
    assert press() == []
    assert press(3) == [OperatorEvent(OperatorAction.ESTOP, "joy button 3")]
    assert warnings == []


def test_a_button_the_device_does_not_have_is_warned_about():
    warnings = []
    joy = JoyButtons({OperatorAction.ACTIVATE: 10})
    assert joy.presses([1, 1], lambda kind, text: warnings.append((kind, text))) == []
    assert warnings == [("joy_buttons", "joy has 2 buttons; joy_activate_button = 10 is not one of them")]
