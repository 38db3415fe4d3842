"""Gait clocks that locomotion policies read as two observation values, one step per control tick.

* :class:`BipedalGaitClock`: OpenWBT's loco policy (``BipedalGaitPlanner`` in OpenWBT's
  ``deploy/helpers/gait_planner.py``, left foot first as its ``foot_indices``). A phase φ
  (cycles) starts at 0.3 and advances by dt·f each tick; the left foot is at (φ + offset) mod 1, the right
  at φ; each foot's phase u is warped so that the stance part [0, stance_ratio) maps to [0, 0.5) and the
  swing part to [0.5, 1); the clock is sin(2π·warp(u)): above 0 in stance, below 0 in swing. While stopped
  the phase rests at 0.3, where both clocks read 1 (both feet in mid-stance).
* :class:`SinCosPhase`: unitree_rl_gym's G1 (``Controller.run`` in its ``deploy/deploy_real/deploy_real.py``):
  φ = (t mod 0.8 s) / 0.8 s with t = ticks · dt, the tick counted before use; the values are
  (sin 2πφ, cos 2πφ). It runs whether stopped or not: the policy steps in place at zero command, as it
  was trained.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from g1_teleop.control.learned.policy_config import GaitParameters, LearnedPolicyConfig, ObservationLayout


class GaitClock(Protocol):
    def reset(self) -> None:
        """Back to the initial phase (at policy (re)activation)."""

    def step(self, stopped: bool = False) -> np.ndarray:
        """Advance one control tick and return the two clock values the observation carries."""


class BipedalGaitClock:
    """OpenWBT's bipedal gait clock; values are (left foot, right foot)."""

    INITIAL_PHASE = 0.3  # cycles

    def __init__(self, gait: GaitParameters, dt: float) -> None:
        if dt <= 0:
            raise ValueError(f"dt must be positive, got {dt}")
        self.gait = gait
        self.dt = dt
        self.phase = self.INITIAL_PHASE

    def reset(self) -> None:
        self.phase = self.INITIAL_PHASE

    def step(self, stopped: bool = False) -> np.ndarray:
        if stopped:
            self.phase = self.INITIAL_PHASE
            left = right = self.INITIAL_PHASE
        else:
            self.phase = (self.phase + self.dt * self.gait.frequency_hz) % 1.0
            left = (self.phase + self.gait.phase_offset) % 1.0
            right = self.phase
        return np.array([math.sin(2.0 * math.pi * self._warp(left)),
                         math.sin(2.0 * math.pi * self._warp(right))])

    def _warp(self, u: float) -> float:
        """Stance [0, stance_ratio) → [0, 0.5), swing [stance_ratio, 1) → [0.5, 1)."""
        ratio = self.gait.stance_ratio
        if u < ratio:
            return 0.5 * u / ratio
        return 0.5 + 0.5 * (u - ratio) / (1.0 - ratio)


class SinCosPhase:
    """unitree_rl_gym's G1 gait phase; values are (sin 2πφ, cos 2πφ)."""

    PERIOD_S = 0.8

    def __init__(self, dt: float, period_s: float = PERIOD_S) -> None:
        if dt <= 0 or period_s <= 0:
            raise ValueError(f"dt ({dt}) and period_s ({period_s}) must be positive")
        self.dt = dt
        self.period_s = period_s
        self.ticks = 0

    def reset(self) -> None:
        self.ticks = 0

    def step(self, stopped: bool = False) -> np.ndarray:
        self.ticks += 1
        phase = (self.ticks * self.dt % self.period_s) / self.period_s
        return np.array([math.sin(2.0 * math.pi * phase), math.cos(2.0 * math.pi * phase)])


def gait_clock_for(config: LearnedPolicyConfig) -> GaitClock | None:
    """The clock the configuration's observation layout carries (None for the squat layout)."""
    if config.observation is ObservationLayout.OPENWBT_LOCO:
        assert config.gait is not None  # validated at load
        return BipedalGaitClock(config.gait, config.control_dt)
    if config.observation is ObservationLayout.RL_GYM_LOCO:
        return SinCosPhase(config.control_dt)
    return None
