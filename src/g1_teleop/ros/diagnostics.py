"""A node's status on ``diagnostics`` (diagnostic_msgs/DiagnosticArray) and its once-only warnings."""

from __future__ import annotations

from collections.abc import Callable

import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node
from std_msgs.msg import Header


class WarnOnce:
    """Logs a warning the first time each kind of problem appears (and counts every occurrence)."""

    def __init__(self, node: Node) -> None:
        self._logger = node.get_logger()
        self.counts: dict[str, int] = {}

    def __call__(self, kind: str, message: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if self.counts[kind] == 1:
            self._logger.warning(f"{message} (further '{kind}' problems are counted, not logged)")


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
