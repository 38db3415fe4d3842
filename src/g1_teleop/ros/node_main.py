"""A node executable's main: init, spin on a single-threaded executor, shut down cleanly. Humble's rclpy API."""

from __future__ import annotations

import sys
from collections.abc import Callable

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node

from g1_teleop.core.process_lifetime import stop_with_runner
from g1_teleop.ros.parameters import ConfigError


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
