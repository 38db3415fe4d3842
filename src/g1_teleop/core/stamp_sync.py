"""Pairing of inputs by time stamp for lockstep simulation, ROS-free.

In lockstep every node computes one output per control period from inputs that carry that period's
stamp. ``StampSync`` keeps the newest value per input and says when all inputs share a stamp.
Stamps are integer nanoseconds.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class StampSync:
    def __init__(self, keys: Iterable[str]) -> None:
        self._latest: dict[str, tuple[int, Any]] = {key: (-1, None) for key in keys}

    def put(self, key: str, stamp_ns: int, value: Any) -> None:
        self._latest[key] = (stamp_ns, value)

    def stamp(self, key: str) -> int:
        return self._latest[key][0]

    def value(self, key: str) -> Any:
        return self._latest[key][1]

    def complete(self, stamp_ns: int) -> bool:
        """True when every input holds a value stamped ``stamp_ns``."""
        return all(stamp == stamp_ns for stamp, _ in self._latest.values())
