"""Policy configurations by name: the presets that ship with the package (config/policies/NAME.yaml), and
where a configuration given as a path is found. ROS-free.

A value without a folder and without a suffix is a preset's name (``unitree_rl_gym_g1``); anything else is a
path: absolute, or relative to the policy folder (OpenWBT's ``g1_loco.yaml``), else to the working
directory. A preset's policy file (``policy_path``: motion.pt, *.onnx) is looked up in the policy folder as
any configuration's (:func:`g1_teleop.control.learned.policy_config.load_policy_config`).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from g1_teleop.control.learned.inference import TORCHSCRIPT_SUFFIXES
from g1_teleop.control.learned.policy_config import load_policy_config
from g1_teleop.core.paths import config_path

PRESET_SUFFIX = ".yaml"
LIST_COMMAND = "g1-teleop policies list"


def presets_dir() -> Path:
    """config/policies/ of the installed package."""
    return config_path("policies")


def preset_names() -> list[str]:
    """The presets' names, sorted."""
    return sorted(path.stem for path in presets_dir().glob(f"*{PRESET_SUFFIX}"))


def is_preset_name(value: str) -> bool:
    path = Path(value)
    return len(path.parts) == 1 and not path.suffix and value not in (".", "..")


def resolve_policy_config(value: str, policy_dir: Path) -> Path:
    """The configuration file ``value`` names (see the module doc). A preset name that is not one raises
    ValueError listing the presets; a path is returned whether it exists or not (loading reports it)."""
    if is_preset_name(value):
        preset = presets_dir() / f"{value}{PRESET_SUFFIX}"
        if not preset.is_file():
            raise ValueError(f"no policy preset {value!r}: the presets are {', '.join(preset_names()) or 'none'} "
                             f"(`{LIST_COMMAND}`); a configuration of your own is given by its YAML path")
        return preset
    path = Path(value).expanduser()
    if path.is_absolute() or (policy_dir / path).exists() or not path.exists():
        return policy_dir / path  # an absolute path stays itself
    return path.resolve()


@dataclass(frozen=True)
class PresetSummary:
    """What ``g1-teleop policies list`` shows of a preset: its name, observation layout, the parameter it goes
    in (loco_config, squat_config), its policy file as resolved in the policy folder, whether that file is
    there, and what it needs beyond the package ("" for nothing)."""

    name: str
    layout: str
    parameter: str
    policy_file: Path
    present: bool
    needs: str


def summarize_presets(policy_dir: Path) -> list[PresetSummary]:
    """Every preset, with its policy file looked up in ``policy_dir``."""
    torch_there = importlib.util.find_spec("torch") is not None
    summaries = []
    for name in preset_names():
        config = load_policy_config(presets_dir() / f"{name}{PRESET_SUFFIX}", policy_dir)
        torchscript = config.policy_path.suffix.lower() in TORCHSCRIPT_SUFFIXES
        needs = f"PyTorch ({'installed' if torch_there else 'not installed'})" if torchscript else ""
        parameter = "squat_config" if config.observation.command_size == 2 else "loco_config"
        summaries.append(PresetSummary(name, config.observation.value, parameter, config.policy_path,
                                       config.policy_path.is_file(), needs))
    return summaries
