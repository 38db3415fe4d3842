"""Configuration of a learned lower-body policy, in the community's YAML forms, validated at load.

Two forms are read:

* OpenWBT (``deploy/configs/g1_squat.yaml``, ``g1_loco.yaml``): 29-joint ``kps``/``kds``/``default_angles``
  in DDS order, ``dof_idx`` (joints in the observation), ``action_idx`` (joints the actions drive).
* unitree_rl_gym G1 (``deploy/deploy_real/configs/g1.yaml``): 12 leg values mapped by
  ``leg_joint2motor_idx``, waist and arms held by ``arm_waist_kps``/``kds``/``target`` on
  ``arm_waist_joint2motor_idx``.

The observation layout is the ``observation`` key (see :class:`ObservationLayout`); OpenWBT's files have
none, so it follows ``use_gait`` (loco with the gait clock, squat without), and the rl_gym form defaults
to ``rl_gym_loco``. ``num_obs`` must match the layout. Keys of the upstream runners that do not concern
the policy (topics, simulation rates, debug commands) are accepted and ignored; any other key is an error.

``policy_path`` is resolved in the policy folder (:func:`g1_teleop.control.learned.policy_files.resolve_policy_dir`):
absolute paths are kept; a relative path (OpenWBT writes ``ckpts/squat.onnx``, rl_gym
``{LEGGED_GYM_ROOT_DIR}/deploy/...``) is taken inside the folder when it exists there, else the file is
looked up by its name in the folder (the flat layout ``g1-teleop policies fetch`` writes).

Units: rad, rad/s, s, N·m/rad, N·m·s/rad. Commands: squat (height m, pitch rad); loco (vx, vy m/s, wz rad/s).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from g1_teleop.control.learned.policy_files import missing_file_message, resolve_policy_dir
from g1_teleop.core.config_location import ConfigLocation, boolean, check_keys, integer, number, vector
from g1_teleop.core.robot_description import NUM_JOINTS
from g1_teleop.core.strict_yaml import load_yaml

_ROOT_PLACEHOLDER = "{LEGGED_GYM_ROOT_DIR}"
_DEFAULT_TRANSITION_TICKS = 50  # OpenWBT's value (1 s at 50 Hz), for the rl_gym form that has none


class LearnedPolicyConfigError(ValueError):
    """The policy configuration is invalid; the message reads ``file: key: problem``."""


class ObservationLayout(enum.Enum):
    """Order and content of the observation vector: OpenWBT's squat and loco policies
    (``deploy/helpers/policy_unified.py``), unitree_rl_gym's G1 (``deploy/deploy_real/deploy_real.py``)."""

    OPENWBT_SQUAT = "openwbt_squat"  # command(2), gravity, ω, q−q_def, dq, last action
    OPENWBT_LOCO = "openwbt_loco"  # command(3), gravity, ω, q−q_def, dq, last action, gait clock(2)
    RL_GYM_LOCO = "rl_gym_loco"  # ω, gravity, command(3), q−q_def, dq, last action, sin/cos phase(2)

    @property
    def command_size(self) -> int:
        return 2 if self is ObservationLayout.OPENWBT_SQUAT else 3

    @property
    def clock_size(self) -> int:
        return 0 if self is ObservationLayout.OPENWBT_SQUAT else 2

    def size(self, num_dofs: int, num_actions: int) -> int:
        """Length of the observation for ``num_dofs`` observed joints and ``num_actions`` actions."""
        return self.command_size + 3 + 3 + 2 * num_dofs + num_actions + self.clock_size


@dataclass(frozen=True)
class GaitParameters:
    """OpenWBT's bipedal gait clock: frequency (Hz), phase offset between the feet (cycles), stance ratio."""

    frequency_hz: float
    phase_offset: float
    stance_ratio: float


