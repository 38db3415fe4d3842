"""Debounced mode requests, ROS-free: a mode switch is a deliberate act, not a chattering input.

After an accepted switch, every request within ``hold_off_ticks`` control ticks (the switch's own blend
included) is refused with the reason; a request for the mode already in force and not switching is answered
as accepted without counting as a switch. The other refusals (stand up first, stop first, …) are the
controller's. Ticks, not seconds, so that a lockstep run is the same at any speed.
"""

from __future__ import annotations

from g1_teleop.control.lower_body import LowerBodyController
from g1_teleop.core.modes import Mode


class ModeRequestGate:
    def __init__(self, lower_body: LowerBodyController, hold_off_ticks: int, control_dt: float) -> None:
        if hold_off_ticks < 0:
            raise ValueError(f"hold_off_ticks must be >= 0, got {hold_off_ticks}")
        self.lower_body = lower_body
        self.hold_off_ticks, self.control_dt = hold_off_ticks, control_dt
        self._since: int | None = None  # ticks since the last accepted switch
        self._last: Mode | None = None  # the mode it switched to
        self.refused_hold_off = 0

    def tick(self) -> None:
        """One control tick has passed."""
        if self._since is not None:
            self._since += 1

    def request(self, mode: Mode) -> str | None:
        """Ask the controller for ``mode``: None when accepted (or already there), else why it is refused."""
        if mode is self.lower_body.mode and not getattr(self.lower_body, "transitioning", False):
            return None
        if self._since is not None and self._since < self.hold_off_ticks:
            self.refused_hold_off += 1
            assert self._last is not None
            return (f"hold-off: the switch to {self._last.value} was accepted {self._since * self.control_dt:.2f} s "
                    f"ago; requests within {self.hold_off_ticks * self.control_dt:.2f} s of a switch are refused")
        reason = self.lower_body.request(mode)
        if reason is None:
            self._since, self._last = 0, mode
        return reason
