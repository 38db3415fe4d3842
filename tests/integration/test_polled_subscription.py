"""ros.polled_subscription over real DDS, beside each executor a node can spin on (ros.node_main.make_executor):
the node takes the newest message, with when it was received, however long the executor spun, or every message
kept (its depth), with its source timestamp; the polled subscriptions' node is in no executor and resolves names
as the node does (namespace, remappings); plain subscriptions of LatestInputs still get every message."""

from __future__ import annotations

import time

import pytest
from rclpy.executors import Executor, SingleThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import Int32

from g1_teleop.ros.polled_subscription import LatestInputs, PolledSubscription
from g1_teleop.ros.qos import QOS_OBSERVER, QOS_STATE


@pytest.fixture(params=["single", "events"])
def executor(request, rclpy_context) -> Executor:
    if request.param == "single":
        return SingleThreadedExecutor(context=rclpy_context)
    events = pytest.importorskip("rclpy.experimental", reason="no EventsExecutor in this rclpy (Humble)")
    return events.EventsExecutor(context=rclpy_context)


def _spin_for(executor: Executor, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.01)


def _wait_for_match(publisher, executor: Executor, readers: int) -> None:
    end = time.monotonic() + 10.0
    while publisher.get_subscription_count() < readers and time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)
    assert publisher.get_subscription_count() == readers


def test_the_newest_message_is_taken_once(rclpy_context, executor):
    sender, receiver = Node("sender", context=rclpy_context), Node("receiver", context=rclpy_context)
    reader = Node("reader", context=rclpy_context)  # in no executor
    executor.add_node(receiver)
    try:
        publisher = sender.create_publisher(Int32, "numbers", QOS_STATE)
        # 200 deep asked for: a polled subscription keeps the newest only (nothing older is ever converted)
        polled = PolledSubscription(reader, Int32, "/numbers", QOS_OBSERVER)
        heard: list[int] = []
        inputs = LatestInputs(receiver, polled=False)
        inputs.subscribe(Int32, "numbers", QOS_OBSERVER, lambda msg, received_s: heard.append(msg.data))
        _wait_for_match(publisher, executor, readers=2)
        assert polled.take_newest() is None

        before = time.monotonic()
        for n in range(10):
            publisher.publish(Int32(data=n))
        _spin_for(executor, 0.5)
        taken = polled.take_newest()
        assert taken is not None
        msg, received_s = taken
        assert msg.data == 9, "the newest, not the oldest kept"
        assert before - 0.01 <= received_s <= time.monotonic(), (before, received_s)
        assert polled.take_newest() is None, "each message is taken once, and older ones were not kept"
        assert heard == list(range(10)), "a plain subscription hears every message"
    finally:
        executor.shutdown()
        for node in (sender, receiver, reader):
            node.destroy_node()


def test_take_all_gives_every_kept_message_in_order_with_its_source_timestamp(rclpy_context):
    sender, reader = Node("sender", context=rclpy_context), Node("reader", context=rclpy_context)
    try:
        publisher = sender.create_publisher(Int32, "numbers", QOS_STATE)
        polled = PolledSubscription(reader, Int32, "/numbers", QOS_OBSERVER, depth=5)
        end = time.monotonic() + 10.0
        while publisher.get_subscription_count() < 1 and time.monotonic() < end:
            time.sleep(0.05)
        before_ns = time.time_ns()
        for n in range(8):
            publisher.publish(Int32(data=n))
        time.sleep(0.3)
        taken = polled.take_all()
        assert [msg.data for msg, _ in taken] == [3, 4, 5, 6, 7], "the newest 5 (its depth), oldest first"
        stamps = [info["source_timestamp"] for _, info in taken]
        assert stamps == sorted(stamps) and before_ns <= stamps[0] <= time.time_ns()
        assert polled.take_all() == []
    finally:
        for node in (sender, reader):
            node.destroy_node()


def test_polled_inputs_hand_each_topics_newest_to_its_handler_in_order(rclpy_context, executor):
    sender = Node("sender", context=rclpy_context)
    # in a namespace, "second" remapped as a launch file would: the polled subscriptions resolve as the node does
    receiver = Node("receiver", namespace="/g1", context=rclpy_context,
                    cli_args=["--ros-args", "-r", "second:=/elsewhere/second"])
    executor.add_node(receiver)
    inputs = LatestInputs(receiver, polled=True)
    try:
        first, second = (sender.create_publisher(Int32, topic, QOS_STATE) for topic in ("/g1/first",
                                                                                          "/elsewhere/second"))
        calls: list[tuple[str, int]] = []
        for topic in ("first", "second"):
            inputs.subscribe(Int32, topic, QOS_STATE, lambda msg, received_s, topic=topic: calls.append((topic,
                                                                                                          msg.data)))
        for publisher in (first, second):
            _wait_for_match(publisher, executor, readers=1)
        readers = {(info.node_name, info.node_namespace) for topic in ("/g1/first", "/elsewhere/second")
                   for info in sender.get_subscriptions_info_by_topic(topic)}
        assert readers == {("_receiver_polled", "/g1")}, readers
        assert [node.get_name() for node in executor.get_nodes()] == ["receiver"]
        for n in range(5):
            second.publish(Int32(data=n))
            first.publish(Int32(data=10 + n))
        _spin_for(executor, 0.3)
        assert calls == []  # nothing until the node polls
        inputs.poll()
        assert calls == [("first", 14), ("second", 4)]
        second.publish(Int32(data=99))
        _spin_for(executor, 0.3)
        inputs.poll()
        assert calls[2:] == [("second", 99)], "only topics with a new message"
    finally:
        executor.shutdown()
        inputs.close()
        sender.destroy_node()
        receiver.destroy_node()
