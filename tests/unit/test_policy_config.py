"""Policy configuration: OpenWBT and unitree_rl_gym forms, layouts, policy-path resolution, precise errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from g1_teleop.control.learned.policy_config import LearnedPolicyConfigError, ObservationLayout, load_policy_config
from g1_teleop.core.paths import config_path

SHARED_POLICIES = Path(__file__).resolve().parents[3] / "shared" / "policies" / "openwbt"

LEG_KP = [100, 100, 100, 150, 40, 40]
ARM_KP = [100, 100, 50, 50, 20, 20, 20]
LEG_Q = [-0.1, 0.0, 0.0, 0.3, -0.2, 0.0]


def openwbt_squat() -> dict:
    """An OpenWBT squat configuration as their file writes it (78 observations, 12 actions)."""
    return {
        "policy_path": "ckpts/squat.onnx", "use_gait": False, "control_dt": 0.02, "control_decimation": 4,
        "num_obs": 78, "num_dof": 29, "num_actions": 12,
        "dof_idx": list(range(29)), "action_idx": list(range(12)),
        "kps": LEG_KP * 2 + [300] * 3 + ARM_KP * 2,
        "kds": [2, 2, 2, 4, 2, 2] * 2 + [3] * 3 + [2, 2, 2, 2, 1, 1, 1] * 2,
        "default_angles": LEG_Q * 2 + [0, 0, 0] + [0, 0.3, 0, 1, 0, 0, 0] + [0, -0.3, 0, 1, 0, 0, 0],
        "ang_vel_scale": 0.25, "dof_pos_scale": 1.0, "dof_vel_scale": 0.05, "action_scale": 0.25,
        "cmd_scale": [1.0, 1.0], "max_cmd": [0.4, 0.5], "cmd_debug": [-1.5, 0.5],
        "clip_observations": 100.0, "clip_actions": 100.0, "transition_time": 50,
    }


def openwbt_loco() -> dict:
    raw = openwbt_squat()
    raw.update({
        "policy_path": "ckpts/loco.onnx", "use_gait": True, "num_obs": 47, "num_dof": 12,
        "dof_idx": list(range(12)), "default_angles": LEG_Q * 2 + [0] * 17,
        "gait_parameters": {"frequencies": 1.5, "phase_offset": 0.5, "stance_ratio": 0.6,
                            "kappa_gait_probs": 0.05, "desired_stance_width": 0.25, "desired_swing_height": 0.07},
        "cmd_scale": [2.0, 2.0, 0.25], "max_cmd": [0.3, 0.3, 0.3], "cmd_clip": [0.1, 0.1, 0.1],
        "cmd_debug": [0.0, 0.0, 0.0],
    })
    return raw


def rl_gym_g1() -> dict:
    """unitree_rl_gym's real-robot G1 configuration (legs-only policy, waist and arms held)."""
    return {
        "control_dt": 0.02, "msg_type": "hg", "imu_type": "pelvis", "lowcmd_topic": "rt/lowcmd",
        "lowstate_topic": "rt/lowstate", "policy_path": "{LEGGED_GYM_ROOT_DIR}/deploy/pre_train/g1/motion.pt",
        "leg_joint2motor_idx": list(range(12)), "kps": LEG_KP * 2, "kds": [2, 2, 2, 4, 2, 2] * 2,
        "default_angles": LEG_Q * 2,
        "arm_waist_joint2motor_idx": list(range(12, 29)),
        "arm_waist_kps": [900, 900, 900] + ARM_KP * 2,
        "arm_waist_kds": [9, 9, 9] + [2, 2, 2, 2, 1, 1, 1] * 2,
        "arm_waist_target": [0.0] * 17,
        "ang_vel_scale": 0.25, "dof_pos_scale": 1.0, "dof_vel_scale": 0.05, "action_scale": 0.25,
        "cmd_scale": [2.0, 2.0, 0.25], "num_actions": 12, "num_obs": 47, "max_cmd": [0.8, 0.5, 1.57],
    }


