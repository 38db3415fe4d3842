"""Declared settings: a dataclass field that carries its description and its legal values, checked at load.

One declaration serves both the check and the ROS parameter descriptor (``g1_teleop.ros.parameters``), so
that ``ros2 param describe`` and the error a wrong value gets say the same thing. ROS-free.

    @dataclass(frozen=True)
    class RetargetConfig:
        min_clearance_m: float = setting(0.01, "clearance kept between the arms and the body (m)", minimum=0.0)
        mode: str = setting("pose", "operator input", choices=("pose", "gamepad"))

        def __post_init__(self) -> None:
            check_settings(self)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_KEY = "g1_teleop.setting"


@dataclass(frozen=True)
class Constraint:
    """The legal values of one setting; ``None`` leaves that side open."""

    description: str
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False  # minimum itself is not legal (e.g. a period must be > 0)
    choices: tuple[Any, ...] | None = None
    length: int | None = None  # for a sequence: its length
    read_only: bool = True  # read once at start-up

    def text(self) -> str:
        """The constraint in words, e.g. '> 0', 'in [0, 1]', 'one of pose, gamepad'."""
        parts = []
        if self.choices is not None:
            parts.append("one of " + ", ".join(str(c) for c in self.choices))
        low = None if self.minimum is None else f"{'>' if self.exclusive_minimum else '>='} {self.minimum:g}"
        high = None if self.maximum is None else f"<= {self.maximum:g}"
        if low and high and not self.exclusive_minimum:
            parts.append(f"in [{self.minimum:g}, {self.maximum:g}]")
        else:
            parts += [p for p in (low, high) if p]
        if self.length is not None:
            parts.append(f"{self.length} values")
        return "; ".join(parts)

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not legal, or None."""
        values: Sequence[Any] = value if isinstance(value, (list, tuple)) else (value,)
        if self.length is not None and len(values) != self.length:
            return f"needs {self.length} values, got {len(values)}"
        if self.choices is not None and value not in self.choices:
            return f"must be one of {', '.join(str(c) for c in self.choices)}, got {value!r}"
        for v in values:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            if not math.isfinite(v) and (self.minimum is not None or self.maximum is not None):
                return f"must be finite, got {v}"
            if self.minimum is not None and (v <= self.minimum if self.exclusive_minimum else v < self.minimum):
                return f"must be {self.text()}, got {value}"
            if self.maximum is not None and v > self.maximum:
                return f"must be {self.text()}, got {value}"
        return None


def setting(default: Any, description: str, *, minimum: float | None = None, maximum: float | None = None,
            positive: bool = False, choices: Sequence[Any] | None = None, length: int | None = None,
            read_only: bool = True) -> Any:
    """A dataclass field with a default, a description (units included) and its legal values.

    ``positive`` means > 0. A list or tuple default is stored as a tuple (immutable).
    """
    constraint = Constraint(
        description=description,
        minimum=0.0 if positive else minimum,
        maximum=maximum,
        exclusive_minimum=positive,
        choices=None if choices is None else tuple(choices),
        length=length,
        read_only=read_only,
    )
    if isinstance(default, (list, tuple)):
        frozen = tuple(default)
        return dataclasses.field(default=frozen, metadata={_KEY: constraint})
    return dataclasses.field(default=default, metadata={_KEY: constraint})


def constraint_of(field: dataclasses.Field) -> Constraint | None:
    """The declared constraint of a dataclass field, if it was declared with :func:`setting`."""
    return field.metadata.get(_KEY)


def check_settings(config: Any) -> None:
    """Raise ValueError naming the first field of the dataclass ``config`` whose value is not legal: not of its
    default's type (an int serves for a float, not a bool for a number), or outside its constraint."""
    for field in dataclasses.fields(config):
        constraint = constraint_of(field)
        if constraint is None:
            continue
        value = getattr(config, field.name)
        problem = _type_problem(field.default, value) or constraint.problem(value)
        if problem:
            raise ValueError(f"{field.name} {problem}")


def _type_problem(default: Any, value: Any) -> str | None:
    if isinstance(default, tuple):
        if not isinstance(value, (tuple, list)):
            return f"must be a list, got {value!r}"
        element = default[0] if default else None
        problems = (_type_problem(element, v) for v in value)
        return next((f"{problem} (in {list(value)!r})" for problem in problems if problem), None)
    if isinstance(default, bool):
        return None if isinstance(value, bool) else f"must be true or false, got {value!r}"
    if isinstance(default, float):
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return None if number else f"must be a number, got {value!r}"
    if isinstance(default, int):
        whole = isinstance(value, int) and not isinstance(value, bool)
        return None if whole else f"must be a whole number, got {value!r}"
    if isinstance(default, str):
        return None if isinstance(value, str) else f"must be text, got {value!r}"
    return None
