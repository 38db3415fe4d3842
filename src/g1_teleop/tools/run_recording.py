"""What a run records, as plain arrays, saved to and loaded from ``recording.npz``. ROS-free.

Times are simulation (or ROS) time in seconds, taken from the message stamps. Joint vectors are in DDS
order; wrist targets are left_ee / right_ee positions in the pelvis frame (m).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np


def _empty(width: int) -> np.ndarray:
    return np.zeros((0, width))


@dataclass
class Recording:
    state_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    state_q: np.ndarray = field(default_factory=lambda: _empty(29))
    state_dq: np.ndarray = field(default_factory=lambda: _empty(29))
    command_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    command_q: np.ndarray = field(default_factory=lambda: _empty(29))
    command_tau: np.ndarray = field(default_factory=lambda: _empty(29))
    arm_target_t: np.ndarray = field(default_factory=lambda: np.zeros(0))  # operator sample stamp
    arm_target_q: np.ndarray = field(default_factory=lambda: _empty(14))  # IK output, DDS arm order
    wrist_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    wrist_left: np.ndarray = field(default_factory=lambda: _empty(3))
    wrist_right: np.ndarray = field(default_factory=lambda: _empty(3))
    odom_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    odom_p: np.ndarray = field(default_factory=lambda: _empty(3))
    odom_q: np.ndarray = field(default_factory=lambda: _empty(4))  # pelvis orientation (w, x, y, z)
    trace_t: np.ndarray = field(default_factory=lambda: np.zeros(0))  # command stamp
    trace_origin_t: np.ndarray = field(default_factory=lambda: np.zeros(0))  # operator sample stamp

    def save(self, path: Path) -> None:
        np.savez_compressed(path, **{f.name: getattr(self, f.name) for f in fields(self)})

    @classmethod
    def load(cls, path: Path) -> Recording:
        with np.load(path) as data:
            return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


class RecordingBuffer:
    """Appends samples as they arrive; ``freeze`` turns them into a :class:`Recording`."""

    def __init__(self) -> None:
        self._rows: dict[str, list] = {f.name: [] for f in fields(Recording)}

    def add(self, **values) -> None:
        for name, value in values.items():
            self._rows[name].append(value)

    def count(self, name: str) -> int:
        return len(self._rows[name])

    def freeze(self) -> Recording:
        template = Recording()
        out = {}
        for name, rows in self._rows.items():
            empty = getattr(template, name)
            out[name] = np.asarray(rows, dtype=float).reshape((-1, *empty.shape[1:])) if rows else empty
        return Recording(**out)
