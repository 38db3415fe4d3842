"""Pairing of inputs by time stamp for lockstep simulation, ROS-free.

In lockstep every node computes one output per control period from inputs that carry that period's
stamp. ``StampSync`` keeps the newest value per input and says when all inputs share a stamp.
Stamps are integer nanoseconds.

With a ``lead`` input, the one whose new stamp starts a control period (the simulator's joint_states),
it also keeps since when the current period has waited for its other inputs (monotonic wall time, s),
until the node marks it answered: a node waits for a period's inputs, or gives up after a timeout.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any


class StampSync:
    def __init__(self, keys: Iterable[str], lead: str | None = None) -> None:
        self._latest: dict[str, tuple[int, Any]] = {key: (-1, None) for key in keys}
        if lead is not None and lead not in self._latest:
            raise ValueError(f"lead input {lead!r} is not one of {sorted(self._latest)}")
        self._lead = lead
        self.waiting_since_s: float | None = None  # the lead's current period, while unanswered

    def put(self, key: str, stamp_ns: int, value: Any, now_s: float | None = None) -> None:
        """The newest value of ``key``; a new stamp of the lead input starts a period that waits from
        ``now_s`` (monotonic s; default: now)."""
        if key == self._lead and stamp_ns != self._latest[key][0]:
            self.waiting_since_s = time.monotonic() if now_s is None else now_s
        self._latest[key] = (stamp_ns, value)

    def stamp(self, key: str) -> int:
        return self._latest[key][0]

    def value(self, key: str) -> Any:
        return self._latest[key][1]

    def complete(self, stamp_ns: int, keys: Iterable[str] | None = None) -> bool:
        """True when every input (or every one of ``keys``) holds a value stamped ``stamp_ns``."""
        return all(self._latest[key][0] == stamp_ns for key in (self._latest if keys is None else keys))

    def ready(self) -> bool:
        """True when the lead's period waits and every input holds a value with its stamp."""
        if self._lead is None:
            raise ValueError("ready() needs a lead input")
        return self.waiting_since_s is not None and self.complete(self.stamp(self._lead))

    def answered(self) -> None:
        """The current period has its output: it no longer waits."""
        self.waiting_since_s = None
