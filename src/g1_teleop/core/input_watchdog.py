"""Fall-back when a stream of commands goes stale, ROS-free.

A consumer of commands (a bridge) tells :class:`InputWatchdog` when each valid command arrives and asks it,
every control step, how fresh the commands are; :func:`fallback_command` turns that into the command to
apply: the last one, the last target held at rest, or damping only. Times are seconds on one monotonic clock.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

import numpy as np

from g1_teleop.core.limits import JointCommand
from g1_teleop.core.settings import check_settings, setting


class Freshness(enum.Enum):
    """How recent the last valid command is, and so what may be applied."""

    WAITING = "waiting"  # no command yet: keep the initial one
    FRESH = "fresh"  # within hold_after_s: apply it
    HOLD = "hold"  # stale: hold its target at rest
    DAMP = "damp"  # stale for longer than damp_after_s: damping only


@dataclass(frozen=True)
class WatchdogTimeouts:
    """How old the last command may get before holding, then before damping."""

    hold_after_s: float = setting(0.1, "without a command for this long, hold the last target (s)", positive=True)
    damp_after_s: float = setting(1.0, "without a command for this long, damping only (s); >= hold_after_s",
                                  positive=True)

    def __post_init__(self) -> None:
        check_settings(self)
        if self.hold_after_s > self.damp_after_s:
            raise ValueError(
                f"watchdog: need hold_after_s ({self.hold_after_s}) <= damp_after_s ({self.damp_after_s})")


class InputWatchdog:
    """The age of the last valid command, as a :class:`Freshness`."""

    def __init__(self, timeouts: WatchdogTimeouts) -> None:
        self.timeouts = timeouts
        self._last_input_s: float | None = None

    def feed(self, now_s: float) -> None:
        """A valid command arrived at ``now_s``."""
        self._last_input_s = now_s

    def freshness(self, now_s: float) -> Freshness:
        """Freshness of the commands at ``now_s``."""
        if self._last_input_s is None:
            return Freshness.WAITING
        age = now_s - self._last_input_s
        if age <= self.timeouts.hold_after_s:
            return Freshness.FRESH
        if age <= self.timeouts.damp_after_s:
            return Freshness.HOLD
        return Freshness.DAMP


def fallback_command(freshness: Freshness, last: JointCommand, damping: JointCommand) -> JointCommand:
    """The command to apply: ``last`` while WAITING or FRESH; under HOLD its target, feed-forward (gravity,
    balance) and gains with no velocity target; under DAMP ``damping``."""
    if freshness is Freshness.DAMP:
        return damping
    if freshness is Freshness.HOLD:
        return dataclasses.replace(last, dq=np.zeros_like(last.dq))
    return last
