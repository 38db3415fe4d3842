"""A node executable's main: init, spin on a single-threaded executor, shut down cleanly. Humble's rclpy API.

rclpy's time source (use_sim_time) raises in its /clock callback for a message it cannot represent (negative
seconds: any node can publish one), and an exception from a callback ends ``spin``: one such message killed
every node on sim time. Here the executor spins one callback at a time, and an exception raised inside
rclpy's time source is logged (rate-limited: diagnostics.RateLimitedLog) and dropped — that /clock message is
not taken, the clock keeps its last valid time. Any other exception still ends the node.

SIGUSR1 prints the Python stacks of the node's threads to stderr (faulthandler) and the node runs on: where a
node that does not stop is stuck (the pip runner sends it before killing such a node).
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import traceback
from collections.abc import Callable

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node

from g1_teleop.core.process_lifetime import stop_with_runner
from g1_teleop.core.realtime_priority import fifo_from_environment
from g1_teleop.ros.diagnostics import RateLimitedLog
from g1_teleop.ros.parameters import ConfigError

_TIME_SOURCE_FILE = os.path.join("rclpy", "time_source.py")


def from_time_source(exc: BaseException) -> bool:
    """True when ``exc`` was raised inside rclpy's time source (its /clock callback)."""
    frames = traceback.walk_tb(exc.__traceback__)
    return any(frame.f_code.co_filename.endswith(_TIME_SOURCE_FILE) for frame, _ in frames)


def spin(executor: SingleThreadedExecutor, node: Node) -> None:
    """Spin until shutdown; a /clock message that rclpy's time source refuses is logged and dropped."""
    log = RateLimitedLog(node.get_logger())
    dropped = 0
    while rclpy.ok(context=executor.context):
        try:
            executor.spin_once()
        except (KeyboardInterrupt, ExternalShutdownException):
            raise
        except Exception as exc:
            if not from_time_source(exc):
                raise
            dropped += 1
            log.warning("clock", f"/clock message refused by rclpy's time source ({type(exc).__name__}: {exc}); "
                                 f"the clock keeps its last valid time ({dropped} refused so far)")


def run(node_factory: Callable[[], Node], args: list[str] | None = None) -> None:
    """Init, spin on a single-threaded executor (it follows /clock with use_sim_time), shut down cleanly.

    A node that cannot start (bad parameter, missing file) exits with code 2 and one log line. SIGINT or
    SIGTERM shut the context down; whatever that interrupts (construction, a callback that publishes)
    ends as a normal stop, exit code 0.
    """
    stop_with_runner()
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    rclpy.init(args=args if args is not None else sys.argv)
    executor = SingleThreadedExecutor()
    node = None
    code = 0
    try:
        node = node_factory()
        executor.add_node(node)
        if (refused := fifo_from_environment(node.get_name())) is not None:  # (its start-up done at normal priority)
            node.get_logger().warning(refused)
        spin(executor, node)
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
