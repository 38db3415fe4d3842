"""Observation builders, value by value against vectors assembled by hand after OpenWBT's
deploy/helpers/policy_unified.py and unitree_rl_gym's deploy/deploy_real/deploy_real.py."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from g1_teleop.control.learned.observations import build_observation
from g1_teleop.control.learned.policy_config import LearnedPolicyConfig, load_policy_config
from g1_teleop.core.rotations import gravity_in_body

LEG_Q = [-0.1, 0.0, 0.0, 0.3, -0.2, 0.0]
SQUAT_Q = LEG_Q * 2 + [0.0] * 3 + [0, 0.3, 0, 1, 0, 0, 0] + [0, -0.3, 0, 1, 0, 0, 0]
PITCH = 0.3  # rad, nose down
GRAVITY_PITCHED = [math.sin(PITCH), 0.0, -math.cos(PITCH)]  # R_y(θ)ᵀ·(0, 0, −1) = (sin θ, 0, −cos θ)


def config(tmp_path: Path, **overrides: object) -> LearnedPolicyConfig:
    """A squat-form configuration with distinct scales, so a misplaced scale shows."""
    raw = {
        "policy_path": "p.onnx", "control_dt": 0.02, "num_obs": 78, "num_actions": 12,
        "dof_idx": list(range(29)), "action_idx": list(range(12)),
        "kps": [100] * 29, "kds": [2] * 29, "default_angles": SQUAT_Q,
        "ang_vel_scale": 0.25, "dof_pos_scale": 0.5, "dof_vel_scale": 0.05, "action_scale": 0.25,
        "cmd_scale": [1.5, 0.5], "max_cmd": [0.4, 0.5], "clip_observations": 100.0,
    }
    raw.update(overrides)
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_policy_config(path, tmp_path)


def loco_overrides(**more: object) -> dict:
    return {"num_obs": 47, "dof_idx": list(range(12)), "default_angles": LEG_Q * 2 + [0.0] * 17,
            "cmd_scale": [2.0, 2.0, 0.25], "max_cmd": [0.3, 0.3, 0.3], "use_gait": True,
            "gait_parameters": {"frequencies": 1.5, "phase_offset": 0.5, "stance_ratio": 0.6}, **more}


def pitched_state(default_angles: list[float]) -> SimpleNamespace:
    """q = default + 0.01·(i+1), dq = 0.1·i − 1, pelvis pitched 0.3 rad, ω = (0.4, −0.8, 1.2)."""
    i = np.arange(29)
    return SimpleNamespace(
        q=np.array(default_angles) + 0.01 * (i + 1),
        dq=0.1 * i - 1.0,
        world_q_pelvis=np.array([math.cos(PITCH / 2), 0.0, math.sin(PITCH / 2), 0.0]),
        pelvis_w_pelvis=np.array([0.4, -0.8, 1.2]),
    )


LAST_ACTION = 0.1 * (np.arange(12) - 6)  # −0.6 … 0.5


# --- projected gravity -------------------------------------------------------------------------------


def test_gravity_upright() -> None:
    np.testing.assert_allclose(gravity_in_body(np.array([1.0, 0.0, 0.0, 0.0])), [0.0, 0.0, -1.0])


def test_gravity_pitched_forward() -> None:
    quat = np.array([math.cos(PITCH / 2), 0.0, math.sin(PITCH / 2), 0.0])
    np.testing.assert_allclose(gravity_in_body(quat), GRAVITY_PITCHED, atol=1e-15)


def test_gravity_rolled_90_degrees() -> None:
    # Rolled +90° about x: body y points up, so gravity is along body −y.
    quat = np.array([math.sqrt(0.5), math.sqrt(0.5), 0.0, 0.0])
    np.testing.assert_allclose(gravity_in_body(quat), [0.0, -1.0, 0.0], atol=1e-15)


def test_gravity_ignores_yaw_and_scale() -> None:
    # q = q_yaw(1.0) ⊗ q_pitch(0.3), multiplied out by hand: (cz·cp, −sz·sp, cz·sp, cp·sz).
    cz, sz, cp, sp = math.cos(0.5), math.sin(0.5), math.cos(PITCH / 2), math.sin(PITCH / 2)
    quat = np.array([cz * cp, -sz * sp, cz * sp, cp * sz])
    np.testing.assert_allclose(gravity_in_body(quat), GRAVITY_PITCHED, atol=1e-15)
    np.testing.assert_allclose(gravity_in_body(2.0 * quat), GRAVITY_PITCHED, atol=1e-15)


# --- layouts -------------------------------------------------------------------------------------------


def test_openwbt_squat(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    obs = build_observation(cfg, pitched_state(SQUAT_Q), np.array([0.7, 0.2]), LAST_ACTION)
    i = np.arange(29)
    expected = np.concatenate([
        [0.7 * 1.5, 0.2 * 0.5],  # command ⊙ cmd_scale
        GRAVITY_PITCHED,
        [0.1, -0.2, 0.3],  # ω · 0.25
        0.005 * (i + 1),  # (q − q_def) · 0.5
        0.05 * (0.1 * i - 1.0),  # dq · 0.05
        LAST_ACTION,
    ])
    assert obs.dtype == np.float32 and obs.shape == (78,)
    np.testing.assert_allclose(obs, expected, atol=1e-7)
    # spot checks at the layout's boundaries
    assert obs[0] == pytest.approx(1.05) and obs[2] == pytest.approx(0.29552, abs=1e-5)
    assert obs[8] == pytest.approx(0.005) and obs[36] == pytest.approx(0.145)
    assert obs[37] == pytest.approx(-0.05) and obs[65] == pytest.approx(0.09)
    assert obs[66] == pytest.approx(-0.6) and obs[77] == pytest.approx(0.5)


def test_openwbt_loco(tmp_path: Path) -> None:
    cfg = config(tmp_path, **loco_overrides())
    state = pitched_state(LEG_Q * 2 + [0.0] * 17)
    obs = build_observation(cfg, state, np.array([0.3, -0.2, 0.4]), LAST_ACTION, np.array([0.5, -0.25]))
    i = np.arange(12)
    expected = np.concatenate([
        [0.6, -0.4, 0.1],  # (0.3, −0.2, 0.4) ⊙ (2, 2, 0.25)
        GRAVITY_PITCHED,
        [0.1, -0.2, 0.3],
        0.005 * (i + 1),  # legs only
        0.05 * (0.1 * i - 1.0),
        LAST_ACTION,
        [0.5, -0.25],  # gait clock
    ])
    assert obs.shape == (47,)
    np.testing.assert_allclose(obs, expected, atol=1e-7)


def test_rl_gym_loco_order_and_no_clipping(tmp_path: Path) -> None:
    cfg = config(tmp_path, **loco_overrides(observation="rl_gym_loco", use_gait=False, clip_observations=None))
    state = pitched_state(LEG_Q * 2 + [0.0] * 17)
    state.dq[0] = 3000.0  # 150 after scaling: rl_gym's deploy does not clip
    phase = np.array([math.sin(0.3), math.cos(0.3)])
    obs = build_observation(cfg, state, np.array([0.3, -0.2, 0.4]), LAST_ACTION, phase)
    i = np.arange(12)
    dq = 0.05 * (0.1 * i - 1.0)
    dq[0] = 150.0
    expected = np.concatenate([
        [0.1, -0.2, 0.3],  # ω first
        GRAVITY_PITCHED,
        [0.6, -0.4, 0.1],  # then the command
        0.005 * (i + 1),
        dq,
        LAST_ACTION,
        phase,
    ])
    np.testing.assert_allclose(obs, expected, atol=1e-5)


def test_clipping(tmp_path: Path) -> None:
    cfg = config(tmp_path, clip_observations=2.0)
    state = pitched_state(SQUAT_Q)
    state.dq[5] = 4000.0
    state.dq[6] = -4000.0
    obs = build_observation(cfg, state, np.array([0.7, 0.2]), LAST_ACTION)
    assert obs[37 + 5] == 2.0 and obs[37 + 6] == -2.0
    assert obs[37 + 7] == pytest.approx(0.05 * (0.7 - 1.0))  # untouched neighbours
    cfg = config(tmp_path)  # ±100
    obs = build_observation(cfg, state, np.array([0.7, 0.2]), LAST_ACTION)
    assert obs[37 + 5] == 100.0 and obs[37 + 6] == -100.0


def test_dof_idx_order_is_followed(tmp_path: Path) -> None:
    cfg = config(tmp_path, **loco_overrides(dof_idx=list(range(11, -1, -1))))
    state = pitched_state(LEG_Q * 2 + [0.0] * 17)
    obs = build_observation(cfg, state, np.zeros(3), np.zeros(12), np.zeros(2))
    np.testing.assert_allclose(obs[9:21], 0.005 * np.arange(12, 0, -1), atol=1e-7)  # joint 11 first
    np.testing.assert_allclose(obs[21:33], 0.05 * (0.1 * np.arange(11, -1, -1) - 1.0), atol=1e-7)


def test_sim_state_is_accepted(tmp_path: Path, robot, mj_model) -> None:
    from g1_teleop.sim.simulator import SimConfig, Simulator

    sim = Simulator(robot, mj_model, SimConfig(gantry=True))
    cfg = config(tmp_path)
    obs = build_observation(cfg, sim.state(), np.array([0.75, 0.0]), np.zeros(12))
    np.testing.assert_allclose(obs[2:5], [0.0, 0.0, -1.0], atol=1e-6)  # standing upright at reset
    np.testing.assert_allclose(obs[8:37], 0.5 * (robot.default_q - np.array(SQUAT_Q)), atol=1e-6)


@pytest.mark.parametrize("command, last_action, clock, message", [
    (np.zeros(3), np.zeros(12), None, "command must have 2 values"),
    (np.zeros(2), np.zeros(11), None, "last_action must have 12 values"),
    (np.zeros(2), np.zeros(12), np.zeros(2), "has no gait clock"),
])
def test_squat_argument_errors(tmp_path: Path, command, last_action, clock, message) -> None:
    with pytest.raises(ValueError, match=message):
        build_observation(config(tmp_path), pitched_state(SQUAT_Q), command, last_action, clock)


def test_loco_needs_the_clock(tmp_path: Path) -> None:
    cfg = config(tmp_path, **loco_overrides())
    with pytest.raises(ValueError, match="needs 2 gait-clock values"):
        build_observation(cfg, pitched_state(SQUAT_Q), np.zeros(3), np.zeros(12))
