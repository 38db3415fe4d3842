"""Where a value sits in a configuration file, for precise error messages (``file: key.path: problem``),
and the checks of YAML values that raise them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


class ConfigLocation:
    """A position in a configuration file; ``error`` builds the file's error type with that position."""

    def __init__(self, file: str, error_type: type[ValueError], path: str = "") -> None:
        self.file = file
        self.error_type = error_type
        self.path = path

    def key(self, key: str | int) -> ConfigLocation:
        if isinstance(key, int):
            return ConfigLocation(self.file, self.error_type, f"{self.path}[{key}]")
        return ConfigLocation(self.file, self.error_type, f"{self.path}.{key}" if self.path else key)

    def error(self, problem: str) -> ValueError:
        return self.error_type(f"{self}: {problem}")

    def __str__(self) -> str:
        return f"{self.file}: {self.path}" if self.path else self.file


def check_keys(mapping: Any, required: Sequence[str], optional: Sequence[str], where: ConfigLocation,
               hint: str = "") -> None:
    """``mapping`` is a mapping with every ``required`` key and no key outside ``required`` + ``optional``."""
    if not isinstance(mapping, dict):
        raise where.error(f"expected a mapping, got {type(mapping).__name__}")
    expected = list(dict.fromkeys([*required, *optional]))
    missing = [k for k in required if k not in mapping]
    unknown = [str(k) for k in mapping if k not in expected]
    if missing:
        raise where.error(f"missing key(s) {', '.join(missing)}" + (f" ({hint})" if hint else ""))
    if unknown:
        raise where.error(f"unknown key(s) {', '.join(unknown)}; expected {', '.join(expected)}")


def string(value: Any, where: ConfigLocation) -> str:
    if not isinstance(value, str) or not value:
        raise where.error(f"expected a non-empty string, got {value!r}")
    return value


def number(value: Any, where: ConfigLocation, minimum: float | None = None, strict: bool = False) -> float:
    """A finite number (not a bool), at least ``minimum`` (above it when ``strict``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise where.error(f"expected a finite number, got {value!r}")
    if minimum is not None and (value < minimum or (strict and value == minimum)):
        raise where.error(f"must be {'>' if strict else '>='} {minimum:g}, got {value!r}")
    return float(value)


def integer(value: Any, where: ConfigLocation, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise where.error(f"expected an integer, got {value!r}")
    if value < minimum:
        raise where.error(f"must be >= {minimum}, got {value}")
    return value


def boolean(value: Any, where: ConfigLocation) -> bool:
    if not isinstance(value, bool):
        raise where.error(f"expected true or false, got {value!r}")
    return value


def vector(value: Any, size: int, where: ConfigLocation, minimum: float | None = None) -> np.ndarray:
    """A list of ``size`` finite numbers (each at least ``minimum``)."""
    if not isinstance(value, list) or len(value) != size:
        got = f"{len(value)} entries" if isinstance(value, list) else repr(value)
        raise where.error(f"expected a list of {size} numbers, got {got}")
    return np.array([number(v, where.key(i), minimum=minimum) for i, v in enumerate(value)])
