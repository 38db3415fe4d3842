"""xr_input's parameters: each declared once with its description and legal values (core.settings), checked
when the node reads them, and given to ROS as descriptors."""

from __future__ import annotations

import dataclasses

import pytest

from g1_teleop.core.settings import constraint_of
from g1_teleop.nodes.xr_input import XrInputConfig
from g1_teleop.operator.webxr_server import WebXrConfig
from g1_teleop.ros.messages import to_stamp
from g1_teleop.ros.operator_messages import pose_msg
from g1_teleop.ros.parameters import descriptor


def test_every_parameter_is_described_and_the_defaults_are_legal() -> None:
    config = XrInputConfig()
    for field in dataclasses.fields(config):
        constraint = constraint_of(field)
        assert constraint is not None and constraint.description, field.name
        assert descriptor(constraint, getattr(config, field.name)).description == constraint.description


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"source": "headset"}, "source must be one of scenario, bag, webxr"),
        ({"port": 0}, r"port must be in \[1, 65535\]"),
        ({"input": "gloves"}, "input must be one of hands, controllers"),
        ({"pinch_on_m": 0.05}, "pinch distances need pinch_on_m < pinch_off_m < pinch_open_m"),
        ({"rate_hz": -1.0}, "rate_hz must be >= 0"),
        ({"wrist_reference": "chest"}, "wrist_reference must be one of head, body"),
        ({"source": "bag"}, "source bag needs the bag parameter"),
    ],
)
def test_illegal_values_are_refused_with_the_parameter_named(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        XrInputConfig(**kwargs)


def test_the_live_sources_settings_are_xr_inputs() -> None:
    config = XrInputConfig(source="webxr", port=9443, input="controllers", engage_hold_s=0.3)
    assert isinstance(config, WebXrConfig)  # the WebXR server takes xr_input's parameters as they are
    assert (config.port, config.input, config.engage_hold_s, config.host) == (9443, "controllers", 0.3, "0.0.0.0")
    assert XrInputConfig(source="avp", avp_ip="10.0.0.7").avp_port == 12345  # the Vision Pro app's port
    with pytest.raises(ValueError, match="avp_port"):
        XrInputConfig(source="avp", avp_ip="10.0.0.7", avp_port=0)


def test_a_pose_goes_into_its_message_value_for_value() -> None:
    pose = [0.1, -0.2, 0.3, 0.5000000000000001, -0.5, 0.5, -0.49999999999999994]  # (w, x, y, z) after the position
    msg = pose_msg(pose, to_stamp(1_500_000_000), "pelvis")
    p, o = msg.pose.position, msg.pose.orientation
    assert [p.x, p.y, p.z, o.w, o.x, o.y, o.z] == pose
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id) == (1, 500_000_000, "pelvis")