def write(tmp_path: Path, raw: dict, name: str = "policy.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw))
    return path


def error_of(tmp_path: Path, raw: dict) -> str:
    path = write(tmp_path, raw)
    with pytest.raises(LearnedPolicyConfigError) as info:
        load_policy_config(path, tmp_path)
    return str(info.value)


def test_openwbt_squat_form(tmp_path: Path) -> None:
    config = load_policy_config(write(tmp_path, openwbt_squat()), tmp_path)
    assert config.observation is ObservationLayout.OPENWBT_SQUAT  # no key: use_gait false
    assert config.num_obs == 78 and config.num_actions == 12
    assert config.kps[3] == 150 and config.kps[12] == 300 and config.kds[19] == 1
    assert config.default_angles[16] == pytest.approx(0.3) and config.default_angles[23] == pytest.approx(-0.3)
    assert config.dof_idx.tolist() == list(range(29)) and config.action_idx.tolist() == list(range(12))
    assert config.cmd_scale.tolist() == [1.0, 1.0] and config.max_cmd.tolist() == [0.4, 0.5]
    assert config.cmd_clip is None and config.gait is None
    assert config.clip_observations == 100.0 and config.clip_actions == 100.0
    assert config.transition_ticks == 50 and config.control_dt == 0.02
    assert not config.kps.flags.writeable


def test_openwbt_loco_form(tmp_path: Path) -> None:
    config = load_policy_config(write(tmp_path, openwbt_loco()), tmp_path)
    assert config.observation is ObservationLayout.OPENWBT_LOCO  # no key: use_gait true
    assert config.gait is not None
    assert (config.gait.frequency_hz, config.gait.phase_offset, config.gait.stance_ratio) == (1.5, 0.5, 0.6)
    assert config.cmd_clip.tolist() == [0.1, 0.1, 0.1]
    assert config.dof_idx.tolist() == list(range(12))


def test_rl_gym_form_fills_29_joints(tmp_path: Path) -> None:
    config = load_policy_config(write(tmp_path, rl_gym_g1()), tmp_path)
    assert config.observation is ObservationLayout.RL_GYM_LOCO
    assert config.kps.tolist() == LEG_KP * 2 + [900, 900, 900] + ARM_KP * 2
    assert config.kds[12] == 9 and config.kds[28] == 1
    assert config.default_angles.tolist() == LEG_Q * 2 + [0.0] * 17
    assert config.dof_idx.tolist() == list(range(12)) and config.action_idx.tolist() == list(range(12))
    assert config.max_cmd.tolist() == [0.8, 0.5, 1.57] and config.cmd_scale.tolist() == [2.0, 2.0, 0.25]
    assert config.clip_observations is None and config.clip_actions is None  # rl_gym's deploy does not clip
    assert config.transition_ticks == 50
    assert config.gait is None


def test_rl_gym_form_mapping_follows_the_motor_indices(tmp_path: Path) -> None:
    raw = rl_gym_g1()
    raw["leg_joint2motor_idx"] = list(range(6, 12)) + list(range(6))  # right leg listed first
    config = load_policy_config(write(tmp_path, raw), tmp_path)
    assert config.action_idx.tolist() == list(range(6, 12)) + list(range(6))
    assert config.kps[6:12].tolist() == LEG_KP and config.default_angles[9] == pytest.approx(0.3)


def test_explicit_observation_key(tmp_path: Path) -> None:
    raw = openwbt_loco()
    raw["use_gait"] = False
    del raw["gait_parameters"]
    raw["observation"] = "rl_gym_loco"
    assert load_policy_config(write(tmp_path, raw), tmp_path).observation is ObservationLayout.RL_GYM_LOCO
    raw["observation"] = "walk_v2"
    message = error_of(tmp_path, raw)
    assert "policy.yaml: observation: unknown layout 'walk_v2'" in message and "openwbt_squat" in message


@pytest.mark.parametrize("change, expected", [
    ({"kps": [100] * 28}, "kps: expected a list of 29 numbers, got 28 entries"),
    ({"kds": [2] * 28 + [-1]}, "kds[28]: must be >= 0, got -1"),
    ({"default_angles": [0.0] * 12 + ["x"] + [0.0] * 16}, "default_angles[12]: expected a finite number, got 'x'"),
    ({"num_obs": 77}, "num_obs: 77 does not match observation openwbt_squat: 78 = 2 command"),
    ({"num_actions": 11}, "action_idx: lists 12 joints but num_actions is 11"),
    ({"dof_idx": [*range(28), 29]}, "dof_idx: joint indices must be < 29, got [29]"),
    ({"action_idx": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10]}, "action_idx: repeated joint indices [10]"),
    ({"num_dof": 12}, "num_dof: 12 but dof_idx lists 29 joints"),
    ({"cmd_scale": [1.0, 1.0, 1.0]}, "cmd_scale: expected a list of 2 numbers, got 3 entries"),
    ({"action_scale": 0}, "action_scale: must be > 0, got 0"),
    ({"clip_actions": -1}, "clip_actions: must be > 0, got -1"),
    ({"transition_time": 0.5}, "transition_time: expected an integer, got 0.5"),
    ({"use_gait": "yes"}, "use_gait: expected true or false, got 'yes'"),
    ({"policy_path": ""}, "policy_path: expected a file path, got ''"),
    ({"kp": 1}, "unknown key(s) kp"),
])
def test_openwbt_errors_name_file_and_key(tmp_path: Path, change: dict, expected: str) -> None:
    raw = openwbt_squat()
    raw.update(change)
    message = error_of(tmp_path, raw)
    assert message.startswith(str(tmp_path / "policy.yaml") + ": ")
    assert expected in message