@dataclass(frozen=True, eq=False)
class LearnedPolicyConfig:
    """A validated policy configuration. Joint vectors have 29 entries in DDS order (read-only arrays)."""

    source: Path  # the YAML file
    observation: ObservationLayout
    policy_path: Path  # resolved; may not exist yet (PolicyInference checks)
    control_dt: float  # s, one policy step
    kps: np.ndarray  # (29,) N·m/rad
    kds: np.ndarray  # (29,) N·m·s/rad
    default_angles: np.ndarray  # (29,) rad: q_def of the observation and of the action targets
    ang_vel_scale: float
    dof_pos_scale: float
    dof_vel_scale: float
    action_scale: float  # target = default_angles + action_scale · action, on action_idx
    cmd_scale: np.ndarray  # (command_size,) observation scale of the command
    max_cmd: np.ndarray  # (command_size,) command at full stick
    cmd_clip: np.ndarray | None  # (command_size,) |c| below this is zeroed (OpenWBT loco); None: no dead band
    num_obs: int
    num_actions: int
    dof_idx: np.ndarray  # (n,) int: joints in the observation, in this order
    action_idx: np.ndarray  # (num_actions,) int: joints the actions drive, in this order
    clip_observations: float | None  # None: not clipped
    clip_actions: float | None  # None: not clipped
    transition_ticks: int  # YAML key transition_time: mode-transition blend, in control ticks
    gait: GaitParameters | None  # OpenWBT loco only


# Keys each form reads, and keys of the upstream runners that are accepted but not used here.
_COMMON_REQUIRED = ("policy_path", "control_dt", "num_obs", "num_actions", "kps", "kds", "default_angles",
                    "ang_vel_scale", "dof_pos_scale", "dof_vel_scale", "action_scale", "cmd_scale", "max_cmd")
_COMMON_OPTIONAL = ("observation", "cmd_clip", "clip_observations", "clip_actions", "transition_time")
_OPENWBT_REQUIRED = ("dof_idx", "action_idx")
_OPENWBT_OPTIONAL = ("use_gait", "gait_parameters", "num_dof")
_OPENWBT_IGNORED = ("control_decimation", "cmd_debug")
_RL_GYM_REQUIRED = ("leg_joint2motor_idx", "arm_waist_joint2motor_idx", "arm_waist_kps", "arm_waist_kds",
                    "arm_waist_target")
_RL_GYM_IGNORED = ("msg_type", "imu_type", "lowcmd_topic", "lowstate_topic")
_GAIT_REQUIRED = ("frequencies", "phase_offset", "stance_ratio")
_GAIT_IGNORED = ("kappa_gait_probs", "desired_stance_width", "desired_swing_height")  # unused at deploy


