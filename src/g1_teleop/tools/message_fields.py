"""ROS messages as plain data and YAML, as `ros2 topic echo` prints them, and one field picked by its path.

Works on any generated message class (its ``get_fields_and_field_types``), without rosidl_runtime_py,
which has no PyPI wheel.
"""

from __future__ import annotations

import array
from typing import Any

import numpy as np
import yaml


def is_message(value: Any) -> bool:
    return hasattr(type(value), "get_fields_and_field_types")


def to_data(value: Any) -> Any:
    """A message (or a field's value) as dicts in field order, lists and Python scalars."""
    if is_message(value):
        return {name: to_data(getattr(value, name)) for name in value.get_fields_and_field_types()}
    if isinstance(value, (array.array, np.ndarray)):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [to_data(item) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def field(msg: Any, path: str) -> Any:
    """The field at a dotted ``path`` such as ``header.stamp.sec`` or ``position``."""
    value = msg
    for depth, part in enumerate(path.split(".")):
        names = list(value.get_fields_and_field_types()) if is_message(value) else []
        if part not in names:
            where = ".".join(path.split(".")[:depth]) or type(msg).__name__
            raise ValueError(f"{where} has no field {part!r}: its fields are {', '.join(names) or 'none (a value)'}")
        value = getattr(value, part)
    return value


class _Dumper(yaml.SafeDumper):
    """Block mappings, flow lists (a joint vector on one line), as ros2 topic echo --flow-style does for them."""


_Dumper.add_representer(list, lambda dumper, data: dumper.represent_sequence("tag:yaml.org,2002:seq", data,
                                                                             flow_style=True))


def to_yaml(value: Any) -> str:
    """A message or field value as YAML text (a scalar alone on its line)."""
    data = to_data(value)
    if not isinstance(data, (dict, list)):
        return f"{data}\n"
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)
