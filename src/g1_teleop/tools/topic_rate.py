"""A topic's rate from its messages' arrival times over a sliding window, as `ros2 topic hz` reports it. ROS-free."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RateFigures:
    """Over the window: mean rate (Hz) and the period's min, max and standard deviation (s)."""

    rate_hz: float
    min_s: float
    max_s: float
    std_s: float
    periods: int

    def line(self) -> str:
        return (f"average rate: {self.rate_hz:.2f} Hz   period min {self.min_s * 1e3:.2f} ms  max "
                f"{self.max_s * 1e3:.2f} ms  std {self.std_s * 1e3:.2f} ms   window: {self.periods} periods")


class RateWindow:
    """Arrival times (s, one monotonic clock) of the last ``window`` + 1 messages."""

    def __init__(self, window: int = 10000) -> None:
        if window < 1:
            raise ValueError(f"the window is at least 1 period, got {window}")
        self.times: deque[float] = deque(maxlen=window + 1)
        self.received = 0  # messages added in all

    def add(self, t: float) -> None:
        self.times.append(t)
        self.received += 1

    def figures(self) -> RateFigures | None:
        """None until two messages have arrived."""
        if len(self.times) < 2:
            return None
        periods = np.diff(np.asarray(self.times))
        mean = float(periods.mean())
        return RateFigures(1.0 / mean if mean > 0 else float("inf"), float(periods.min()), float(periods.max()),
                           float(periods.std()), len(periods))
