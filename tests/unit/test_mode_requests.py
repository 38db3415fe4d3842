"""Debounced mode requests: a hold-off after each accepted switch, refused with the reason."""

from __future__ import annotations

import numpy as np

from g1_teleop.control.mode_requests import ModeRequestGate
from g1_teleop.control.operator_commands import JoystickMapping, JoystickSample, OperatorCommands
from g1_teleop.core.modes import Mode


class Controller:
    """Two modes, switches accepted at once."""

    def __init__(self) -> None:
        self.mode, self.transitioning, self.requests = Mode.SQUAT, False, []

    def request(self, mode: Mode) -> str | None:
        self.requests.append(mode)
        self.mode = mode
        return None


def test_requests_within_the_hold_off_are_refused_with_the_reason():
    controller = Controller()
    gate = ModeRequestGate(controller, hold_off_ticks=75, control_dt=0.02)
    assert gate.request(Mode.SQUAT) is None and controller.requests == []  # already there: no switch
    assert gate.request(Mode.LOCOMOTION) is None
    for _ in range(40):
        gate.tick()
    reason = gate.request(Mode.SQUAT)
    assert reason == ("hold-off: the switch to LOCOMOTION was accepted 0.80 s ago; requests within 1.50 s of a "
                      "switch are refused")
    for _ in range(35):
        gate.tick()
    assert gate.request(Mode.SQUAT) is None
    assert controller.requests == [Mode.LOCOMOTION, Mode.SQUAT] and gate.refused_hold_off == 1


def test_a_chattering_button_requests_once():
    commands = OperatorCommands(JoystickMapping((1, 4, 1, 0, 3), (0, 1), 0.5, 0.5, button_release_s=0.05))
    rng = np.random.default_rng(0)
    requested = []
    for k in range(1000):  # 1 kHz of random presses for 1 s
        requested += commands.put_joy(JoystickSample((), (int(rng.integers(0, 2)), 0), k * 0.001))
    assert requested == [Mode.LOCOMOTION] and commands.ignored_presses > 100
    commands.put_joy(JoystickSample((), (0, 0), 1.0))
    assert commands.put_joy(JoystickSample((), (1, 0), 1.06)) == [Mode.LOCOMOTION]  # released 60 ms: counts
