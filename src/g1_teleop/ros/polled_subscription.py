"""Subscriptions read when the node wants their newest message, not on every arrival.

An executor wakes its thread for every message a subscription receives, takes it and converts it to Python: on a
small machine a fraction of a millisecond each (a thread woken from sleep runs cold), so a 200 Hz
``joint_states`` plus its ``imu`` cost a node that needs 30 or 50 answers a second a sizeable part of a core.
Polled subscriptions belong to a node of their own that no executor spins (``LatestInputs`` makes it, named after
the node with a leading underscore, hidden from ``ros2 node list``), so nothing in Python runs when their messages
arrive: DDS keeps the newest (the subscription is 1 deep, older ones are dropped unconverted) until the node takes
it, at its own rate. Measured here (2 × 160 Hz JointState, a 30 Hz timer, rclpy's EventsExecutor): the subscriber
process 12.1–14.4 % of a core with the subscriptions in its executor, 6.1–6.4 % without. rclpy's own
``wait_for_message`` (Humble on) takes messages the same way; rclcpp's ``Subscription::take`` is the C++ form.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from copy import copy
from typing import Any, Generic, TypeVar

from rclpy.context import Context
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile
from sensor_msgs.msg import JointState

from g1_teleop.ros.qos import QOS_COMMAND

Message = TypeVar("Message")
COMMAND_HISTORY = 100  # joint_commands kept until taken: 2 s at 50 Hz


class PolledSubscription(Generic[Message]):
    """A subscription whose messages the node takes itself (``take_newest``, ``take_all``); ``reader`` is a node in
    no executor (an executor would take the messages first), ``topic`` its fully qualified name and ``depth`` how
    many messages DDS keeps until they are taken (1: the newest only, older ones never converted); ``raw``: the
    messages are taken as their serialized bytes (CDR), not converted."""

    def __init__(self, reader: Node, msg_type: type[Message], topic: str, qos: QoSProfile, depth: int = 1,
                 raw: bool = False) -> None:
        kept = copy(qos)
        kept.history, kept.depth = HistoryPolicy.KEEP_LAST, depth
        self._subscription = reader.create_subscription(msg_type, topic, _never_called, kept, raw=raw)

    def take_all(self) -> list[tuple[Message, dict[str, int]]]:
        """The messages received since the last take (at most ``depth``), oldest first, each with its message info
        (``source_timestamp``: the writer's, ``received_timestamp``: the middleware's; ns of the system clock)."""
        subscription, taken = self._subscription, []
        while True:
            with subscription.handle:
                one = subscription.handle.take_message(subscription.msg_type, subscription.raw)
            if one is None:
                return taken
            taken.append(one)

    def take_newest(self) -> tuple[Message, float] | None:
        """The newest message received since the last take and when it was received (``time.monotonic()`` s), or
        None."""
        taken = self.take_received()
        return taken[-1] if taken else None

    def take_received(self) -> list[tuple[Message, float]]:
        """The messages received since the last take (at most ``depth``), oldest first, each with when it was
        received (``time.monotonic()`` s)."""
        now_ns, now_s = time.time_ns(), time.monotonic()
        return [(msg, now_s - _age_s(info, now_ns)) for msg, info in self.take_all()]


def _age_s(info: dict[str, int], now_ns: int) -> float:
    """How long ago (s) the middleware received a message (its received_timestamp, system clock; 0: not given)."""
    received_ns = info.get("received_timestamp", 0)
    return max(0.0, (now_ns - received_ns) * 1e-9) if received_ns else 0.0


def command_reader(context: Context, name: str) -> PolledSubscription[JointState]:
    """joint_command kept 2 s deep (at 50 Hz) in a node ``name`` of its own in ``context``, for a tool that measures
    the commands' timing from their write times (``take_all``'s source_timestamp), not from its own wake-ups."""
    node = Node(name, context=context, start_parameter_services=False, enable_rosout=False)
    return PolledSubscription(node, JointState, "/joint_command", QOS_COMMAND, depth=COMMAND_HISTORY)


def _never_called(msg: Any) -> None:
    """The callback of a polled subscription: its node is in no executor."""


class LatestInputs:
    """A node's input topics, each handled with its messages and when each was received (``time.monotonic()`` s):
    on arrival, as plain subscriptions (``polled`` false), or, polled, the newest message of each topic that has one
    each time the node calls ``poll`` (in subscription order; a topic subscribed with ``depth`` > 1: each message since
    the last poll, up to ``depth``, for a topic whose messages say different things, such as one hand's each). Topic
    names resolve as the node's own would (its namespace and remappings). The polled subscriptions' node goes with the
    context (rclpy destroys a context's nodes as it shuts down, Jazzy on; Humble's at exit), or with ``close``."""

    def __init__(self, node: Node, polled: bool) -> None:
        self._node, self.polled = node, polled
        self._reader: Node | None = None  # the polled subscriptions' node, made with the first of them
        self._polled: list[tuple[PolledSubscription[Any], Callable[[Any, float], None], bool]] = []

    def subscribe(self, msg_type: type[Message], topic: str, qos: QoSProfile,
                  handler: Callable[[Message, float], None], depth: int = 1) -> None:
        if not self.polled:
            self._node.create_subscription(msg_type, topic, lambda msg: handler(msg, time.monotonic()), qos)
            return
        if self._reader is None:  # the process's arguments (a node name remap among them) are the node's only
            self._reader = Node(f"_{self._node.get_name()}_polled", namespace=self._node.get_namespace(),
                                context=self._node.context, use_global_arguments=False,
                                start_parameter_services=False, enable_rosout=False)
        resolved = self._node.resolve_topic_name(topic)
        self._polled.append((PolledSubscription(self._reader, msg_type, resolved, qos, depth), handler, depth > 1))

    def poll(self) -> None:
        for subscription, handler, every in self._polled:
            taken = subscription.take_received()
            for msg, received_s in (taken if every else taken[-1:]):
                handler(msg, received_s)

    def close(self) -> None:
        if self._reader is not None:
            self._polled.clear()
            self._reader.destroy_node()
            self._reader = None
