"""The operator's squat command: pelvis height h (m) and pitch p (rad) integrated from stick rates. ROS-free.

Each control tick adds stick · full_stick_step to (h, p) and clamps the result to its range, as OpenWBT
does (full stick: 0.08 m/s and 0.1 rad/s at 50 Hz). Shared by every controller that has a SQUAT mode.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SquatCommandLimits:
    """Ranges of h (m) and p (rad), the full-stick increment per tick, and the standing command."""

    height_range_m: tuple[float, float]
    pitch_range_rad: tuple[float, float]
    full_stick_step: tuple[float, float]  # (m, rad) per control tick
    standing: tuple[float, float]  # (m, rad): the command at start and after locomotion

    def __post_init__(self) -> None:
        for name in ("height_range_m", "pitch_range_rad"):
            low, high = getattr(self, name)
            if not low < high:
                raise ValueError(f"{name} must be (low, high) with low < high, got {getattr(self, name)}")
        if not all(step > 0 for step in self.full_stick_step):
            raise ValueError(f"full_stick_step must be positive, got {self.full_stick_step}")
        if not (self.height_range_m[0] <= self.standing[0] <= self.height_range_m[1]
                and self.pitch_range_rad[0] <= self.standing[1] <= self.pitch_range_rad[1]):
            raise ValueError(f"standing {self.standing} is outside the height and pitch ranges")


class SquatCommand:
    """(h, p) in ``value``, moved by the sticks one control tick at a time."""

    def __init__(self, limits: SquatCommandLimits) -> None:
        self.limits = limits
        self.value = np.array(limits.standing, dtype=float)

    def reset(self) -> None:
        """Back to the standing command."""
        self.value = np.array(self.limits.standing, dtype=float)

    def integrate(self, height_stick: float, pitch_stick: float, height_m: float | None = None) -> None:
        """Stick values in [-1, 1] (clipped) for one control tick; ``height_m``, a height target (m), replaces the
        height stick: h moves towards it by at most a full-stick step."""
        if height_m is not None:
            height_stick = (height_m - self.value[0]) / self.limits.full_stick_step[0]
        raw = np.clip([height_stick, pitch_stick], -1.0, 1.0)
        self.value += raw * np.asarray(self.limits.full_stick_step)
        self.value[0] = np.clip(self.value[0], *self.limits.height_range_m)
        self.value[1] = np.clip(self.value[1], *self.limits.pitch_range_rad)
