"""A topic of the running graph as a subscriber needs it: its type from the graph, the message class, and a
QoS every publisher of it matches (for `g1-teleop topic`, which has no `ros2 topic` to lean on)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.topic_endpoint_info import TopicEndpointInfo

from g1_teleop.tools.cli_node import CliNode, GraphUnreachable


def message_class(type_name: str) -> type:
    """``pkg/msg/Name`` → the message class, e.g. sensor_msgs.msg.JointState."""
    package, _, name = type_name.replace("/msg/", "/").partition("/")
    try:
        module = importlib.import_module(f"{package}.msg")
    except ImportError:
        raise ValueError(f"type {type_name}: its Python package {package} is not installed here "
                         f"(pip install ros-{package.replace('_', '-')})") from None
    try:
        return getattr(module, name)
    except AttributeError:
        raise ValueError(f"type {type_name}: {package} has no message {name} in this version") from None


def matching_qos(publishers: list[TopicEndpointInfo], depth: int) -> QoSProfile:
    """A subscription QoS compatible with every publisher: reliable only when all are, transient local
    (latched messages) only when all are."""
    reliable = all(p.qos_profile.reliability == ReliabilityPolicy.RELIABLE for p in publishers)
    latched = all(p.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for p in publishers)
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                      reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)


@dataclass(frozen=True)
class GraphTopic:
    """A published topic: fully qualified name, type name, message class and a QoS matching its publishers."""

    name: str
    type_name: str
    msg_class: type
    qos: QoSProfile


def find_topic(session: CliNode, name: str, timeout_s: float, depth: int = 10) -> GraphTopic:
    """Wait up to ``timeout_s`` for a publisher of ``name`` (relative names in the session's namespace)."""
    resolved = session.resolve(name)
    publishers: list[TopicEndpointInfo] = []

    def published() -> bool:
        publishers[:] = session.node.get_publishers_info_by_topic(resolved)
        return bool(publishers)

    if not session.spin_until(published, timeout_s):
        raise GraphUnreachable(f"no publisher of {resolved} within {timeout_s:g} s ({session.where()}): is the graph "
                               "running, in that namespace (--namespace) and with the same ROS_DOMAIN_ID? "
                               "`g1-teleop topic list` shows what is published")
    types = sorted({p.topic_type for p in publishers})
    if len(types) > 1:
        raise ValueError(f"{resolved} is published with several types {types}: a graph error, fix the publishers")
    return GraphTopic(resolved, types[0], message_class(types[0]), matching_qos(publishers, depth))
