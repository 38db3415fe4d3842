"""Gait clocks against hand-computed values (OpenWBT's bipedal clock, unitree_rl_gym's sin/cos phase)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from g1_teleop.control.learned.gait_clock import BipedalGaitClock, SinCosPhase, gait_clock_for
from g1_teleop.control.learned.policy_config import GaitParameters, load_policy_config

OPENWBT_GAIT = GaitParameters(frequency_hz=1.5, phase_offset=0.5, stance_ratio=0.6)
TWO_PI = 2.0 * math.pi


def steps(clock: BipedalGaitClock | SinCosPhase, n: int, stopped: bool = False) -> np.ndarray:
    for _ in range(n - 1):
        clock.step(stopped)
    return clock.step(stopped)


def test_first_tick() -> None:
    # φ = 0.3 + 0.02·1.5 = 0.33. Left: u = 0.83 (swing) → 0.5 + 0.5·0.23/0.4 = 0.7875.
    # Right: u = 0.33 (stance) → 0.5·0.33/0.6 = 0.275.
    clock = BipedalGaitClock(OPENWBT_GAIT, dt=0.02)
    np.testing.assert_allclose(clock.step(), [math.sin(TWO_PI * 0.7875), math.sin(TWO_PI * 0.275)], atol=1e-12)
    assert clock.phase == pytest.approx(0.33)


def test_later_ticks_and_wrap() -> None:
    clock = BipedalGaitClock(OPENWBT_GAIT, dt=0.02)
    # 10 ticks: φ = 0.6. Left u = 0.1 → 0.5·0.1/0.6 = 1/12; right u = 0.6, the stance/swing boundary → 0.5.
    np.testing.assert_allclose(steps(clock, 10), [math.sin(TWO_PI / 12.0), 0.0], atol=1e-9)
    # 24 ticks: φ = 0.3 + 0.72 = 1.02 → 0.02. Left u = 0.52 → 0.52/1.2; right u = 0.02 → 0.02/1.2.
    np.testing.assert_allclose(steps(clock, 14), [math.sin(TWO_PI * 0.52 / 1.2), math.sin(TWO_PI * 0.02 / 1.2)],
                               atol=1e-9)
    assert clock.phase == pytest.approx(0.02)


def test_stance_warp_with_other_parameters() -> None:
    # stance ratio 0.5, offset 0.25, 2 Hz at 0.05 s: φ = 0.3 + 0.1 = 0.4.
    # Left u = 0.65 (swing) → 0.5 + 0.5·0.15/0.5 = 0.65; right u = 0.4 (stance) → 0.5·0.4/0.5 = 0.4.
    clock = BipedalGaitClock(GaitParameters(frequency_hz=2.0, phase_offset=0.25, stance_ratio=0.5), dt=0.05)
    np.testing.assert_allclose(clock.step(), [math.sin(TWO_PI * 0.65), math.sin(TWO_PI * 0.4)], atol=1e-12)


def test_stopped_rests_in_mid_stance_and_restarts_from_there() -> None:
    clock = BipedalGaitClock(OPENWBT_GAIT, dt=0.02)
    steps(clock, 7)
    np.testing.assert_allclose(clock.step(stopped=True), [1.0, 1.0], atol=1e-12)  # warp(0.3) = 0.25
    assert clock.phase == pytest.approx(0.3)
    np.testing.assert_allclose(clock.step(), [math.sin(TWO_PI * 0.7875), math.sin(TWO_PI * 0.275)], atol=1e-12)


def test_reset() -> None:
    clock = BipedalGaitClock(OPENWBT_GAIT, dt=0.02)
    steps(clock, 13)
    clock.reset()
    assert clock.phase == 0.3
    np.testing.assert_allclose(clock.step(), [math.sin(TWO_PI * 0.7875), math.sin(TWO_PI * 0.275)], atol=1e-12)


def test_rl_gym_phase() -> None:
    phase = SinCosPhase(dt=0.02)
    # tick 1: t = 0.02 s, φ = 0.025
    np.testing.assert_allclose(phase.step(), [math.sin(TWO_PI * 0.025), math.cos(TWO_PI * 0.025)], atol=1e-12)
    np.testing.assert_allclose(steps(phase, 9), [1.0, 0.0], atol=1e-9)  # t = 0.2 s, φ = 0.25
    np.testing.assert_allclose(steps(phase, 10), [0.0, -1.0], atol=1e-9)  # t = 0.4 s, φ = 0.5
    np.testing.assert_allclose(steps(phase, 20, stopped=True), [0.0, 1.0], atol=1e-9)  # t = 0.8 s: runs on
    np.testing.assert_allclose(phase.step(), [math.sin(TWO_PI * 0.025), math.cos(TWO_PI * 0.025)], atol=1e-9)
    phase.reset()
    np.testing.assert_allclose(phase.step(), [math.sin(TWO_PI * 0.025), math.cos(TWO_PI * 0.025)], atol=1e-12)


def test_invalid_dt() -> None:
    with pytest.raises(ValueError):
        BipedalGaitClock(OPENWBT_GAIT, dt=0.0)
    with pytest.raises(ValueError):
        SinCosPhase(dt=-0.02)


def test_clock_for_each_layout(tmp_path: Path) -> None:
    base = {
        "policy_path": "p.onnx", "control_dt": 0.025, "num_actions": 12,
        "kps": [0] * 29, "kds": [0] * 29, "default_angles": [0] * 29, "dof_idx": list(range(12)),
        "action_idx": list(range(12)), "ang_vel_scale": 1, "dof_pos_scale": 1, "dof_vel_scale": 1,
        "action_scale": 1, "cmd_scale": [1, 1, 1], "max_cmd": [1, 1, 1],
    }
    configs = {
        "openwbt_loco": {**base, "num_obs": 47, "use_gait": True,
                         "gait_parameters": {"frequencies": 2.0, "phase_offset": 0.5, "stance_ratio": 0.6}},
        "rl_gym_loco": {**base, "num_obs": 47, "observation": "rl_gym_loco"},
        "openwbt_squat": {**base, "num_obs": 44, "cmd_scale": [1, 1], "max_cmd": [1, 1]},
    }
    clocks = {}
    for name, raw in configs.items():
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(raw))
        clocks[name] = gait_clock_for(load_policy_config(tmp_path / f"{name}.yaml", tmp_path))
    assert isinstance(clocks["openwbt_loco"], BipedalGaitClock)
    assert clocks["openwbt_loco"].dt == 0.025 and clocks["openwbt_loco"].gait.frequency_hz == 2.0
    assert isinstance(clocks["rl_gym_loco"], SinCosPhase) and clocks["rl_gym_loco"].dt == 0.025
    assert clocks["openwbt_squat"] is None
