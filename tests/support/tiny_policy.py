"""A legs-only locomotion policy in unitree_rl_gym's layout, made here as users bring theirs: an ONNX file with a
recurrent state beside a configuration in the rl_gym form (the preset config/policies/unitree_rl_gym_g1.yaml
with this file as its policy). It does not walk; what it does is known exactly, so that tests can tell its
targets from any other controller's.

The model: hidden_out = ½·hidden_in + ½·BIAS, actions = hidden_out. From a reset (zero state) the k-th
inference (k = 1, 2, …) returns (1 − 2⁻ᵏ)·BIAS, so the leg targets are default_angles + 0.25·(1 − 2⁻ᵏ)·BIAS:
a slight crouch (hips and ankles −0.05 rad, knees +0.1 rad) approached by halves.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import yaml
from onnx import TensorProto, helper

from g1_teleop.core.paths import config_path

PRESET = "unitree_rl_gym_g1"
NUM_OBS, NUM_ACTIONS = 47, 12
BIAS = np.array([-0.2, 0.0, 0.0, 0.4, -0.2, 0.0] * 2)  # hip pitch, hip roll, hip yaw, knee, ankle pitch, ankle roll
ACTION_SCALE = 0.25


def actions_after(k: int) -> np.ndarray:
    """The action of the k-th inference after a reset (k ≥ 1)."""
    return (1.0 - 0.5**k) * BIAS


def write_tiny_loco_policy(folder: Path, name: str = "tiny_loco") -> Path:
    """``folder``/NAME.onnx and ``folder``/NAME.yaml (the preset's figures: gains, default angles, scales,
    max_cmd); returns the configuration's path."""
    folder.mkdir(parents=True, exist_ok=True)
    half = helper.make_tensor("half", TensorProto.FLOAT, [1], [0.5])
    half_bias = helper.make_tensor("half_bias", TensorProto.FLOAT, [1, NUM_ACTIONS], (0.5 * BIAS).tolist())
    nodes = [
        helper.make_node("Mul", ["hidden_in", "half"], ["decayed"]),
        helper.make_node("Add", ["decayed", "half_bias"], ["hidden_out"]),
        helper.make_node("Identity", ["hidden_out"], ["actions"]),
    ]
    inputs = [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [1, NUM_OBS]),
              helper.make_tensor_value_info("hidden_in", TensorProto.FLOAT, [1, NUM_ACTIONS])]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
               for n, s in (("actions", [1, NUM_ACTIONS]), ("hidden_out", [1, NUM_ACTIONS]))]
    model = helper.make_model(helper.make_graph(nodes, name, inputs, outputs, [half, half_bias]),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / f"{name}.onnx"))
    raw = yaml.safe_load(config_path("policies", f"{PRESET}.yaml").read_text())
    assert raw["num_obs"] == NUM_OBS and raw["action_scale"] == ACTION_SCALE, "the preset changed: update this model"
    raw["policy_path"] = f"{name}.onnx"
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path
