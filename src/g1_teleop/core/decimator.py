"""Decimating a stream of samples to an average rate. ROS-free."""

from __future__ import annotations

import time


class Decimator:
    """True for the samples (times in s) that keep a stream at ``rate_hz`` on average, at most one a sample.
    A gap is not made up for: the sample after it restarts the schedule one period back. A time before the
    last kept one (a simulation restarted: its stamps start again) restarts the schedule at that sample."""

    def __init__(self, rate_hz: float) -> None:
        self.period = 1.0 / rate_hz
        self.next_s = 0.0
        self.last_s = float("-inf")

    def __call__(self, t: float) -> bool:
        if t < self.last_s:
            self.next_s = t
        if t < self.next_s:
            return False
        self.next_s = max(self.next_s + self.period, t - self.period)
        self.last_s = t
        return True


class DueOnBothClocks:
    """True for the samples that keep a stream at ``rate_hz`` at most both per second of their stamps and per
    second of the wall clock (``time.monotonic()``, or the ``wall_s`` given): a viewer's rate, whether the stream
    runs in real time or faster (a lockstep simulation). ``rate_hz`` 0: every sample."""

    def __init__(self, rate_hz: float) -> None:
        self._stamps = Decimator(rate_hz) if rate_hz else None
        self._wall = Decimator(rate_hz) if rate_hz else None

    def __call__(self, stamp_s: float, wall_s: float | None = None) -> bool:
        if self._stamps is None or self._wall is None:
            return True
        return self._stamps(stamp_s) and self._wall(time.monotonic() if wall_s is None else wall_s)
