"""Pacing a loop against the wall clock: one pass every ``period_s`` of ``time.monotonic()``. ROS-free.

A pass that overran is followed at once, so the loop catches up on a late pass instead of drifting; a loop
further behind than ``max_lag_s`` (a starved process) restarts its pacing from now instead of bursting
through the passes it missed, and counts it. ``max_lag_s = math.inf`` always catches up. ``wait_until`` waits for
one instant closely, for a caller woken a little early.
"""

from __future__ import annotations

import math
import time


class Pacer:
    """Sleeps until the next pass of a loop paced at ``period_s`` (s) from ``start_s`` (time.monotonic(); default
    now)."""

    def __init__(self, period_s: float, max_lag_s: float, start_s: float | None = None) -> None:
        if not (math.isfinite(period_s) and period_s > 0):
            raise ValueError(f"period_s must be a finite value > 0, got {period_s}")
        if not max_lag_s >= 0:
            raise ValueError(f"max_lag_s must be >= 0, got {max_lag_s}")
        self.period_s = period_s
        self.max_lag_s = max_lag_s
        self.next_s = time.monotonic() if start_s is None else start_s  # the pass now due
        self.restarts = 0  # times the loop was more than max_lag_s behind and restarted its pacing

    def wait(self) -> None:
        """Sleep until one period after the pass last due (at once if that is past)."""
        self.next_s += self.period_s
        delay = self.next_s - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        elif delay < -self.max_lag_s:
            self.next_s = time.monotonic()
            self.restarts += 1


SPIN_S = 0.0002  # the end of a wait_until, spun: a sleep to a deadline wakes 0.1–0.2 ms late on this project's machine


def wait_until(mono_s: float, spin_s: float = SPIN_S) -> float:
    """Sleep, then spin the last ``spin_s``, until ``time.monotonic()`` reaches ``mono_s`` (s); the time then."""
    if (sleep_s := mono_s - spin_s - time.monotonic()) > 0:
        time.sleep(sleep_s)
    while (now := time.monotonic()) < mono_s:
        pass
    return now
