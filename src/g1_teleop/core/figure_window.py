"""Figures over windows of time for a node's diagnostics, each window's computed once. ROS-free.

A diagnostics timer asks for a node's figures about once a second, and may ask twice within one window; the figures
of the last complete window (at least ``window_s`` long, monotonic seconds) are repeated until the next one ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class FigureWindow:
    def __init__(self, window_s: float = 0.5) -> None:
        self.window_s = window_s
        self.start_s = time.monotonic()
        self._values: dict[str, object] = {}

    def values(self, close: Callable[[float], dict[str, object] | None]) -> dict[str, object]:
        """The last complete window's figures. Once ``window_s`` has passed, ``close(elapsed_s)`` gives the window's
        figures and starts the next window (the caller resets its own counts there), or None: nothing to report yet,
        the window goes on."""
        now = time.monotonic()
        if now - self.start_s >= self.window_s and (figures := close(now - self.start_s)) is not None:
            self._values, self.start_s = figures, now
        return self._values
