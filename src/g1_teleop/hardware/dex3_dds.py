"""The Dex3 hands' robot side in the LowCmd loop: rt/dex3/{left,right}/state in, rt/dex3/{left,right}/cmd out
through each hand's :class:`~g1_teleop.hardware.dex3.HandSafety`. ROS-free."""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from g1_teleop.core.decimator import Decimator
from g1_teleop.core.dex3_description import SIDES, Dex3
from g1_teleop.hardware import bridge_link as msg
from g1_teleop.hardware.bridge_safety import SafetyState
from g1_teleop.hardware.dex3 import HandSafety, HandSample, HandTarget, hand_cmd_message, hand_state_arrays
from g1_teleop.hardware.robot_dds import RobotDds


class HandDds:
    """Both hands on the robot's DDS: their states (forwarded to the ROS side at ``rate_hz`` per hand) and their
    commands, written at ``rate_hz`` from the latest targets. ``problem(kind, message)`` reports a bad HandState,
    ``forward(message)`` sends a state to the ROS side."""

    def __init__(self, dds: RobotDds, dex3: Dex3, rate_hz: float, problem: Callable[[str, str], None],
                 forward: Callable[[object], None]) -> None:
        self.problem, self.forward = problem, forward
        self.safety = {side: HandSafety(dex3, side) for side in SIDES}
        self.counts = collections.Counter[str]()
        self._tick_due = Decimator(rate_hz)
        self._forward_due = {side: Decimator(rate_hz) for side in SIDES}
        # Shared between threads, replaced whole: the latest HandState and target of each hand.
        self._states: dict[str, HandSample | None] = dict.fromkeys(SIDES)
        self.targets: dict[str, HandTarget | None] = dict.fromkeys(SIDES)
        self._writers = {side: dds.writer(f"rt/dex3/{side}/cmd") for side in SIDES}
        for side in SIDES:
            dds.reader(f"rt/dex3/{side}/state", on_samples=functools.partial(self.on_states, side))

    def on_states(self, side: str, messages: list[Any], received_s: float) -> None:
        """CycloneDDS's listener thread: one hand's HandState_ messages and when they arrived (time.monotonic); the
        newest counts."""
        try:
            q, dq, tau = hand_state_arrays(messages[-1])
        except ValueError as exc:
            self.problem("hand_state", f"dropped rt/dex3/{side}/state: {exc}")
            return
        if not (np.isfinite(q).all() and np.isfinite(dq).all()):
            self.problem("hand_state_nan", f"dropped rt/dex3/{side}/state: non-finite q or dq")
            return
        self._states[side] = HandSample(received_s, q, dq)
        if self._forward_due[side](received_s):
            self.forward(msg.HandState(side, q, dq, tau))

    def tick(self, now_s: float, body: SafetyState) -> None:
        """Write both hands' commands if a hand period has passed (called every LowCmd tick)."""
        if not self._tick_due(now_s):
            return
        for side in SIDES:
            command = self.safety[side].step(now_s, body, self._states[side], self.targets[side])
            if command is not None:
                self._writers[side].write(hand_cmd_message(command))
                self.counts["handcmd_written"] += 1
