"""Policy inference: generic ONNX I/O and recurrent state on tiny models built here, TorchScript (when torch is
installed), action clipping and joint targets, and OpenWBT's real ONNX files (when ../shared has them)."""

from __future__ import annotations

import importlib.abc
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml
from onnx import TensorProto, helper

from g1_teleop.control.learned.inference import PolicyInference, PolicyInferenceError
from g1_teleop.control.learned.policy_config import LearnedPolicyConfig, load_policy_config
from g1_teleop.control.learned.policy_files import PolicyFileError

SHARED_POLICIES = Path(__file__).resolve().parents[3] / "shared" / "policies" / "openwbt"
NUM_OBS = 13  # squat layout with one observed joint and three actions: 2 + 3 + 3 + 2·1 + 3
ACTION_IDX = [3, 9, 12]
DEFAULT_ANGLES = [0.01 * i for i in range(29)]
OBS = (0.1 * np.arange(NUM_OBS)).astype(np.float32)


def small_config(tmp_path: Path, policy: Path, **overrides: object) -> LearnedPolicyConfig:
    raw = {
        "policy_path": str(policy), "control_dt": 0.02, "num_obs": NUM_OBS, "num_actions": 3,
        "dof_idx": [0], "action_idx": ACTION_IDX, "kps": [100] * 29, "kds": [2] * 29,
        "default_angles": DEFAULT_ANGLES, "ang_vel_scale": 0.25, "dof_pos_scale": 1.0, "dof_vel_scale": 0.05,
        "action_scale": 0.25, "cmd_scale": [1.0, 1.0], "max_cmd": [0.4, 0.5],
    }
    raw.update(overrides)
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_policy_config(path, tmp_path)


