"""How the policy's real-time ticks keep their time, for its diagnostics; ROS-free.

Each tick: how late it started after its time (0 when its timer woke it early and it waited), how long the take of
its inputs and its step with the publish took, and whether the timer woke it only after its time (no wait was
possible). Over each diagnostics window (at least ``window_s``): p50, p99 and max of each, in ms, and the count of
late wakes. Times: monotonic seconds.
"""

from __future__ import annotations

import numpy as np

from g1_teleop.core.figure_window import FigureWindow

DELAYS = ("tick_late", "tick_take", "tick_step")  # each with its p50, p99 and max: figure_key


def figure_key(delay: str, statistic: str) -> str:
    """The diagnostics key of one delay's statistic (``p50``, ``p99`` or ``max``), in ms."""
    return f"{delay}_{statistic}_ms"


class TickDelays:
    def __init__(self, window_s: float = 0.5) -> None:
        self._window = FigureWindow(window_s)
        self._samples: list[tuple[float, float, float]] = []  # (late, take, step) s
        self._late_wakes = 0

    def record(self, late_s: float, take_s: float, step_s: float, woke_late: bool) -> None:
        """One tick: started ``late_s`` after its time, took its inputs in ``take_s`` and stepped and published in
        ``step_s``; ``woke_late``: its timer came after its time."""
        self._samples.append((max(late_s, 0.0), take_s, step_s))
        self._late_wakes += woke_late

    def values(self) -> dict[str, object]:
        """The figures of the last complete window of ticks (an earlier call within ``window_s`` repeats them)."""
        return self._window.values(self._close)

    def _close(self, _elapsed_s: float) -> dict[str, object] | None:
        if not self._samples:
            return None
        late, take, step = (np.asarray(column) * 1e3 for column in zip(*self._samples, strict=True))
        figures: dict[str, object] = {"ticks": len(self._samples), "tick_late_wakes": self._late_wakes}
        for name, ms in zip(DELAYS, (late, take, step), strict=True):
            p50, p99 = np.percentile(ms, [50, 99])
            figures.update({figure_key(name, statistic): round(float(value), 2)
                            for statistic, value in (("p50", p50), ("p99", p99), ("max", ms.max()))})
        self._samples.clear()
        self._late_wakes = 0
        return figures
