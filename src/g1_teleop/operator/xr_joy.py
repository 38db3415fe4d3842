"""A headset's controllers and hand gestures as the XR Joy layout (g1_teleop.core.xr_input_contract: the axes and
buttons, and which gesture sets each). ROS-free."""

from __future__ import annotations

from dataclasses import dataclass

from g1_teleop.core.settings import check_settings, setting
from g1_teleop.core.xr_input_contract import JoyAxis, JoyButton
from g1_teleop.operator.hand_pinch import Pinch, pinch_closure
from g1_teleop.operator.webxr_events import Controller, ControllersState, HandsTracking


@dataclass(frozen=True)
class JoyReading:
    """One Joy message's content: ``axes`` (len(JoyAxis)) and ``buttons`` (len(JoyButton))."""

    axes: tuple[float, ...]
    buttons: tuple[int, ...]

    def pressed(self, button: JoyButton) -> bool:
        return bool(self.buttons[button])


@dataclass(frozen=True)
class XrJoyConfig:
    """Gesture thresholds of the XR Joy layout."""

    pinch_on_m: float = setting(0.02, "a pinch closes when the thumb and index tips come closer than this (m)",
                                positive=True)
    pinch_off_m: float = setting(0.035, "a closed pinch opens when the tips are farther apart than this (m)",
                                 positive=True)
    pinch_open_m: float = setting(0.10, "thumb–index distance at which the pinch axes read 0 (m)", positive=True)
    engage_hold_s: float = setting(0.5, "how long the engage gesture (both pinches or both squeezes) must be "
                                   "held before the ENGAGE button reads 1 (s)", minimum=0.0)

    def __post_init__(self) -> None:
        check_settings(self)
        if not self.pinch_on_m < self.pinch_off_m < self.pinch_open_m:
            raise ValueError(f"pinch distances need pinch_on_m < pinch_off_m < pinch_open_m, got "
                             f"{self.pinch_on_m}, {self.pinch_off_m}, {self.pinch_open_m} m")


class XrJoy:
    """Turns a headset's hand or controller events into Joy readings; keeps the pinch and engage-hold state."""

    def __init__(self, config: XrJoyConfig) -> None:
        self.config = config
        self.left_pinch = Pinch(config.pinch_on_m, config.pinch_off_m)
        self.right_pinch = Pinch(config.pinch_on_m, config.pinch_off_m)
        self._gesture_since_s: float | None = None

    def from_hands(self, hands: HandsTracking, now_s: float) -> JoyReading:
        """The reading for a HAND_MOVE received at ``now_s`` (monotonic s)."""
        left = None if hands.left is None else hands.left.pinch_distance_m()
        right = None if hands.right is None else hands.right.pinch_distance_m()
        left_closed, right_closed = self.left_pinch.update(left), self.right_pinch.update(right)
        axes = [0.0] * len(JoyAxis)
        axes[JoyAxis.LEFT_TRIGGER] = pinch_closure(left, self.config.pinch_open_m)
        axes[JoyAxis.RIGHT_TRIGGER] = pinch_closure(right, self.config.pinch_open_m)
        buttons = [0] * len(JoyButton)
        buttons[JoyButton.LEFT_TRIGGER], buttons[JoyButton.RIGHT_TRIGGER] = int(left_closed), int(right_closed)
        buttons[JoyButton.ENGAGE] = self._engage(left_closed and right_closed, now_s)
        return JoyReading(tuple(axes), tuple(buttons))

    def from_controllers(self, controllers: ControllersState, now_s: float) -> JoyReading:
        """The reading for a CONTROLLER_MOVE received at ``now_s`` (monotonic s); a missing controller reads as
        released."""
        left, right = controllers.left, controllers.right
        axes = [0.0] * len(JoyAxis)
        buttons = [0] * len(JoyButton)
        for c, side in ((left, _LEFT), (right, _RIGHT)):
            if c is None:
                continue
            # WebXR: x to the right, y toward the operator; ROS joy: left and forward are +1
            axes[side.stick_x], axes[side.stick_y] = -c.thumbstick[0], -c.thumbstick[1]
            axes[side.trigger], axes[side.squeeze] = c.trigger, c.squeeze
            for button, pressed in ((side.trigger_button, c.trigger_pressed), (side.squeeze_button, c.squeeze_pressed),
                                    (side.stick_button, c.thumbstick_pressed), (side.lower_button, c.a_pressed),
                                    (side.upper_button, c.b_pressed)):
                buttons[button] = int(pressed)
        buttons[JoyButton.ENGAGE] = self._engage(_both(left, right, "squeeze_pressed"), now_s)
        buttons[JoyButton.ESTOP] = int(_both(left, right, "thumbstick_pressed"))
        return JoyReading(tuple(axes), tuple(buttons))

    def _engage(self, gesture: bool, now_s: float) -> int:
        if not gesture:
            self._gesture_since_s = None
            return 0
        if self._gesture_since_s is None:
            self._gesture_since_s = now_s
        return int(now_s - self._gesture_since_s >= self.config.engage_hold_s)


@dataclass(frozen=True)
class _Side:
    """Where one controller's inputs go in the layout."""

    stick_x: JoyAxis
    stick_y: JoyAxis
    trigger: JoyAxis
    squeeze: JoyAxis
    trigger_button: JoyButton
    squeeze_button: JoyButton
    stick_button: JoyButton
    lower_button: JoyButton  # A or X (gamepad button 4)
    upper_button: JoyButton  # B or Y (gamepad button 5)


_LEFT = _Side(JoyAxis.LEFT_STICK_X, JoyAxis.LEFT_STICK_Y, JoyAxis.LEFT_TRIGGER, JoyAxis.LEFT_SQUEEZE,
              JoyButton.LEFT_TRIGGER, JoyButton.LEFT_SQUEEZE, JoyButton.LEFT_STICK, JoyButton.X, JoyButton.Y)
_RIGHT = _Side(JoyAxis.RIGHT_STICK_X, JoyAxis.RIGHT_STICK_Y, JoyAxis.RIGHT_TRIGGER, JoyAxis.RIGHT_SQUEEZE,
               JoyButton.RIGHT_TRIGGER, JoyButton.RIGHT_SQUEEZE, JoyButton.RIGHT_STICK, JoyButton.A, JoyButton.B)


def _both(left: Controller | None, right: Controller | None, flag: str) -> bool:
    return left is not None and right is not None and getattr(left, flag) and getattr(right, flag)
