"""Inference of a learned lower-body policy, ONNX or TorchScript, with its recurrent state, ROS-free.

* ONNX (``.onnx``, onnxruntime on the CPU, one thread): the observation is the one input whose name does
  not contain "hidden"; every input whose name contains "hidden" is recurrent state, zero at reset and fed
  from the matching output after each call (names matched without their in/out/input/output words, e.g.
  OpenWBT's ``input_hidden_states`` ← ``output_hidden_states``). The action is the output named
  "action"/"actions", else the first output that is not state.
* TorchScript (``.pt``, ``.jit``; torch is optional and imported only then): the module keeps its own
  memory (unitree_rl_gym's LSTM buffers); reset calls its ``reset_memory()`` when it has one.

Actions are clipped to ±clip_actions when configured; that clipped action is what the next observation
carries (:attr:`PolicyInference.last_action`). Joint targets: default_angles + action_scale · action on
action_idx (rad, DDS order).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime

from g1_teleop.control.learned.policy_config import LearnedPolicyConfig
from g1_teleop.control.learned.policy_files import verify
from g1_teleop.core.robot_description import NUM_JOINTS

ONNX_SUFFIXES = (".onnx",)
TORCHSCRIPT_SUFFIXES = (".pt", ".jit")
# PyPI's torch wheel for Linux x86_64 needs NVIDIA's CUDA packages from PyPI (several GB) even to import; the
# CPU-only build is on PyTorch's own index.
TORCH_INSTALL = ("install PyTorch, the CPU build (about 200 MB): pip install torch --index-url "
                 "https://download.pytorch.org/whl/cpu, or PyPI's build with its CUDA libraries (several GB): "
                 "pip install 'g1_teleop[torch]'")
_STATE_MARK = "hidden"
_DIRECTION_WORDS = {"in", "out", "input", "output"}
_ACTION_NAMES = ("action", "actions")


class PolicyInferenceError(RuntimeError):
    """The policy file cannot be run with this configuration; the message names the file."""


class _OnnxPolicy:
    def __init__(self, path: Path, num_obs: int) -> None:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        try:
            self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types for unreadable models
            raise PolicyInferenceError(f"{path}: cannot load the ONNX model: {exc}") from exc
        inputs = self.session.get_inputs()
        outputs = self.session.get_outputs()
        state_inputs = [i for i in inputs if _STATE_MARK in i.name.lower()]
        observation_inputs = [i for i in inputs if _STATE_MARK not in i.name.lower()]
        if len(observation_inputs) != 1:
            raise PolicyInferenceError(
                f"{path}: expected one observation input besides the '{_STATE_MARK}' state inputs, got "
                f"{[i.name for i in observation_inputs]}")
        self.observation_name = observation_inputs[0].name
        shape = observation_inputs[0].shape
        if len(shape) != 2 or (isinstance(shape[1], int) and shape[1] != num_obs):
            raise PolicyInferenceError(
                f"{path}: input {self.observation_name!r} has shape {shape}, the configuration's num_obs is "
                f"{num_obs} (expected [1, {num_obs}])")
        self.state_outputs = _match_state_outputs(path, state_inputs, outputs)
        state_output_names = set(self.state_outputs.values())
        others = [o.name for o in outputs if o.name not in state_output_names]
        named = [n for n in others if n.lower() in _ACTION_NAMES]
        if not others:
            raise PolicyInferenceError(f"{path}: no action output (outputs {[o.name for o in outputs]})")
        self.action_name = (named or others)[0]
        self.output_names = [self.action_name, *self.state_outputs.values()]
        self.state_templates = {i.name: (_concrete_shape(i.shape), _numpy_type(path, i)) for i in state_inputs}
        self.state: dict[str, np.ndarray] = {}
        self.reset()

    def reset(self) -> None:
        self.state = {name: np.zeros(shape, dtype) for name, (shape, dtype) in self.state_templates.items()}

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        feed = {self.observation_name: observation[None, :], **self.state}
        action, *states = self.session.run(self.output_names, feed)
        self.state = dict(zip(self.state_outputs.keys(), states, strict=True))
        return np.asarray(action, dtype=np.float32).reshape(-1)


class _TorchScriptPolicy:
    def __init__(self, path: Path) -> None:
        try:
            import torch
        except (ImportError, OSError) as exc:  # OSError: a build whose CUDA libraries are missing
            problem = ("PyTorch is not installed" if isinstance(exc, ModuleNotFoundError)
                       else f"PyTorch does not import ({exc})")
            raise PolicyInferenceError(f"{path}: this policy is TorchScript and {problem}: {TORCH_INSTALL}; or "
                                       "export the policy to ONNX") from exc
        self.torch = torch
        try:
            self.module = torch.jit.load(str(path), map_location="cpu")
        except Exception as exc:  # torch raises RuntimeError and others for non-TorchScript files
            raise PolicyInferenceError(f"{path}: cannot load the TorchScript module: {exc}") from exc
        self.module.eval()
        self.reset()

    def reset(self) -> None:
        if hasattr(self.module, "reset_memory"):
            self.module.reset_memory()

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        with self.torch.inference_mode():
            action = self.module(self.torch.from_numpy(observation[None, :]))
        return action.detach().numpy().astype(np.float32).reshape(-1)


class PolicyInference:
    """Runs ``config.policy_path``; call :meth:`reset` at every (re)activation of the policy.

    Raises PolicyFileError (missing file) or PolicyInferenceError (unreadable, or not fitting the
    configuration).
    """

    def __init__(self, config: LearnedPolicyConfig) -> None:
        self.config = config
        path = verify(config.policy_path)
        suffix = path.suffix.lower()
        self._policy: _OnnxPolicy | _TorchScriptPolicy
        if suffix in ONNX_SUFFIXES:
            self._policy = _OnnxPolicy(path, config.num_obs)
        elif suffix in TORCHSCRIPT_SUFFIXES:
            self._policy = _TorchScriptPolicy(path)
        else:
            raise PolicyInferenceError(
                f"{path}: unknown policy format {suffix!r}; expected ONNX ({', '.join(ONNX_SUFFIXES)}) or "
                f"TorchScript ({', '.join(TORCHSCRIPT_SUFFIXES)})")
        self._last_action = np.zeros(config.num_actions, dtype=np.float32)

    @property
    def backend(self) -> str:
        return "onnx" if isinstance(self._policy, _OnnxPolicy) else "torchscript"

    @property
    def last_action(self) -> np.ndarray:
        """The previous action as returned by :meth:`act` (zero after reset), shape (num_actions,)."""
        return self._last_action.copy()

    def reset(self) -> None:
        """Zero the recurrent state and the previous action."""
        self._policy.reset()
        self._last_action = np.zeros(self.config.num_actions, dtype=np.float32)

    def act(self, observation: np.ndarray) -> np.ndarray:
        """One inference: the action (num_actions,), clipped as configured; advances the recurrent state."""
        observation = np.ascontiguousarray(observation, dtype=np.float32)
        if observation.shape != (self.config.num_obs,):
            raise ValueError(f"observation must have shape ({self.config.num_obs},), got {observation.shape}")
        action = self._policy(observation)
        if action.shape != (self.config.num_actions,):
            raise PolicyInferenceError(f"{self.config.policy_path}: returned {action.size} actions, the "
                                    f"configuration's num_actions is {self.config.num_actions}")
        if self.config.clip_actions is not None:
            np.clip(action, -self.config.clip_actions, self.config.clip_actions, out=action)
        self._last_action = action
        return action.copy()

    def joint_targets(self, action: np.ndarray, base: np.ndarray) -> np.ndarray:
        """``base`` (29,) with action_idx set to default_angles + action_scale · action (rad)."""
        if np.shape(base) != (NUM_JOINTS,):
            raise ValueError(f"base must have shape ({NUM_JOINTS},), got {np.shape(base)}")
        idx = self.config.action_idx
        targets = np.array(base, dtype=float)
        targets[idx] = self.config.default_angles[idx] + self.config.action_scale * np.asarray(action)
        return targets


def _words(name: str) -> tuple[str, ...]:
    return tuple(w for w in re.split(r"[^a-z0-9]+", name.lower()) if w and w not in _DIRECTION_WORDS)


def _match_state_outputs(path: Path, state_inputs: list[Any], outputs: list[Any]) -> dict[str, str]:
    """State input name -> the output that feeds it on the next call."""
    candidates = [o.name for o in outputs if _STATE_MARK in o.name.lower()]
    matches: dict[str, str] = {}
    for state in state_inputs:
        same = [name for name in candidates if _words(name) == _words(state.name)]
        if len(same) == 1:
            matches[state.name] = same[0]
    unmatched_inputs = [i.name for i in state_inputs if i.name not in matches]
    unmatched_outputs = [name for name in candidates if name not in matches.values()]
    if len(unmatched_inputs) == 1 and len(unmatched_outputs) == 1:
        matches[unmatched_inputs[0]] = unmatched_outputs[0]
    elif unmatched_inputs:
        raise PolicyInferenceError(
            f"{path}: cannot tell which outputs feed the state inputs {unmatched_inputs} (state outputs "
            f"{unmatched_outputs}); name them alike apart from in/out, e.g. input_hidden_states and "
            f"output_hidden_states")
    return matches


def _concrete_shape(shape: list[Any]) -> tuple[int, ...]:
    """A state tensor's shape with symbolic dimensions (batch, sequence) taken as 1."""
    return tuple(d if isinstance(d, int) else 1 for d in shape)


def _numpy_type(path: Path, node: Any) -> type:
    types = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16}
    if node.type not in types:
        raise PolicyInferenceError(f"{path}: state input {node.name!r} has type {node.type}; expected a float tensor")
    return types[node.type]