def test_missing_key(tmp_path: Path) -> None:
    raw = openwbt_squat()
    del raw["dof_vel_scale"]
    assert "policy.yaml: missing key(s) dof_vel_scale" in error_of(tmp_path, raw)


def test_loco_layout_needs_gait(tmp_path: Path) -> None:
    raw = openwbt_loco()
    raw["observation"] = "openwbt_loco"
    raw["use_gait"] = False
    del raw["gait_parameters"]
    assert "use_gait: observation openwbt_loco needs use_gait: true and gait_parameters" in error_of(tmp_path, raw)
    raw = openwbt_loco()
    raw["observation"] = "rl_gym_loco"
    assert "use_gait: the gait clock belongs to observation openwbt_loco, not rl_gym_loco" in error_of(tmp_path, raw)
    raw = openwbt_loco()
    raw["gait_parameters"]["stance_ratio"] = 1.0
    assert "gait_parameters.stance_ratio: must be < 1, got 1.0" in error_of(tmp_path, raw)
    raw = openwbt_loco()
    del raw["gait_parameters"]["frequencies"]
    assert "gait_parameters: missing key(s) frequencies" in error_of(tmp_path, raw)


def test_rl_gym_legs_only_form_is_refused_with_the_reason(tmp_path: Path) -> None:
    raw = rl_gym_g1()
    for key in ("arm_waist_joint2motor_idx", "arm_waist_kps", "arm_waist_kds", "arm_waist_target"):
        del raw[key]
    message = error_of(tmp_path, raw)
    assert "missing key(s) arm_waist_joint2motor_idx" in message and "waist and arms" in message


def test_rl_gym_indices_must_cover_every_joint(tmp_path: Path) -> None:
    raw = rl_gym_g1()
    raw["arm_waist_joint2motor_idx"] = [*range(13, 29), 0]
    assert "arm_waist_joint2motor_idx: with leg_joint2motor_idx it must list each of the 29 joints once" in (
        error_of(tmp_path, raw))
    raw = rl_gym_g1()
    raw["arm_waist_kps"] = [300] * 16
    assert "arm_waist_kps: expected a list of 17 numbers, got 16 entries" in error_of(tmp_path, raw)


