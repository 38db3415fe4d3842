"""The XR Joy layout: controllers and hand pinches → sensor_msgs/Joy axes and buttons; the pinch hysteresis; the
engage hold; the e-stop."""

from __future__ import annotations

import numpy as np
import pytest

from g1_teleop.core.xr_input_contract import JoyAxis, JoyButton
from g1_teleop.operator.hand_pinch import Pinch, pinch_closure
from g1_teleop.operator.webxr_client import synthetic_hand
from g1_teleop.operator.webxr_events import Controller, ControllersState, HandJoints, HandsTracking
from g1_teleop.operator.xr_joy import XrJoy, XrJoyConfig


def test_layout_sizes_and_the_policy_and_bridge_indices() -> None:
    assert [a.value for a in JoyAxis] == list(range(8))
    assert [b.value for b in JoyButton] == list(range(12))
    # the policy's defaults: buttons (LOCOMOTION, SQUAT) = (0, 1); hw_bridge: joy_estop_button:=11
    assert (JoyButton.A, JoyButton.B, JoyButton.ESTOP) == (0, 1, 11)


def test_pinch_hysteresis() -> None:
    pinch = Pinch(on_m=0.02, off_m=0.035)
    assert [pinch.update(d) for d in (0.05, 0.021, 0.0199, 0.03, 0.035, 0.0351, 0.025)] == [
        False, False, True, True, True, False, False]
    pinch.update(0.01)
    assert pinch.update(None) is False  # not tracked: released
    with pytest.raises(ValueError, match="0 < on < off"):
        Pinch(0.03, 0.02)


def test_pinch_closure() -> None:
    assert pinch_closure(0.0, 0.1) == 1.0
    assert pinch_closure(0.025, 0.1) == pytest.approx(0.75)
    assert pinch_closure(0.2, 0.1) == 0.0 and pinch_closure(None, 0.1) == 0.0


def hands(left_pinch_m: float | None, right_pinch_m: float | None) -> HandsTracking:
    def hand(d: float | None) -> HandJoints | None:
        return None if d is None else HandJoints(synthetic_hand(np.eye(4), d))

    return HandsTracking(hand(left_pinch_m), hand(right_pinch_m), None)


def test_hands_pinches_and_engage_hold() -> None:
    joy = XrJoy(XrJoyConfig())
    r = joy.from_hands(hands(0.06, 0.01), 0.0)
    assert r.buttons[JoyButton.RIGHT_TRIGGER] == 1 and r.buttons[JoyButton.LEFT_TRIGGER] == 0
    assert r.axes[JoyAxis.RIGHT_TRIGGER] == pytest.approx(0.9) and r.axes[JoyAxis.LEFT_TRIGGER] == pytest.approx(0.4)
    assert sum(r.buttons) == 1 and r.axes[JoyAxis.LEFT_STICK_Y] == 0.0
    # both pinched: ENGAGE only once held engage_hold_s (0.5 s)
    assert joy.from_hands(hands(0.01, 0.01), 1.0).buttons[JoyButton.ENGAGE] == 0
    assert joy.from_hands(hands(0.01, 0.01), 1.49).buttons[JoyButton.ENGAGE] == 0
    assert joy.from_hands(hands(0.01, 0.01), 1.5).buttons[JoyButton.ENGAGE] == 1
    assert joy.from_hands(hands(0.03, 0.01), 1.6).buttons[JoyButton.ENGAGE] == 1  # hysteresis: still pinched
    assert joy.from_hands(hands(0.04, 0.01), 1.7).buttons[JoyButton.ENGAGE] == 0  # left released
    assert joy.from_hands(hands(0.01, 0.01), 1.8).buttons[JoyButton.ENGAGE] == 0  # the hold starts again
    assert joy.from_hands(hands(None, 0.01), 2.5).buttons[JoyButton.ENGAGE] == 0  # left hand lost
    assert joy.from_hands(hands(0.001, 0.001), 9.0).buttons[JoyButton.ESTOP] == 0  # never with hands


def controller(**kw: object) -> Controller:
    values = dict(xr_T_controller=np.eye(4), trigger=0.0, squeeze=0.0, trigger_pressed=False, squeeze_pressed=False,
                  thumbstick=(0.0, 0.0), thumbstick_pressed=False, a_pressed=False, b_pressed=False)
    values.update(kw)
    return Controller(**values)


def test_controllers_axes_and_buttons() -> None:
    joy = XrJoy(XrJoyConfig())
    left = controller(thumbstick=(0.5, -1.0), trigger=0.3, squeeze=1.0, squeeze_pressed=True, a_pressed=True)
    right = controller(thumbstick=(-0.25, 0.5), trigger=0.9, trigger_pressed=True, b_pressed=True,
                       thumbstick_pressed=True)
    r = joy.from_controllers(ControllersState(left, right, None), 0.0)
    # WebXR x right / y toward the operator → joy left / forward positive
    assert r.axes == (-0.5, 1.0, 0.3, 0.25, -0.5, 0.9, 1.0, 0.0)
    expected = [0] * 12
    for b in (JoyButton.X, JoyButton.LEFT_SQUEEZE, JoyButton.B, JoyButton.RIGHT_TRIGGER, JoyButton.RIGHT_STICK):
        expected[b] = 1
    assert list(r.buttons) == expected


def test_controllers_a_requests_locomotion_and_b_squat() -> None:
    joy = XrJoy(XrJoyConfig())
    r = joy.from_controllers(ControllersState(controller(), controller(a_pressed=True), None), 0.0)
    assert r.pressed(JoyButton.A) and not r.pressed(JoyButton.X) and sum(r.buttons) == 1
    r = joy.from_controllers(ControllersState(controller(b_pressed=True), controller(), None), 0.0)
    assert r.pressed(JoyButton.Y) and not r.pressed(JoyButton.B)


def test_controllers_engage_and_estop() -> None:
    joy = XrJoy(XrJoyConfig(engage_hold_s=0.25))
    both = ControllersState(controller(squeeze_pressed=True), controller(squeeze_pressed=True), None)
    assert joy.from_controllers(both, 0.0).buttons[JoyButton.ENGAGE] == 0
    assert joy.from_controllers(both, 0.25).buttons[JoyButton.ENGAGE] == 1
    one = ControllersState(controller(squeeze_pressed=True), None, None)
    assert joy.from_controllers(one, 0.3).buttons[JoyButton.ENGAGE] == 0
    sticks = ControllersState(controller(thumbstick_pressed=True), controller(thumbstick_pressed=True), None)
    assert joy.from_controllers(sticks, 0.4).buttons[JoyButton.ESTOP] == 1  # at once, no hold
    single = ControllersState(controller(thumbstick_pressed=True), controller(), None)
    assert joy.from_controllers(single, 0.5).buttons[JoyButton.ESTOP] == 0


def test_config_is_checked() -> None:
    with pytest.raises(ValueError, match="pinch_on_m < pinch_off_m < pinch_open_m"):
        XrJoyConfig(pinch_on_m=0.04)
    with pytest.raises(ValueError, match="engage_hold_s must be >= 0"):
        XrJoyConfig(engage_hold_s=-1.0)
