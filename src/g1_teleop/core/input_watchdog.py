"""Fall-back behaviour when inputs go stale, ROS-free.

A consumer of commands (a bridge) feeds :class:`InputWatchdog` the arrival time of each valid input and
asks it, every control step, which safe state applies: use the input, hold the last target, or damp.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Freshness(enum.Enum):
    WAITING = "waiting"  # no input yet
    FRESH = "fresh"
    HOLD = "hold"  # stale: hold the last target
    DAMP = "damp"  # stale for long: damping only


@dataclass(frozen=True)
class WatchdogConfig:
    """Seconds without input before holding, then before damping."""

    hold_after_s: float = 0.1
    damp_after_s: float = 1.0

    def __post_init__(self) -> None:
        if not 0 < self.hold_after_s <= self.damp_after_s:
            raise ValueError(
                f"watchdog: need 0 < hold_after_s ({self.hold_after_s}) <= damp_after_s ({self.damp_after_s})"
            )


class InputWatchdog:
    def __init__(self, config: WatchdogConfig) -> None:
        self.config = config
        self._last_input_s: float | None = None

    def feed(self, now_s: float) -> None:
        self._last_input_s = now_s

    def state(self, now_s: float) -> Freshness:
        if self._last_input_s is None:
            return Freshness.WAITING
        age = now_s - self._last_input_s
        if age <= self.config.hold_after_s:
            return Freshness.FRESH
        if age <= self.config.damp_after_s:
            return Freshness.HOLD
        return Freshness.DAMP
