"""A node executable's main: init, spin on one thread, shut down cleanly. Humble's rclpy API.

rclpy's time source (use_sim_time) raises in its /clock callback for a message it cannot represent (negative
seconds: any node can publish one), and an exception from a callback ends ``spin``: one such message killed
every node on sim time. Here the time source's /clock callback is wrapped (``guard_time_source``): what it refuses
is logged (rate-limited: diagnostics.RateLimitedLog) and dropped, the clock keeps its last valid time. (The
EventsExecutor also logs an exception from a callback at FATAL with its traceback before raising it: a flood.) A
time source subscribed later (use_sim_time set at run time) is not wrapped: the spin loop drops what it raises.
Any other exception still ends the node.

SIGINT and SIGTERM (``StopOnSignal``, in place of rclpy's handler, which shuts the context down at once: the
EventsExecutor then still ran pending timers, whose publish failed with a FATAL log line at every stop): during the
node's construction they end it as a normal stop; while it spins, the loop ends after the callback in progress
(within ``SPIN_WAIT_S``), and the node, the executor and the context are shut down in that order. Exit code 0.

The executor is ``g1_teleop.ros.executor.make_executor``'s (rclpy's EventsExecutor where it exists).

SIGUSR1 prints the Python stacks of the node's threads to stderr (faulthandler) and the node runs on: where a
node that does not stop is stuck (the pip runner sends it before killing such a node).
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import rclpy
from rclpy.executors import Executor, ExternalShutdownException
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from rclpy.time_source import TimeSource

from g1_teleop.core.process_lifetime import stop_with_runner
from g1_teleop.core.realtime_priority import fifo_from_environment
from g1_teleop.ros.diagnostics import RateLimitedLog
from g1_teleop.ros.executor import SPIN_WAIT_S, make_executor
from g1_teleop.ros.parameters import ConfigError

_TIME_SOURCE_FILE = os.path.join("rclpy", "time_source.py")


def from_time_source(exc: BaseException) -> bool:
    """True when ``exc`` was raised inside rclpy's time source (its /clock callback)."""
    frames = traceback.walk_tb(exc.__traceback__)
    return any(frame.f_code.co_filename.endswith(_TIME_SOURCE_FILE) for frame, _ in frames)


class ClockRefusals:
    """/clock messages rclpy's time source refused: counted, logged rate-limited."""

    def __init__(self, node: Node) -> None:
        self.log, self.count = RateLimitedLog(node.get_logger()), 0

    def __call__(self, exc: Exception) -> None:
        self.count += 1
        self.log.warning("clock", f"/clock message refused by rclpy's time source ({type(exc).__name__}: {exc}); "
                                  f"the clock keeps its last valid time ({self.count} refused so far)")


def guard_time_source(node: Node, refused: Callable[[Exception], None]) -> None:
    """Wrap the /clock callback of the node's time source: a message it raises on goes to ``refused``."""
    for subscription in node.subscriptions:
        if isinstance(getattr(subscription.callback, "__self__", None), TimeSource):
            subscription.callback = _guarded(subscription.callback, refused)


def _guarded(take: Callable[[Any], None], refused: Callable[[Exception], None]) -> Callable[[Any], None]:
    def guarded(msg: Any) -> None:  # (one argument: rclpy passes a second, the message info, to a callback with two)
        try:
            take(msg)
        except Exception as exc:  # (the time source changed nothing: it raises before it sets the time)
            refused(exc)
    return guarded


class StopOnSignal:
    """SIGINT and SIGTERM: KeyboardInterrupt until the node spins, then a request the spin loop sees."""

    def __init__(self) -> None:
        self.spinning = self.requested = False
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._on_signal)

    def _on_signal(self, _signum: int, _frame: Any) -> None:
        if not self.spinning:
            raise KeyboardInterrupt
        self.requested = True


def spin(executor: Executor, stop: StopOnSignal, refused: Callable[[Exception], None]) -> None:
    """Spin until a stop is requested or the context is shut down; an exception of rclpy's time source (one not
    guarded) goes to ``refused``."""
    stop.spinning = True
    while not stop.requested and rclpy.ok(context=executor.context):
        try:
            executor.spin_once(timeout_sec=SPIN_WAIT_S)
        except (KeyboardInterrupt, ExternalShutdownException):
            raise
        except Exception as exc:
            if not from_time_source(exc):
                raise
            refused(exc)


def run(node_factories: Callable[[], Node] | Sequence[Callable[[], Node]], args: list[str] | None = None) -> None:
    """Init, build the node (or, a container's, each node in turn), spin on one thread (make_executor's executor;
    it follows /clock with use_sim_time), shut down cleanly.

    A node that cannot start (bad parameter, missing file) exits with code 2 and one log line. SIGINT or
    SIGTERM end it as a normal stop, exit code 0 (see the module docstring).
    """
    factories = [node_factories] if callable(node_factories) else list(node_factories)
    stop_with_runner()
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    stop = StopOnSignal()
    executor: Executor | None = None
    nodes: list[Node] = []
    code = 0
    try:
        rclpy.init(args=args if args is not None else sys.argv, signal_handler_options=SignalHandlerOptions.NO)
        executor = make_executor()
        refusals = []
        for factory in factories:
            node = factory()
            nodes.append(node)
            executor.add_node(node)
            refusals.append(ClockRefusals(node))
            guard_time_source(node, refusals[-1])
        names = ", ".join(node.get_name() for node in nodes)  # (the start-up at normal priority; once per process)
        if (not_fifo := fifo_from_environment(names)) is not None:
            nodes[0].get_logger().warning(not_fifo)
        spin(executor, stop, refusals[0])
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception as exc:
        if len(nodes) < len(factories) and isinstance(exc, (ConfigError, FileNotFoundError, ValueError)):
            failed = factories[len(nodes)]  # (its logger: the node module's name, the node's own)
            rclpy.logging.get_logger(getattr(failed, "__module__", "g1_teleop").rpartition(".")[2]).fatal(
                f"cannot start: {exc}")
            code = 2
        else:
            raise
    finally:
        _shutdown(executor, nodes)
    if code:
        sys.exit(code)


def _shutdown(executor: Executor | None, nodes: list[Node]) -> None:
    if executor is not None:
        executor.shutdown()
    for node in reversed(nodes):
        node.destroy_node()
    if rclpy.ok():
        rclpy.shutdown()
