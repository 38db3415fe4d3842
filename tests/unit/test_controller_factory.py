"""make_lower_body: controllers composed of a stand-and-squat part and a walk part as users configure them
(presets by name, paths, legs-only policies), the gains each declares, and setups refused in one line with
the fix."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from g1_teleop.control.controller_factory import ControllerSetupError, make_lower_body
from g1_teleop.control.gains import JointGains
from g1_teleop.core.modes import Mode
from g1_teleop.core.paths import config_path
from support.shared_data import OPENWBT_POLICIES, shared_path
from support.tiny_policy import ACTION_SCALE, actions_after, write_tiny_loco_policy

PRESET = yaml.safe_load(config_path("policies", "unitree_rl_gym_g1.yaml").read_text())


def standing(robot):
    return SimpleNamespace(q=robot.default_q.copy(), dq=np.zeros(29), world_q_pelvis=np.array([1.0, 0.0, 0.0, 0.0]),
                           pelvis_w_pelvis=np.zeros(3))


def preset_gains() -> JointGains:
    kp, kd = np.zeros(29), np.zeros(29)
    kp[PRESET["leg_joint2motor_idx"]], kd[PRESET["leg_joint2motor_idx"]] = PRESET["kps"], PRESET["kds"]
    kp[PRESET["arm_waist_joint2motor_idx"]] = PRESET["arm_waist_kps"]
    kd[PRESET["arm_waist_joint2motor_idx"]] = PRESET["arm_waist_kds"]
    return JointGains(kp, kd)


@pytest.mark.parametrize("controller", ["builtin", "hold"])
def test_the_model_based_controllers_want_the_robots_default_gains(robot, controller):
    lower_body = make_lower_body(robot, controller)
    assert lower_body.targets(standing(robot)).gains == JointGains.profile(robot, "default")
    assert not np.any(lower_body.max_velocity)  # no walking configured


def test_openwbt_wants_its_configurations_gains(robot):
    folder = shared_path(OPENWBT_POLICIES)
    lower_body = make_lower_body(robot, "openwbt", policy_dir=str(folder))
    squat = yaml.safe_load((folder / "g1_squat.yaml").read_text())
    assert lower_body.targets(standing(robot)).gains == JointGains(squat["kps"], squat["kds"])
    np.testing.assert_allclose(lower_body.max_velocity, [0.3, 0.3, 0.3])


def test_a_legs_only_policy_walks_with_the_builtin_controller_standing_and_squatting(robot, tmp_path):
    config = write_tiny_loco_policy(tmp_path / "policies")
    lower_body = make_lower_body(robot, "builtin", loco_config=str(config), policy_dir=str(config.parent))
    state = standing(robot)
    assert lower_body.targets(state).gains == JointGains.profile(robot)
    np.testing.assert_allclose(lower_body.max_velocity, PRESET["max_cmd"])
    assert lower_body.request(Mode.LOCOMOTION) is None
    for _ in range(50):  # the preset's 50 transition ticks (none in its file: OpenWBT's 1 s)
        lower_body.targets(state)
    assert lower_body.mode is Mode.LOCOMOTION
    legs, lower = robot.group("legs"), robot.group("lower_body")
    for k in (1, 2):  # the user's policy from a reset: its k-th action
        target = lower_body.targets(state)
        expected = np.array(PRESET["default_angles"]) + ACTION_SCALE * actions_after(k)
        np.testing.assert_allclose(target.q[np.searchsorted(lower, legs)], expected, atol=1e-6)
    gains = target.gains
    assert gains == preset_gains()
    waist = robot.group("waist")
    assert gains.kp[waist].tolist() == [900.0] * 3 and gains.kd[waist].tolist() == [9.0] * 3


def test_presets_are_named_and_paths_are_found_in_the_policy_folder_then_the_working_directory(
        robot, tmp_path, monkeypatch):
    folder = tmp_path / "policies"
    write_tiny_loco_policy(folder)
    relative = make_lower_body(robot, "builtin", policy_dir=str(folder), loco_config="tiny_loco.yaml")
    assert relative.walk.drive.config.source == folder / "tiny_loco.yaml"
    elsewhere = tmp_path / "mine"
    write_tiny_loco_policy(elsewhere, name="my_loco")
    monkeypatch.chdir(tmp_path)
    from_cwd = make_lower_body(robot, "builtin", policy_dir=str(elsewhere), loco_config="mine/my_loco.yaml")
    assert from_cwd.walk.drive.config.source == elsewhere / "my_loco.yaml"
    (folder / "motion.pt").write_bytes(b"")
    monkeypatch.setitem(sys.modules, "torch", None)  # PyTorch not installed
    with pytest.raises(ControllerSetupError) as info:
        make_lower_body(robot, "builtin", policy_dir=str(folder), loco_config="unitree_rl_gym_g1")
    message = str(info.value)
    assert message.startswith(f"{folder / 'motion.pt'}: this policy is TorchScript and PyTorch is not installed: "
                              "install PyTorch, the CPU build")
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in message and "\n" not in message


def test_torchscript_policies_run_through_the_preset(robot, tmp_path):
    torch = pytest.importorskip("torch", reason="PyTorch is optional (TorchScript policies only)")

    class Memory(torch.nn.Module):
        """unitree_rl_gym's policy keeps an LSTM memory with reset_memory(); here a counter of calls."""

        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("calls", torch.zeros(1, 12))

        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            self.calls.add_(0.1)
            return self.calls.clone() + 0.0 * obs[:, :12]

        @torch.jit.export
        def reset_memory(self) -> None:
            self.calls.zero_()

    torch.jit.save(torch.jit.script(Memory()), str(tmp_path / "motion.pt"))
    lower_body = make_lower_body(robot, "builtin", policy_dir=str(tmp_path), loco_config="unitree_rl_gym_g1")
    assert lower_body.walk.drive.inference.backend == "torchscript"
    lower_body.request(Mode.LOCOMOTION)
    for _ in range(51):
        target = lower_body.targets(standing(robot))
    legs = np.searchsorted(robot.group("lower_body"), robot.group("legs"))
    np.testing.assert_allclose(target.q[legs], np.array(PRESET["default_angles"]) + ACTION_SCALE * 0.1, atol=1e-6)


