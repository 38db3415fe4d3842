"""A node's status on ``diagnostics`` (diagnostic_msgs/DiagnosticArray), its once-only warnings and its
rate-limited log lines."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node
from std_msgs.msg import Header

from g1_teleop.core.figure_window import FigureWindow


class WarnOnce:
    """Logs a warning the first time each kind of problem appears (and counts every occurrence)."""

    def __init__(self, node: Node) -> None:
        self._logger = node.get_logger()
        self.counts: dict[str, int] = {}

    def __call__(self, kind: str, message: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if self.counts[kind] == 1:
            self._logger.warning(f"{message} (further '{kind}' problems are counted, not logged)")


class Logger(Protocol):
    """What RateLimitedLog writes to (an rclpy logger)."""

    def info(self, message: str) -> bool: ...

    def warning(self, message: str) -> bool: ...

    def error(self, message: str) -> bool: ...


class RateLimitedLog:
    """Log lines limited per kind: at most ``lines`` per ``period_s`` (monotonic), the rest counted; the next
    line written of that kind ends with "(k suppressed)". Input that anyone can send (a button, a request, a
    clock) cannot flood the log this way, and nothing goes unnoticed."""

    def __init__(self, logger: Logger, lines: int = 3, period_s: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if lines < 1 or not period_s > 0:
            raise ValueError(f"RateLimitedLog needs lines >= 1 and period_s > 0, got {lines}, {period_s}")
        self._logger, self.lines, self.period_s, self._clock = logger, lines, period_s, clock
        self._windows: dict[str, tuple[float, int]] = {}  # kind -> (window start, lines written in it)
        self.suppressed: dict[str, int] = {}  # kind -> lines suppressed since the last written one
        self.written = 0

    def __call__(self, level: str, kind: str, message: str) -> bool:
        """Write ``message`` at ``level`` (info, warning, error) unless ``kind`` is over its budget; True if
        written."""
        now = self._clock()
        start, count = self._windows.get(kind, (now, 0))
        if now - start >= self.period_s:
            start, count = now, 0
        if count >= self.lines:
            self._windows[kind] = (start, count)
            self.suppressed[kind] = self.suppressed.get(kind, 0) + 1
            return False
        self._windows[kind] = (start, count + 1)
        skipped = self.suppressed.pop(kind, 0)
        line = message + (f" ({skipped} suppressed)" if skipped else "")
        # One call site per severity: rclpy refuses a call site whose severity changes between calls.
        if level == "info":
            self._logger.info(line)
        elif level == "warning":
            self._logger.warning(line)
        else:
            self._logger.error(line)
        self.written += 1
        return True

    def info(self, kind: str, message: str) -> bool:
        return self("info", kind, message)

    def warning(self, kind: str, message: str) -> bool:
        return self("warning", kind, message)


class Diagnostics:
    """Publishes this node's status on ``diagnostics`` at 1 Hz (wall clock) and on every change."""

    def __init__(self, node: Node, values: Callable[[], dict[str, object]]) -> None:
        self._node = node
        self._values = values
        self._pub = node.create_publisher(DiagnosticArray, "diagnostics", 10)
        self._level, self._message = DiagnosticStatus.OK, "starting"
        node.create_timer(1.0, self.publish, clock=rclpy.clock.Clock(clock_type=rclpy.clock.ClockType.STEADY_TIME))

    def set(self, level: int, message: str) -> None:
        if (level, message) != (self._level, self._message):
            self._level, self._message = level, message
            self.publish()

    def publish(self) -> None:
        status = DiagnosticStatus(
            level=self._level, name=self._node.get_fully_qualified_name(), message=self._message,
            hardware_id="g1",
            values=[KeyValue(key=k, value=str(v)) for k, v in self._values().items()],
        )
        header = Header(stamp=self._node.get_clock().now().to_msg())
        self._pub.publish(DiagnosticArray(header=header, status=[status]))


class ProcessFigures:
    """A process's CPU use and the longest gap between the events it counts, per diagnostics window (≥ 0.5 s):
    ``process_cpu_percent``, ``<event>_gap_max_ms``."""

    def __init__(self, event: str) -> None:
        self._event = event
        self._window = FigureWindow()
        self._cpu_mark_s = time.process_time()
        self._last_event_s: float | None = None
        self._gap_max_s = 0.0

    def event(self, now_s: float) -> None:
        """One event at monotonic time ``now_s`` (s)."""
        if self._last_event_s is not None:
            self._gap_max_s = max(self._gap_max_s, now_s - self._last_event_s)
        self._last_event_s = now_s

    def values(self) -> dict[str, object]:
        """The figures of the last complete window (an extra publication within 0.5 s repeats them)."""
        return self._window.values(self._close)

    def _close(self, elapsed_s: float) -> dict[str, object]:
        cpu_mark_s, self._cpu_mark_s = self._cpu_mark_s, time.process_time()
        figures = {"process_cpu_percent": round(100 * (self._cpu_mark_s - cpu_mark_s) / elapsed_s, 1),
                   f"{self._event}_gap_max_ms": round(self._gap_max_s * 1e3, 1)}
        self._gap_max_s = 0.0
        return figures
