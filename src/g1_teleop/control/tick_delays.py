"""How the policy's real-time ticks keep their time, for its diagnostics; ROS-free.

Each tick: how late it started after its time (0 when its timer woke it early and it waited), how long the take of
its inputs and its step with the publish took, and whether the timer woke it only after its time (no wait was
possible). Over each diagnostics window (at least ``window_s``): p50, p99 and max of each, in ms, and the count of
late wakes. Times: monotonic seconds.
"""

from __future__ import annotations

import time

import numpy as np


class TickDelays:
    def __init__(self, window_s: float = 0.5) -> None:
        self.window_s = window_s
        self._samples: list[tuple[float, float, float]] = []  # (late, take, step) s
        self._late_wakes = 0
        self._mark_s = time.monotonic()
        self._values: dict[str, object] = {}

    def record(self, late_s: float, take_s: float, step_s: float, woke_late: bool) -> None:
        """One tick: started ``late_s`` after its time, took its inputs in ``take_s`` and stepped and published in
        ``step_s``; ``woke_late``: its timer came after its time."""
        self._samples.append((max(late_s, 0.0), take_s, step_s))
        self._late_wakes += woke_late

    def values(self) -> dict[str, object]:
        """The figures of the last complete window of ticks (an earlier call within ``window_s`` repeats them)."""
        now = time.monotonic()
        if now - self._mark_s >= self.window_s and self._samples:
            late, take, step = (np.asarray(column) * 1e3 for column in zip(*self._samples, strict=True))
            figures: dict[str, object] = {"ticks": len(self._samples), "tick_late_wakes": self._late_wakes}
            for name, ms in (("tick_late", late), ("tick_take", take), ("tick_step", step)):
                p50, p99 = np.percentile(ms, [50, 99])
                figures.update({f"{name}_p50_ms": round(float(p50), 2), f"{name}_p99_ms": round(float(p99), 2),
                                f"{name}_max_ms": round(float(ms.max()), 2)})
            self._values = figures
            self._samples.clear()
            self._late_wakes, self._mark_s = 0, now
        return self._values