def test_policy_path_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    policy_dir = tmp_path / "policies"
    policy_dir.mkdir()
    path = write(tmp_path, openwbt_squat())
    # neither ckpts/squat.onnx nor squat.onnx exists: the flat name, where `fetch` puts it
    assert load_policy_config(path, policy_dir).policy_path == policy_dir / "squat.onnx"
    (policy_dir / "ckpts").mkdir()
    (policy_dir / "ckpts" / "squat.onnx").write_bytes(b"")
    assert load_policy_config(path, policy_dir).policy_path == policy_dir / "ckpts" / "squat.onnx"
    monkeypatch.setenv("G1_TELEOP_POLICY_DIR", str(tmp_path / "from_env"))
    assert load_policy_config(path).policy_path == tmp_path / "from_env" / "squat.onnx"
    raw = openwbt_squat()
    raw["policy_path"] = str(tmp_path / "elsewhere" / "p.onnx")
    assert load_policy_config(write(tmp_path, raw), policy_dir).policy_path == tmp_path / "elsewhere" / "p.onnx"
    rl_gym = load_policy_config(write(tmp_path, rl_gym_g1()), policy_dir)
    assert rl_gym.policy_path == policy_dir / "motion.pt"  # {LEGGED_GYM_ROOT_DIR}/deploy/... not there
    nested = policy_dir / "deploy" / "pre_train" / "g1"
    nested.mkdir(parents=True)
    (nested / "motion.pt").write_bytes(b"")
    assert load_policy_config(write(tmp_path, rl_gym_g1()), policy_dir).policy_path == nested / "motion.pt"


def test_missing_config_file_says_how_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(LearnedPolicyConfigError) as info:
        load_policy_config(tmp_path / "g1_squat.yaml", tmp_path)
    message = str(info.value)
    assert str(tmp_path / "g1_squat.yaml") in message
    assert "g1-teleop policies fetch" in message and "G1_TELEOP_POLICY_DIR" in message


def test_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("- 1\n- 2\n")
    with pytest.raises(LearnedPolicyConfigError, match="expected a mapping at the top level"):
        load_policy_config(path, tmp_path)


def test_openwbt_files_from_shared() -> None:
    if not SHARED_POLICIES.is_dir():
        pytest.skip(f"OpenWBT policies not found at {SHARED_POLICIES}: the reference data is not beside the repo")
    squat = load_policy_config(SHARED_POLICIES / "g1_squat.yaml", SHARED_POLICIES)
    loco = load_policy_config(SHARED_POLICIES / "g1_loco.yaml", SHARED_POLICIES)
    assert squat.observation is ObservationLayout.OPENWBT_SQUAT and squat.num_obs == 78
    assert loco.observation is ObservationLayout.OPENWBT_LOCO and loco.num_obs == 47
    assert squat.policy_path == SHARED_POLICIES / "squat.onnx" and squat.policy_path.is_file()
    assert loco.policy_path == SHARED_POLICIES / "loco.onnx" and loco.policy_path.is_file()
    np.testing.assert_array_equal(squat.kps, loco.kps)
    assert loco.gait.frequency_hz == 1.5 and loco.gait.stance_ratio == 0.6
    assert squat.max_cmd.tolist() == [0.4, 0.5] and loco.max_cmd.tolist() == [0.3, 0.3, 0.3]


def test_the_shipped_rl_gym_preset_holds_the_waist_three_times_firmer(tmp_path: Path, robot) -> None:
    (tmp_path / "motion.pt").write_bytes(b"")  # the user's policy file, found in the policy folder
    config = load_policy_config(config_path("policies", "unitree_rl_gym_g1.yaml"), tmp_path)
    assert config.observation is ObservationLayout.RL_GYM_LOCO and config.policy_path == tmp_path / "motion.pt"
    kp, kd = robot.gains("default")
    waist, legs = robot.group("waist"), robot.group("legs")
    np.testing.assert_array_equal(config.kps[waist], 3 * kp[waist])
    np.testing.assert_array_equal(config.kds[waist], 3 * kd[waist])
    others = np.r_[legs, robot.group("arms")]  # the robot's own gains
    np.testing.assert_array_equal(config.kps[others], kp[others])
    np.testing.assert_array_equal(config.kds[others], kd[others])
    np.testing.assert_array_equal(config.default_angles[legs], robot.default_q[legs])
