"""The operator's head turns and tilts the robot's waist, ROS-free. The G1's head cameras sit on its torso: turning
the waist is how the robot looks around, so the operator's gaze moves what they see in the headset.

Waist yaw = ``yaw_gain`` × the head's yaw, waist pitch = ``pitch_gain`` × the head's pitch (looking down bends the
torso forward), roll 0, each relative to where the operator looked at the reference (the engage, or the first
head pose) with a ``deadband_rad`` so that small head motions leave the waist alone. The head pose: xr/head, the
headset world in the robot basis (x forward, y left, z up; xr_frames). The lower-body controller clips the waist to
its own limits and rate (control.standing_controller). Angles in rad, waist order (yaw, roll, pitch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from g1_teleop.core.settings import check_settings, setting


@dataclass(frozen=True)
class HeadWaistConfig:
    yaw_gain: float = setting(1.0, "waist yaw per rad of the operator's head yaw", minimum=0.0)
    pitch_gain: float = setting(0.5, "waist pitch per rad of the operator's head pitch (down: forward)", minimum=0.0)
    deadband_rad: float = setting(0.05, "head yaw and pitch within this of the reference leave the waist at 0 (rad)",
                                  minimum=0.0)

    def __post_init__(self) -> None:
        check_settings(self)


def head_yaw_pitch(world_T_head: np.ndarray) -> tuple[float, float]:
    """Yaw and pitch (rad) of the head's forward axis (x) in the robot basis; pitch > 0 looking down."""
    forward = np.asarray(world_T_head, dtype=float)[:3, 0]
    return math.atan2(forward[1], forward[0]), math.atan2(-forward[2], math.hypot(forward[0], forward[1]))


def _beyond(angle: float, deadband: float) -> float:
    return math.copysign(max(abs(angle) - deadband, 0.0), angle)


class HeadWaist:
    """Waist targets from head poses (module docstring); ``reset`` sets the reference."""

    def __init__(self, config: HeadWaistConfig | None = None) -> None:
        self.config = config or HeadWaistConfig()
        self._reference: tuple[float, float] | None = None

    def reset(self, world_T_head: np.ndarray | None = None) -> None:
        """The reference becomes this head pose (None: the next one)."""
        self._reference = None if world_T_head is None else head_yaw_pitch(world_T_head)

    def waist(self, world_T_head: np.ndarray) -> np.ndarray:
        """(3,) waist yaw, roll, pitch targets (rad) for this head pose."""
        yaw, pitch = head_yaw_pitch(world_T_head)
        if self._reference is None:
            self._reference = (yaw, pitch)
        c = self.config
        d_yaw = math.remainder(yaw - self._reference[0], math.tau)
        return np.array([c.yaw_gain * _beyond(d_yaw, c.deadband_rad), 0.0,
                         c.pitch_gain * _beyond(pitch - self._reference[1], c.deadband_rad)])
