"""Policy configurations by name: the shipped presets load, names resolve to them, paths resolve in the policy
folder then the working directory, and the summary `g1-teleop policies list` prints."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from g1_teleop.control.learned.policy_config import load_policy_config
from g1_teleop.control.learned.policy_presets import preset_names, resolve_policy_config, summarize_presets
from g1_teleop.core.paths import config_path


def test_every_shipped_preset_is_a_valid_configuration(tmp_path):
    names = preset_names()
    assert "unitree_rl_gym_g1" in names
    for name in names:
        config = load_policy_config(resolve_policy_config(name, tmp_path), tmp_path)
        assert config.source == config_path("policies", f"{name}.yaml").resolve()
        assert config.policy_path.parent == tmp_path  # its policy file is looked up in the policy folder


def test_values_with_a_folder_or_a_suffix_are_paths(tmp_path, monkeypatch):
    folder, cwd = tmp_path / "policies", tmp_path / "work"
    folder.mkdir()
    (cwd / "mine").mkdir(parents=True)
    (folder / "g1_loco.yaml").write_text("{}")
    (cwd / "mine" / "loco.yaml").write_text("{}")
    monkeypatch.chdir(cwd)
    assert resolve_policy_config("g1_loco.yaml", folder) == folder / "g1_loco.yaml"
    assert resolve_policy_config("mine/loco.yaml", folder) == cwd / "mine" / "loco.yaml"
    assert resolve_policy_config(str(cwd / "mine" / "loco.yaml"), folder) == cwd / "mine" / "loco.yaml"
    assert resolve_policy_config("absent.yaml", folder) == folder / "absent.yaml"  # loading says it is missing
    with pytest.raises(ValueError, match=r"no policy preset 'g1_loco': the presets are unitree_rl_gym_g1 "
                                         r"\(`g1-teleop policies list`\); a configuration of your own is given by "
                                         r"its YAML path"):
        resolve_policy_config("g1_loco", folder)


def test_the_summary_says_what_each_preset_needs_and_whether_its_policy_file_is_there(tmp_path):
    before = {s.name: s for s in summarize_presets(tmp_path)}["unitree_rl_gym_g1"]
    assert (before.layout, before.parameter, before.policy_file, before.present) == (
        "rl_gym_loco", "loco_config", tmp_path / "motion.pt", False)
    torch_there = importlib.util.find_spec("torch") is not None
    assert before.needs == f"PyTorch ({'installed' if torch_there else 'not installed'})"
    (tmp_path / "motion.pt").write_bytes(b"")
    assert {s.name: s for s in summarize_presets(Path(tmp_path))}["unitree_rl_gym_g1"].present
