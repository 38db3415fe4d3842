"""Validation of named joint vectors (the payload of sensor_msgs/JointState), ROS-free.

A message is accepted only whole: every name known, no name twice, arrays of matching length, every
value finite. A rejected message raises :class:`MalformedJointMessage` with a reason meant for a log
line; the caller keeps its last safe output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


class MalformedJointMessage(ValueError):
    """A joint message that must not be used. ``kind`` groups reasons for once-only warnings."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind


@dataclass(frozen=True)
class JointVector:
    """Values ordered like ``names`` of the :class:`JointIndex` that parsed them (rad, rad/s, N·m)."""

    position: np.ndarray
    velocity: np.ndarray | None
    effort: np.ndarray | None


class JointIndex:
    """Maps joint names to positions in a fixed order (e.g. the 29 DDS motors or the 14 arm joints)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self._index = {name: i for i, name in enumerate(self.names)}
        if len(self._index) != len(self.names):
            raise ValueError(f"duplicate joint names in {self.names}")

    def __len__(self) -> int:
        return len(self.names)

    def parse(
        self,
        names: Sequence[str],
        position: Sequence[float],
        velocity: Sequence[float] = (),
        effort: Sequence[float] = (),
        *,
        require_all: bool = True,
        need_velocity: bool = False,
    ) -> JointVector:
        """Reorder a named message into this index's order.

        ``velocity`` and ``effort`` may be empty (absent) or as long as ``names``. With
        ``require_all`` every joint of the index must be present.
        """
        n = len(names)
        if len(position) != n:
            raise MalformedJointMessage(
                "size", f"{n} joint names but {len(position)} positions (need one position per name)"
            )
        for field, values in (("velocities", velocity), ("efforts", effort)):
            if len(values) not in (0, n):
                raise MalformedJointMessage(
                    "size", f"{n} joint names but {len(values)} {field} (need none or one per name)"
                )
        if need_velocity and len(velocity) != n:
            raise MalformedJointMessage("size", "message has no velocities; this topic needs them")
        unknown = [name for name in names if name not in self._index]
        if unknown:
            raise MalformedJointMessage(
                "names", f"unknown joint names {unknown[:5]}{' …' if len(unknown) > 5 else ''}"
            )
        if len(set(names)) != n:
            raise MalformedJointMessage("names", "a joint name appears twice")
        if require_all and n != len(self.names):
            missing = [name for name in self.names if name not in set(names)]
            raise MalformedJointMessage(
                "size", f"{n} joints given, {len(self.names)} expected; missing {missing[:5]}"
            )
        order = np.fromiter((self._index[name] for name in names), dtype=np.intp, count=n)
        out: list[np.ndarray | None] = []
        for values in (position, velocity, effort):
            if len(values) == 0:
                out.append(None)
                continue
            array = np.asarray(values, dtype=float)
            if not np.all(np.isfinite(array)):
                bad = [names[i] for i in np.flatnonzero(~np.isfinite(array))[:5]]
                raise MalformedJointMessage("nan", f"non-finite values (NaN or inf) for {bad}")
            ordered = np.full(len(self.names), np.nan) if not require_all else np.empty(len(self.names))
            ordered[order] = array
            out.append(ordered)
        assert out[0] is not None  # positions are required
        return JointVector(position=out[0], velocity=out[1], effort=out[2])