def load_policy_config(path: str | Path, policy_dir: str | Path | None = None) -> LearnedPolicyConfig:
    """Read and validate a policy YAML (either form); ``policy_dir`` as in :func:`resolve_policy_dir`."""
    source = Path(path)
    if not source.is_file():
        raise LearnedPolicyConfigError(missing_file_message(source, "policy configuration"))
    try:
        raw = load_yaml(source.read_text(), str(source))
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise LearnedPolicyConfigError(f"{source}: cannot read: {exc}") from exc
    where = ConfigLocation(str(source), LearnedPolicyConfigError)
    if not isinstance(raw, dict):
        raise LearnedPolicyConfigError(f"{source}: expected a mapping at the top level")
    rl_gym_form = "leg_joint2motor_idx" in raw
    if rl_gym_form:
        hint = ("a legs-only (unitree_rl_gym) configuration needs the arm_waist_* keys to hold the waist and "
                "arms of the 29-DoF robot" if any(k not in raw for k in _RL_GYM_REQUIRED) else "")
        check_keys(raw, _COMMON_REQUIRED + _RL_GYM_REQUIRED, _COMMON_OPTIONAL + _RL_GYM_IGNORED, where, hint)
        kps, kds, default_angles, dof_idx = _rl_gym_joint_vectors(raw, where)
        action_idx = dof_idx
        use_gait = False
    else:
        check_keys(raw, _COMMON_REQUIRED + _OPENWBT_REQUIRED, _COMMON_OPTIONAL + _OPENWBT_OPTIONAL
                    + _OPENWBT_IGNORED, where)
        kps = vector(raw["kps"], NUM_JOINTS, where.key("kps"), minimum=0.0)
        kds = vector(raw["kds"], NUM_JOINTS, where.key("kds"), minimum=0.0)
        default_angles = vector(raw["default_angles"], NUM_JOINTS, where.key("default_angles"))
        dof_idx = _indices(raw["dof_idx"], where.key("dof_idx"))
        action_idx = _indices(raw["action_idx"], where.key("action_idx"))
        use_gait = boolean(raw.get("use_gait", False), where.key("use_gait"))
        if "num_dof" in raw and integer(raw["num_dof"], where.key("num_dof"), 1) != len(dof_idx):
            raise where.key("num_dof").error(f"{raw['num_dof']} but dof_idx lists {len(dof_idx)} joints")

    observation = _observation(raw, rl_gym_form, use_gait, where)
    num_actions = integer(raw["num_actions"], where.key("num_actions"), 1)
    if len(action_idx) != num_actions:
        key = "leg_joint2motor_idx" if rl_gym_form else "action_idx"
        raise where.key(key).error(f"lists {len(action_idx)} joints but num_actions is {num_actions}")
    num_obs = integer(raw["num_obs"], where.key("num_obs"), 1)
    expected_obs = observation.size(len(dof_idx), num_actions)
    if num_obs != expected_obs:
        raise where.key("num_obs").error(
            f"{num_obs} does not match observation {observation.value}: {expected_obs} = "
            f"{observation.command_size} command + 3 gravity + 3 angular velocity + 2×{len(dof_idx)} joints + "
            f"{num_actions} actions" + (f" + {observation.clock_size} clock" if observation.clock_size else ""))

    n_cmd = observation.command_size
    gait = None
    if observation is ObservationLayout.OPENWBT_LOCO:
        if not use_gait or "gait_parameters" not in raw:
            raise where.key("use_gait").error("observation openwbt_loco needs use_gait: true and gait_parameters")
        gait = _gait(raw["gait_parameters"], where.key("gait_parameters"))
    elif use_gait:
        raise where.key("use_gait").error(
            f"the gait clock belongs to observation openwbt_loco, not {observation.value}")
    return LearnedPolicyConfig(
        source=source.resolve(),
        observation=observation,
        policy_path=_policy_path(raw["policy_path"], resolve_policy_dir(policy_dir), where.key("policy_path")),
        control_dt=number(raw["control_dt"], where.key("control_dt"), minimum=0.0, strict=True),
        kps=_frozen(kps),
        kds=_frozen(kds),
        default_angles=_frozen(default_angles),
        ang_vel_scale=number(raw["ang_vel_scale"], where.key("ang_vel_scale"), minimum=0.0, strict=True),
        dof_pos_scale=number(raw["dof_pos_scale"], where.key("dof_pos_scale"), minimum=0.0, strict=True),
        dof_vel_scale=number(raw["dof_vel_scale"], where.key("dof_vel_scale"), minimum=0.0, strict=True),
        action_scale=number(raw["action_scale"], where.key("action_scale"), minimum=0.0, strict=True),
        cmd_scale=_frozen(vector(raw["cmd_scale"], n_cmd, where.key("cmd_scale"))),
        max_cmd=_frozen(vector(raw["max_cmd"], n_cmd, where.key("max_cmd"), minimum=0.0)),
        cmd_clip=(_frozen(vector(raw["cmd_clip"], n_cmd, where.key("cmd_clip"), minimum=0.0))
                  if raw.get("cmd_clip") is not None else None),
        num_obs=num_obs,
        num_actions=num_actions,
        dof_idx=dof_idx,
        action_idx=action_idx,
        clip_observations=_optional_limit(raw.get("clip_observations"), where.key("clip_observations")),
        clip_actions=_optional_limit(raw.get("clip_actions"), where.key("clip_actions")),
        transition_ticks=integer(raw.get("transition_time", _DEFAULT_TRANSITION_TICKS),
                                  where.key("transition_time"), 0),
        gait=gait,
    )




