"""A node's configuration from its ROS parameters: one parameter per field of its configuration dataclass,
declared with the field's description and legal values (``g1_teleop.core.settings``), so that
``ros2 param describe`` and ``--show-args`` tell a user what a value means. Humble's rclpy API."""

from __future__ import annotations

import dataclasses
from typing import TypeVar

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.node import Node

from g1_teleop.core.settings import Constraint, constraint_of

C = TypeVar("C")


class ConfigError(ValueError):
    """A parameter value the node cannot use; the message names the node and the parameter."""


def descriptor(constraint: Constraint | None, default: object) -> ParameterDescriptor:
    """The ROS parameter descriptor of a declared setting (a bare field gets an empty one)."""
    if constraint is None:
        return ParameterDescriptor()
    out = ParameterDescriptor(description=constraint.description, read_only=constraint.read_only,
                              additional_constraints=constraint.text())
    closed = (constraint.minimum is not None and constraint.maximum is not None
              and not constraint.exclusive_minimum)
    if closed and isinstance(default, float):
        out.floating_point_range = [FloatingPointRange(from_value=float(constraint.minimum),
                                                       to_value=float(constraint.maximum), step=0.0)]
    elif closed and isinstance(default, int) and not isinstance(default, bool):
        out.integer_range = [IntegerRange(from_value=int(constraint.minimum), to_value=int(constraint.maximum),
                                          step=0)]
    return out


def declare_config(node: Node, cls: type[C]) -> C:
    """Declare one ROS parameter per field of the dataclass ``cls`` (its default and descriptor) and build the
    configuration from their values; ConfigError names the parameter that is wrong."""
    values = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        default = field.default if field.default is not dataclasses.MISSING else field.default_factory()  # type: ignore[misc]
        if isinstance(default, tuple):
            default = list(default)
        node.declare_parameter(field.name, default, descriptor(constraint_of(field), default))
        value = node.get_parameter(field.name).value
        values[field.name] = tuple(value) if isinstance(value, (list, tuple)) else value
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"invalid parameters for {node.get_name()}: {exc}") from None
