"""Subscriptions read when the node wants their newest message, not on every arrival.

An rclpy executor wakes, rebuilds its wait set, takes and converts every message a subscription receives: a
fraction of a millisecond of Python a message, so a 200 Hz ``joint_states`` plus its ``imu`` cost a node that needs
30 answers a second about a third of a core (measured on 2 cores). A PolledSubscription is left out of the
executor's wait set (its callback group never lets it run) and the node takes the newest message at its own rate;
DDS keeps the newest message meanwhile (the subscription is 1 deep) and drops older ones unconverted. rclpy's own
``wait_for_message`` (Humble on) takes messages the same way; rclcpp's ``Subscription::take`` is the C++ form.

rclpy's EventsExecutor (``g1_teleop.ros.executor``) ignores callback groups: there the callback runs on each
arrival (in C++ up to the call: cheap) and keeps the newest message for the node to take.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from copy import copy
from typing import Any, Generic, TypeVar

from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile

Message = TypeVar("Message")


class _TakenByTheNode(CallbackGroup):
    """A callback group whose entities the executor never waits on nor runs: the node takes their messages."""

    def can_execute(self, entity: Any) -> bool:
        return False

    def beginning_execution(self, entity: Any) -> bool:
        return False

    def ending_execution(self, entity: Any) -> None:
        pass


class PolledSubscription(Generic[Message]):
    """A subscription whose messages the node takes itself (``take_newest``), outside the executor."""

    def __init__(self, node: Node, msg_type: type[Message], topic: str, qos: QoSProfile) -> None:
        newest_only = copy(qos)
        newest_only.history, newest_only.depth = HistoryPolicy.KEEP_LAST, 1  # older ones are never converted
        self._kept: tuple[Message, float] | None = None  # by the callback, where an executor runs it anyway
        self._subscription = node.create_subscription(msg_type, topic, self._keep, newest_only,
                                                      callback_group=_TakenByTheNode())

    def _keep(self, msg: Message) -> None:
        self._kept = (msg, time.monotonic())

    def take_newest(self) -> tuple[Message, float] | None:
        """The newest message received since the last take and when it was received (``time.monotonic()`` s), or
        None."""
        subscription, newest = self._subscription, None
        while True:
            with subscription.handle:
                taken = subscription.handle.take_message(subscription.msg_type, subscription.raw)
            if taken is None:
                break
            newest = taken
        kept, self._kept = self._kept, None
        if newest is None:
            return kept  # (none taken here is newer than the one the callback kept)
        msg, info = newest
        received_ns = info.get("received_timestamp", 0)  # the system clock's, by the middleware; 0: not given
        age_s = max(0.0, (time.time_ns() - received_ns) * 1e-9) if received_ns else 0.0
        return msg, time.monotonic() - age_s


class LatestInputs:
    """A node's input topics, each handled with its messages and when each was received (``time.monotonic()`` s):
    on arrival, as plain subscriptions (``polled`` false), or, polled, the newest message of each topic that has one
    each time the node calls ``poll`` (in subscription order)."""

    def __init__(self, node: Node, polled: bool) -> None:
        self._node, self.polled = node, polled
        self._polled: list[tuple[PolledSubscription[Any], Callable[[Any, float], None]]] = []

    def subscribe(self, msg_type: type[Message], topic: str, qos: QoSProfile,
                  handler: Callable[[Message, float], None]) -> None:
        if self.polled:
            self._polled.append((PolledSubscription(self._node, msg_type, topic, qos), handler))
        else:
            self._node.create_subscription(msg_type, topic, lambda msg: handler(msg, time.monotonic()), qos)

    def poll(self) -> None:
        for subscription, handler in self._polled:
            taken = subscription.take_newest()
            if taken is not None:
                handler(*taken)
