"""What every node shares: QoS profiles, configuration from parameters, once-only warnings, stamps,
diagnostics and the spin loop. Compatible with the Humble rclpy API."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import TypeVar

import rclpy
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from g1_teleop.launching.process_runner import stop_with_runner

# Device-rate XR samples: newest wins (design.md topic contract).
QOS_SENSOR = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
# Targets, commands and robot state: reliable, newest wins.
QOS_COMMAND = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE)
QOS_STATE = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=5, reliability=ReliabilityPolicy.RELIABLE)
# Mode: latched for late joiners.
QOS_LATCHED = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)

C = TypeVar("C")


class ConfigError(ValueError):
    pass


def declare_config(node: Node, cls: type[C]) -> C:
    """Declare one ROS parameter per field of the dataclass ``cls`` (its default as the parameter's
    default) and build the validated configuration from their values."""
    values = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        default = field.default if field.default is not dataclasses.MISSING else field.default_factory()  # type: ignore[misc]
        node.declare_parameter(field.name, default)
        values[field.name] = node.get_parameter(field.name).value
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"invalid parameters for {node.get_name()}: {exc}") from None


class WarnOnce:
    """Logs a warning the first time each kind of problem appears (and counts every occurrence)."""

    def __init__(self, node: Node) -> None:
        self._logger = node.get_logger()
        self.counts: dict[str, int] = {}

    def __call__(self, kind: str, message: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if self.counts[kind] == 1:
            self._logger.warning(f"{message} (further '{kind}' problems are counted, not logged)")


def stamp_ns(stamp: Time) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def to_stamp(ns: int) -> Time:
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


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
        self._pub.publish(DiagnosticArray(header=_header_now(self._node), status=[status]))


def _header_now(node: Node):
    from std_msgs.msg import Header

    return Header(stamp=node.get_clock().now().to_msg())


def run(node_factory: Callable[[], Node], args: list[str] | None = None) -> None:
    """Init, spin on a single-threaded executor (it follows /clock with use_sim_time), shut down cleanly.

    A node that cannot start (bad parameter, missing file) exits with code 2 and one log line. SIGINT or
    SIGTERM shut the context down; whatever that interrupts (construction, a callback that publishes)
    ends as a normal stop, exit code 0.
    """
    stop_with_runner()
    rclpy.init(args=args if args is not None else sys.argv)
    executor = SingleThreadedExecutor()
    node = None
    code = 0
    try:
        node = node_factory()
        executor.add_node(node)
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception as exc:
        if not rclpy.ok():
            pass  # a signal shut the context down mid-way: a normal stop
        elif node is None and isinstance(exc, (ConfigError, FileNotFoundError, ValueError)):
            rclpy.logging.get_logger("g1_teleop").fatal(f"cannot start: {exc}")
            code = 2
        else:
            raise
    finally:
        _shutdown(executor, node)
    if code:
        sys.exit(code)


def _shutdown(executor: SingleThreadedExecutor, node: Node | None) -> None:
    executor.shutdown()
    if node is not None:
        node.destroy_node()
    if rclpy.ok():
        rclpy.shutdown()
