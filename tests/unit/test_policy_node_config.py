"""The policy node's parameters: declared legal values, checked at load with the parameter's name."""

from __future__ import annotations

import pytest

from g1_teleop.control.policy_settings import PolicyNodeConfig


def test_the_defaults_are_legal():
    cfg = PolicyNodeConfig()
    assert cfg.controller == "builtin" and cfg.joy_axes == (1, 4, 1, 0, 3) and cfg.locomotion_arms == "walking_pose"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"controller": "mpc"}, r"controller must be one of builtin, hold, openwbt, got 'mpc'"),
    ({"locomotion_arms": "free"}, r"locomotion_arms must be one of walking_pose, ik, got 'free'"),
    ({"sync_timeout_s": 0.0}, r"sync_timeout_s must be > 0, got 0.0"),
    ({"joy_axes": (1, 4, 1)}, r"joy_axes needs 5 values, got 3"),
    ({"joy_buttons": (0, -1)}, r"joy_buttons must be >= 0"),
    ({"command_lead_s": -0.001}, r"command_lead_s must be >= 0"),
    ({"command_lead_s": 0.01}, r"command_lead_s 0.01 s must be less than half of control_dt \(0.02 s\)"),
    ({"command_lead_s": 0.004, "control_dt": 0.005}, r"less than half of control_dt \(0.005 s\)"),
])
def test_illegal_values_name_the_parameter(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PolicyNodeConfig(**kwargs)
