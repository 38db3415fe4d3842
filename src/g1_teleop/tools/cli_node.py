"""The ROS node of a short-lived operator command (`g1-teleop call`, `topic`, `teleop-keys`).

Opens its own context in the graph's namespace, spins it until a condition holds, and names where it looked
(namespace and ROS_DOMAIN_ID) for the one-line errors those commands print. rclpy installs no signal
handlers here: Ctrl-C arrives as KeyboardInterrupt and each command decides how it ends. Humble's rclpy API.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.expand_topic_name import expand_topic_name
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions


class GraphUnreachable(Exception):
    """Nothing in the graph answered in time; the message says what was awaited and what to check."""


class CliNode:
    """A node on its own context and executor; ``node`` creates the command's endpoints."""

    def __init__(self, role: str, namespace: str = "") -> None:
        self.context = rclpy.Context()
        rclpy.init(args=[], context=self.context, signal_handler_options=SignalHandlerOptions.NO)
        self.node = Node(f"g1_teleop_{role.replace('-', '_')}_{os.getpid()}", namespace=namespace,
                         context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def resolve(self, name: str) -> str:
        """The fully qualified name of a topic or service, relative names taken in the node's namespace."""
        return expand_topic_name(name, self.node.get_name(), self.node.get_namespace())

    def where(self) -> str:
        """Where this command looks, e.g. ``namespace /g1, ROS_DOMAIN_ID 7``."""
        return f"namespace {self.node.get_namespace()}, ROS_DOMAIN_ID {self.context.get_domain_id()}"

    def spin_until(self, condition: Callable[[], bool], timeout_s: float | None) -> bool:
        """Run callbacks until ``condition()`` holds (True) or ``timeout_s`` seconds pass (False; None: never)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not condition():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            self.executor.spin_once(timeout_sec=0.05 if left is None else min(0.05, left))
        return True

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


@contextmanager
def cli_node(role: str, namespace: str = "") -> Iterator[CliNode]:
    """A :class:`CliNode` for the duration of a command, shut down however the command ends."""
    session = CliNode(role, namespace)
    try:
        yield session
    finally:
        session.close()