def save_model(path: Path, nodes: list, inputs: list, outputs: list, initializers: list) -> Path:
    graph = helper.make_graph(nodes, "tiny", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def tensor(name: str, shape: list) -> object:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def first_three() -> object:
    """W (13×3) with W[i, i] = 1: x·W keeps the first three entries."""
    return helper.make_tensor("W", TensorProto.FLOAT, [NUM_OBS, 3], np.eye(NUM_OBS, 3).ravel().tolist())


def accumulator_model(path: Path) -> Path:
    """State input listed first, symbolic batch: memory_out = memory_in + obs; actions = memory_out[:3];
    value = Σ memory_out is listed before actions (the runner must pick the output named actions)."""
    nodes = [
        helper.make_node("Add", ["memory_hidden_in", "observation"], ["memory_hidden_out"]),
        helper.make_node("MatMul", ["memory_hidden_out", "W"], ["actions"]),
        helper.make_node("ReduceSum", ["memory_hidden_out"], ["value"], keepdims=1),
    ]
    return save_model(path, nodes,
                      [tensor("memory_hidden_in", ["batch", NUM_OBS]), tensor("observation", [1, NUM_OBS])],
                      [tensor("value", ["batch", 1]), tensor("actions", ["batch", 3]),
                       tensor("memory_hidden_out", ["batch", NUM_OBS])],
                      [first_three()])


def stateless_model(path: Path, num_obs: int = NUM_OBS) -> Path:
    """y = 2·x[:3] (output name arbitrary: the first non-state output is the action)."""
    weights = helper.make_tensor("W", TensorProto.FLOAT, [num_obs, 3], (2.0 * np.eye(num_obs, 3)).ravel().tolist())
    return save_model(path, [helper.make_node("MatMul", ["x", "W"], ["y"])], [tensor("x", [1, num_obs])],
                      [tensor("y", [1, 3])], [weights])


# --- ONNX: generic I/O ---------------------------------------------------------------------------------


def test_state_is_carried_and_reset(tmp_path: Path) -> None:
    runner = PolicyInference(small_config(tmp_path, accumulator_model(tmp_path / "acc.onnx")))
    assert runner.backend == "onnx"
    np.testing.assert_allclose(runner.act(OBS), [0.0, 0.1, 0.2], atol=1e-6)
    np.testing.assert_allclose(runner.act(OBS), [0.0, 0.2, 0.4], atol=1e-6)  # memory = 2·obs
    np.testing.assert_allclose(runner.act(OBS), [0.0, 0.3, 0.6], atol=1e-6)
    runner.reset()
    np.testing.assert_allclose(runner.last_action, [0.0, 0.0, 0.0])
    np.testing.assert_allclose(runner.act(OBS), [0.0, 0.1, 0.2], atol=1e-6)


def test_stateless_model(tmp_path: Path) -> None:
    runner = PolicyInference(small_config(tmp_path, stateless_model(tmp_path / "mlp.onnx")))
    np.testing.assert_allclose(runner.act(OBS), [0.0, 0.2, 0.4], atol=1e-6)
    np.testing.assert_allclose(runner.act(OBS), [0.0, 0.2, 0.4], atol=1e-6)


def test_action_clipping_and_last_action(tmp_path: Path) -> None:
    runner = PolicyInference(small_config(tmp_path, stateless_model(tmp_path / "mlp.onnx"), clip_actions=0.3))
    action = runner.act(OBS)
    np.testing.assert_allclose(action, [0.0, 0.2, 0.3], atol=1e-6)
    np.testing.assert_allclose(runner.last_action, [0.0, 0.2, 0.3], atol=1e-6)
    action[0] = 9.0  # the caller's copy
    assert runner.last_action[0] == 0.0


def test_joint_targets(tmp_path: Path) -> None:
    runner = PolicyInference(small_config(tmp_path, stateless_model(tmp_path / "mlp.onnx")))
    base = 5.0 + 0.001 * np.arange(29)
    targets = runner.joint_targets(np.array([0.4, -0.8, 2.0]), base)
    expected = base.copy()
    expected[3] = 0.03 + 0.25 * 0.4
    expected[9] = 0.09 - 0.25 * 0.8
    expected[12] = 0.12 + 0.25 * 2.0
    np.testing.assert_allclose(targets, expected, atol=1e-12)
    assert base[3] == 5.003  # not modified in place
    with pytest.raises(ValueError, match=r"base must have shape \(29,\)"):
        runner.joint_targets(np.zeros(3), np.zeros(28))


def test_observation_shape_is_checked(tmp_path: Path) -> None:
    runner = PolicyInference(small_config(tmp_path, stateless_model(tmp_path / "mlp.onnx")))
    with pytest.raises(ValueError, match=r"observation must have shape \(13,\)"):
        runner.act(np.zeros(12, dtype=np.float32))


def test_model_that_does_not_fit_the_configuration(tmp_path: Path) -> None:
    model = stateless_model(tmp_path / "m12.onnx", num_obs=12)
    with pytest.raises(PolicyInferenceError, match=r"m12.onnx: input 'x' has shape \[1, 12\].*num_obs is 13"):
        PolicyInference(small_config(tmp_path, model))
    with pytest.raises(PolicyInferenceError, match="returned 3 actions, the configuration's num_actions is 2"):
        runner = PolicyInference(small_config(tmp_path, stateless_model(tmp_path / "m.onnx", 12), num_obs=12,
                                           num_actions=2, action_idx=[0, 1]))
        runner.act(np.zeros(12, dtype=np.float32))


def test_two_observation_inputs_are_refused(tmp_path: Path) -> None:
    model = save_model(tmp_path / "two.onnx", [helper.make_node("Add", ["a", "b"], ["y"])],
                       [tensor("a", [1, NUM_OBS]), tensor("b", [1, NUM_OBS])], [tensor("y", [1, NUM_OBS])], [])
    with pytest.raises(PolicyInferenceError, match=r"expected one observation input .* got \['a', 'b'\]"):
        PolicyInference(small_config(tmp_path, model))


def test_state_input_without_output_is_refused(tmp_path: Path) -> None:
    nodes = [helper.make_node("Add", ["obs", "hidden_in"], ["s"]), helper.make_node("MatMul", ["s", "W"], ["action"])]
    inputs = [tensor("obs", [1, NUM_OBS]), tensor("hidden_in", [1, NUM_OBS])]
    model = save_model(tmp_path / "nostate.onnx", nodes, inputs, [tensor("action", [1, 3])], [first_three()])
    with pytest.raises(PolicyInferenceError, match=r"cannot tell which outputs feed the state inputs \['hidden_in'\]"):
        PolicyInference(small_config(tmp_path, model))


def test_missing_and_unknown_files(tmp_path: Path) -> None:
    with pytest.raises(PolicyFileError, match=r"no policy at .*absent\.onnx: put it there, or set policy_dir"):
        PolicyInference(small_config(tmp_path, tmp_path / "absent.onnx"))
    (tmp_path / "policy.tflite").write_bytes(b"")
    with pytest.raises(PolicyInferenceError, match=r"unknown policy format '\.tflite'"):
        PolicyInference(small_config(tmp_path, tmp_path / "policy.tflite"))
    (tmp_path / "broken.onnx").write_bytes(b"not a model")
    with pytest.raises(PolicyInferenceError, match=r"broken\.onnx: cannot load the ONNX model"):
        PolicyInference(small_config(tmp_path, tmp_path / "broken.onnx"))


# --- TorchScript ---------------------------------------------------------------------------------------


class _TorchWithoutItsLibraries(importlib.abc.MetaPathFinder):
    """`import torch` fails as PyPI's CUDA build does without NVIDIA's packages."""

    def find_spec(self, name: str, path: object, target: object = None) -> None:
        if name == "torch":
            raise ImportError("libcudnn.so.9: cannot open shared object file: No such file or directory")


@pytest.mark.parametrize(("broken", "problem"), [
    (False, "PyTorch is not installed"),
    (True, "PyTorch does not import (libcudnn.so.9: cannot open shared object file: No such file or directory)"),
])
def test_torchscript_without_torch_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        broken: bool, problem: str) -> None:
    (tmp_path / "motion.pt").write_bytes(b"")
    if broken:
        monkeypatch.delitem(sys.modules, "torch", raising=False)
        monkeypatch.setattr(sys, "meta_path", [_TorchWithoutItsLibraries(), *sys.meta_path])
    else:
        monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ModuleNotFoundError
    with pytest.raises(PolicyInferenceError) as info:
        PolicyInference(small_config(tmp_path, tmp_path / "motion.pt"))
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'motion.pt'}: this policy is TorchScript and {problem}: install PyTorch")
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in message
    assert "pip install 'g1_teleop[torch]'" in message and "\n" not in message


