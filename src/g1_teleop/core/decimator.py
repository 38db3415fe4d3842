"""Decimating a stream of samples to an average rate. ROS-free."""

from __future__ import annotations


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

