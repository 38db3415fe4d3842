"""hw_bridge's operator actions from a Joy device's buttons (``joy_*_button``): each acts on the press of its
button. ROS-free."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from g1_teleop.hardware.bridge_safety import OperatorAction, OperatorEvent


class JoyButtons:
    """Rising edges of the buttons of ``buttons`` (action → button index) across a device's readings."""

    def __init__(self, buttons: dict[OperatorAction, int]) -> None:
        self.buttons = buttons
        self._held: dict[OperatorAction, bool] = {}

    def presses(self, reading: Sequence[int], warn: Callable[[str, str], None]) -> list[OperatorEvent]:
        """The actions whose button is pressed in ``reading`` and was not in the previous one; a button the
        device does not have is told to ``warn(kind, message)``."""
        events = []
        for action, index in self.buttons.items():
            if index >= len(reading):
                warn("joy_buttons", f"joy has {len(reading)} buttons; joy_{action.value}_button = {index} is not "
                                    "one of them")
                continue
            held = reading[index] != 0
            if held and not self._held.get(action, False):
                events.append(OperatorEvent(action, f"joy button {index}"))
            self._held[action] = held
        return events
