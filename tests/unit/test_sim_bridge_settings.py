"""sim_bridge's parameters: each declared once with its description and legal values (core.settings), checked
when the node reads them, and given to ROS as descriptors."""

from __future__ import annotations

import dataclasses

import pytest

from g1_teleop.core.settings import constraint_of
from g1_teleop.ros.parameters import descriptor
from g1_teleop.sim.sim_bridge_settings import SimBridgeConfig


def test_every_parameter_is_described_and_the_defaults_are_legal() -> None:
    config = SimBridgeConfig()
    for field in dataclasses.fields(config):
        constraint = constraint_of(field)
        assert constraint is not None and constraint.description, field.name
        assert descriptor(constraint, getattr(config, field.name)).description == constraint.description


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"physics_dt": 0.0}, "physics_dt must be > 0"),
        ({"physics_dt": 0.003}, "whole multiple"),
        ({"realtime_factor": float("inf")}, "realtime_factor must be finite"),
        ({"max_lag_s": -0.01}, "max_lag_s must be > 0"),
        ({"republish_period_s": 0.0}, "republish_period_s must be > 0"),
        ({"command_hold_after_s": 2.0}, "hold_after_s .* <= damp_after_s"),
        ({"pushes": "5,0,40"}, "START,FX,FY,FZ,DURATION"),
    ],
)
def test_illegal_values_are_refused_with_the_parameter_named(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        SimBridgeConfig(**kwargs)