def _frozen(values: Any, dtype: type = float) -> np.ndarray:
    array = np.array(values, dtype=dtype)
    array.flags.writeable = False
    return array










def _indices(value: Any, where: ConfigLocation) -> np.ndarray:
    """Distinct joint indices in [0, 29), as a read-only int array."""
    if not isinstance(value, list) or not value:
        raise where.error(f"expected a non-empty list of joint indices, got {value!r}")
    indices = [integer(v, where.key(i), 0) for i, v in enumerate(value)]
    outside = [i for i in indices if i >= NUM_JOINTS]
    if outside:
        raise where.error(f"joint indices must be < {NUM_JOINTS}, got {outside}")
    repeated = sorted({i for i in indices if indices.count(i) > 1})
    if repeated:
        raise where.error(f"repeated joint indices {repeated}")
    return _frozen(indices, dtype=np.intp)


def _optional_limit(value: Any, where: ConfigLocation) -> float | None:
    return None if value is None else number(value, where, minimum=0.0, strict=True)


def _observation(raw: dict, rl_gym_form: bool, use_gait: bool, where: ConfigLocation) -> ObservationLayout:
    value = raw.get("observation")
    if value is None:
        if rl_gym_form:
            return ObservationLayout.RL_GYM_LOCO
        return ObservationLayout.OPENWBT_LOCO if use_gait else ObservationLayout.OPENWBT_SQUAT
    try:
        return ObservationLayout(value)
    except ValueError:
        names = ", ".join(layout.value for layout in ObservationLayout)
        raise where.key("observation").error(f"unknown layout {value!r}; expected one of {names}") from None


def _rl_gym_joint_vectors(raw: dict, where: ConfigLocation) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """29-joint kps, kds, default angles from the legs and arm/waist halves, and the leg indices."""
    legs = _indices(raw["leg_joint2motor_idx"], where.key("leg_joint2motor_idx"))
    others = _indices(raw["arm_waist_joint2motor_idx"], where.key("arm_waist_joint2motor_idx"))
    both = sorted([*legs.tolist(), *others.tolist()])
    if both != list(range(NUM_JOINTS)):
        raise where.key("arm_waist_joint2motor_idx").error(
            f"with leg_joint2motor_idx it must list each of the {NUM_JOINTS} joints once")
    vectors = []
    for leg_key, other_key, minimum in (("kps", "arm_waist_kps", 0.0), ("kds", "arm_waist_kds", 0.0),
                                        ("default_angles", "arm_waist_target", None)):
        full = np.zeros(NUM_JOINTS)
        full[legs] = vector(raw[leg_key], len(legs), where.key(leg_key), minimum=minimum)
        full[others] = vector(raw[other_key], len(others), where.key(other_key), minimum=minimum)
        vectors.append(full)
    return vectors[0], vectors[1], vectors[2], legs


def _gait(value: Any, where: ConfigLocation) -> GaitParameters:
    if not isinstance(value, dict):
        raise where.error(f"expected a mapping, got {value!r}")
    check_keys(value, _GAIT_REQUIRED, _GAIT_IGNORED, where)
    stance_ratio = number(value["stance_ratio"], where.key("stance_ratio"), minimum=0.0, strict=True)
    if stance_ratio >= 1.0:
        raise where.key("stance_ratio").error(f"must be < 1, got {stance_ratio!r}")
    return GaitParameters(
        frequency_hz=number(value["frequencies"], where.key("frequencies"), minimum=0.0, strict=True),
        phase_offset=number(value["phase_offset"], where.key("phase_offset")),
        stance_ratio=stance_ratio,
    )


def _policy_path(value: Any, policy_dir: Path, where: ConfigLocation) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise where.error(f"expected a file path, got {value!r}")
    path = Path(value.replace(_ROOT_PLACEHOLDER + "/", "").replace(_ROOT_PLACEHOLDER, "")).expanduser()
    if path.is_absolute():
        return path
    nested = policy_dir / path
    return nested if nested.exists() else policy_dir / path.name