def write_config(folder: Path, **changes) -> Path:
    raw = yaml.safe_load(write_tiny_loco_policy(folder).read_text())
    raw.update(changes)
    path = folder / "changed.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_setups_that_cannot_work_are_refused_with_the_fix(robot, tmp_path):
    tiny = str(write_tiny_loco_policy(tmp_path))
    cases = [
        (dict(controller="hold", loco_config=tiny), "controller hold keeps the default pose and takes no squat_config"),
        (dict(controller="builtin", squat_config=tiny), "squat_config is a learned squat policy's: use "
                                                        "controller:=openwbt"),
        (dict(controller="builtin", loco_config="rl_gym"), "no policy preset 'rl_gym': the presets are "
                                                           "unitree_rl_gym_g1 (`g1-teleop policies list`)"),
        (dict(controller="openwbt", squat_config=tiny), "tiny_loco.yaml: a squat policy needs observation "
                                                        "openwbt_squat, got rl_gym_loco"),
        (dict(controller="openwbt", policy_dir=str(tmp_path / "empty")),
         "g1_squat.yaml: run `g1-teleop policies fetch` or set G1_TELEOP_POLICY_DIR; without OpenWBT's squat "
         "policy, controller:=builtin stands and squats (walking from loco_config)"),
        (dict(controller="builtin", policy_dir=str(tmp_path),
              loco_config=str(write_config(tmp_path, arm_waist_kps=[1200] * 3 + [20] * 14))),
         "changed.yaml: gains above the robot's gain_limits for ['waist_yaw_joint', 'waist_roll_joint', "
         "'waist_pitch_joint']: lower them, or raise gain_limits in"),
        (dict(controller="builtin", loco_config=str(tmp_path / "absent.yaml")),
         "no policy configuration at " + str(tmp_path / "absent.yaml") + ": put it there, or set policy_dir"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as info:
            make_lower_body(robot, **kwargs)
        assert message in str(info.value) and "\n" not in str(info.value), (kwargs, str(info.value))
