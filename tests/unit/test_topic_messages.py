"""What `g1-teleop topic echo` prints and subscribes with: messages as data and YAML, fields by path, message
classes from the graph's type names and a QoS every publisher matches (message classes, no graph)."""

import pytest
import yaml
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
from rclpy.topic_endpoint_info import TopicEndpointInfo
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String

from g1_teleop.ros.qos import QOS_COMMAND, QOS_LATCHED, QOS_SENSOR, QOS_STATE
from g1_teleop.tools.graph_topics import matching_qos, message_class
from g1_teleop.tools.message_fields import field, to_data, to_yaml


def joint_state() -> JointState:
    msg = JointState(name=["a", "b"], position=[0.5, -1.25], velocity=[0.0, 2.0])
    msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id = 12, 500, "pelvis"
    return msg


def test_a_message_becomes_plain_data_in_field_order() -> None:
    data = to_data(joint_state())
    assert data == {"header": {"stamp": {"sec": 12, "nanosec": 500}, "frame_id": "pelvis"}, "name": ["a", "b"],
                    "position": [0.5, -1.25], "velocity": [0.0, 2.0], "effort": []}
    assert list(data) == ["header", "name", "position", "velocity", "effort"]
    imu = to_data(Imu())  # fixed-size arrays are numpy arrays in rclpy
    assert imu["orientation_covariance"] == [0.0] * 9 and type(imu["orientation_covariance"][0]) is float


def test_yaml_has_block_mappings_and_vectors_on_one_line() -> None:
    text = to_yaml(joint_state())
    assert "position: [0.5, -1.25]\n" in text and "header:\n  stamp:\n    sec: 12\n" in text
    assert yaml.safe_load(text) == to_data(joint_state())
    assert to_yaml(String(data="SQUAT")) == "data: SQUAT\n"
    assert to_yaml(field(joint_state(), "header.frame_id")) == "pelvis\n"


def test_fields_by_path_and_a_wrong_path_names_the_fields_there() -> None:
    assert list(field(joint_state(), "position")) == [0.5, -1.25]
    assert field(joint_state(), "header.stamp.sec") == 12
    with pytest.raises(ValueError, match="JointState has no field 'positions': its fields are header, name, "
                                         "position, velocity, effort"):
        field(joint_state(), "positions")
    with pytest.raises(ValueError, match=r"header.stamp has no field 'secs': its fields are sec, nanosec"):
        field(joint_state(), "header.stamp.secs")
    with pytest.raises(ValueError, match=r"header.frame_id has no field 'x': its fields are none \(a value\)"):
        field(joint_state(), "header.frame_id.x")


def test_message_classes_from_the_graphs_type_names() -> None:
    assert message_class("sensor_msgs/msg/JointState") is JointState
    assert message_class("std_msgs/String") is String
    with pytest.raises(ValueError, match=r"not installed here \(pip install ros-no-such-msgs\)"):
        message_class("no_such_msgs/msg/Thing")
    with pytest.raises(ValueError, match="std_msgs has no message Thing"):
        message_class("std_msgs/msg/Thing")


def publisher(qos) -> TopicEndpointInfo:
    return TopicEndpointInfo(node_name="n", topic_type="std_msgs/msg/String", qos_profile=qos)


def test_the_subscription_qos_matches_every_publisher() -> None:
    reliable = matching_qos([publisher(QOS_STATE), publisher(QOS_COMMAND)], depth=10)
    assert reliable.reliability == ReliabilityPolicy.RELIABLE and reliable.durability == DurabilityPolicy.VOLATILE
    assert reliable.depth == 10
    mixed = matching_qos([publisher(QOS_STATE), publisher(QOS_SENSOR)], depth=10)
    assert mixed.reliability == ReliabilityPolicy.BEST_EFFORT
    latched = matching_qos([publisher(QOS_LATCHED)], depth=1)
    assert latched.durability == DurabilityPolicy.TRANSIENT_LOCAL and latched.reliability == ReliabilityPolicy.RELIABLE
    assert matching_qos([publisher(QOS_LATCHED), publisher(QOS_COMMAND)], 1).durability == DurabilityPolicy.VOLATILE