def test_torchscript_memory_and_reset(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is optional (TorchScript policies only)")

    class Accumulator(torch.nn.Module):
        """Keeps a memory buffer like unitree_rl_gym's LSTM policy, with reset_memory() exported."""

        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("memory", torch.zeros(1, NUM_OBS))

        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            self.memory.add_(obs)
            return self.memory[:, :3].clone()

        @torch.jit.export
        def reset_memory(self) -> None:
            self.memory.zero_()

    torch.jit.save(torch.jit.script(Accumulator()), str(tmp_path / "motion.pt"))
    runner = PolicyInference(small_config(tmp_path, tmp_path / "motion.pt"))
    assert runner.backend == "torchscript"
    np.testing.assert_allclose(runner.act(OBS), [0.0, 0.1, 0.2], atol=1e-6)
    np.testing.assert_allclose(runner.act(OBS), [0.0, 0.2, 0.4], atol=1e-6)
    runner.reset()
    np.testing.assert_allclose(runner.act(OBS), [0.0, 0.1, 0.2], atol=1e-6)


# --- OpenWBT's policies --------------------------------------------------------------------------------


@pytest.fixture(params=["g1_squat.yaml", "g1_loco.yaml"])
def openwbt(request: pytest.FixtureRequest) -> LearnedPolicyConfig:
    if not (SHARED_POLICIES / request.param).is_file():
        pytest.skip(f"OpenWBT policies not found at {SHARED_POLICIES}: the reference data is not beside the repo")
    return load_policy_config(SHARED_POLICIES / request.param, SHARED_POLICIES)


def test_openwbt_hidden_state(openwbt: LearnedPolicyConfig) -> None:
    obs = np.random.default_rng(7).normal(0.0, 0.3, openwbt.num_obs).astype(np.float32)
    first = PolicyInference(openwbt).act(obs)
    runner = PolicyInference(openwbt)
    assert runner.backend == "onnx"
    np.testing.assert_array_equal(runner.act(obs), first)  # deterministic from a fresh state
    second = runner.act(obs)
    assert first.shape == (12,) and np.all(np.isfinite(second))
    assert np.max(np.abs(second - first)) > 1e-3  # the GRU state was carried
    runner.reset()
    np.testing.assert_array_equal(runner.act(obs), first)
