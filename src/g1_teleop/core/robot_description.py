"""G1 robot description: joint order, limits, gains, and the MuJoCo and Pinocchio models built from it.

``config/g1_29dof.yaml`` is the one source of joint order (DDS motor order) and robot parameters. Position
and torque limits are read from the model file: our ``urdf/g1_29dof.urdf`` by default, or a user-given MJCF
or URDF with the same joint names (for example Unitree's official ``g1_29dof.xml``).

Units: rad, rad/s, m, N·m. Quaternions are (w, x, y, z).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import mujoco
import numpy as np
import pinocchio as pin
import yaml

from g1_teleop.core.config_location import ConfigLocation, check_keys, number, string, vector
from g1_teleop.core.model_files import ModelFileError, mjspec_from_file
from g1_teleop.core.paths import config_path, urdf_path
from g1_teleop.core.strict_yaml import load_yaml

NUM_JOINTS = 29
LEG_INDICES = range(0, 12)
WAIST_INDICES = range(12, 15)
ARM_INDICES = range(15, 29)
LEFT_ARM_INDICES = range(15, 22)
RIGHT_ARM_INDICES = range(22, 29)

DEFAULT_CONFIG = "g1_29dof.yaml"
FREE_JOINT_NAME = "floating_base_joint"  # as in the official MJCF
FRAME_ROLES = ("imu", "left_eye", "right_eye", "left_ee", "right_ee")
DEFAULT_KEYFRAME = "default"

_TOP_KEYS = ("model", "base_link", "spawn_height", "joints", "joint_groups", "gain_profiles", "gain_limits",
             "mujoco_joint_dynamics", "frames", "self_collision")
_JOINT_KEYS = ("name", "velocity_limit", "default_q")
_DYNAMICS_KEYS = ("armature", "damping", "frictionloss")


class RobotConfigError(ValueError):
    """The robot configuration or model file is invalid; the message names the file and the key."""


@dataclass(frozen=True, eq=False)
class FixedFrame:
    """A frame fixed to a link: ``position`` (m) and ``quat_wxyz`` (unit) of the frame in the parent link."""

    name: str
    parent: str
    position: np.ndarray
    quat_wxyz: np.ndarray

    @property
    def parent_T_frame(self) -> np.ndarray:
        """4x4 homogeneous transform of the frame in its parent link."""
        parent_T_frame = np.eye(4)
        parent_T_frame[:3, :3] = pin.Quaternion(*self.quat_wxyz).matrix()
        parent_T_frame[:3, 3] = self.position
        return parent_T_frame


@dataclass(frozen=True, eq=False)
class SelfCollision:
    """Links grouped by name; geoms of two groups listed in ``pairs`` may touch each other."""

    groups: Mapping[str, tuple[str, ...]]
    pairs: tuple[tuple[str, str], ...]


@dataclass(frozen=True, eq=False)
class Robot:
    """The G1 body: 29 joints in DDS order and their parameters (arrays have shape (29,), read-only)."""

    joint_names: tuple[str, ...]
    q_lower: np.ndarray  # rad, from the model file
    q_upper: np.ndarray  # rad, from the model file
    effort_limit: np.ndarray  # N·m, from the model file
    velocity_limit: np.ndarray  # rad/s
    default_q: np.ndarray  # rad, standing pose
    armature: np.ndarray  # kg·m², MuJoCo
    damping: np.ndarray  # N·m·s/rad, MuJoCo
    frictionloss: np.ndarray  # N·m, MuJoCo
    joint_groups: Mapping[str, np.ndarray]  # name -> indices in DDS order (read-only)
    gain_profiles: Mapping[str, tuple[np.ndarray, np.ndarray]]  # name -> (kp, kd)
    gain_limits: tuple[np.ndarray, np.ndarray]  # largest (kp, kd) a controller may ask for
    frames: Mapping[str, FixedFrame]  # by role, see FRAME_ROLES
    self_collision: SelfCollision
    base_link: str
    spawn_height: float  # m, pelvis height with the feet on the floor at default_q
    model_path: Path
    config_path: Path

    @property
    def model_is_mjcf(self) -> bool:
        return self.model_path.suffix.lower() == ".xml"

    def group(self, name: str) -> np.ndarray:
        """Indices (DDS order) of the joints of a named group of ``joint_groups``, e.g. ``robot.group("arms")``."""
        try:
            return self.joint_groups[name]
        except KeyError:
            raise KeyError(f"unknown joint group {name!r}; {self.config_path} defines {sorted(self.joint_groups)}"
                           ) from None

    def group_names(self, name: str) -> tuple[str, ...]:
        """Joint names of a named group, in the group's order."""
        return tuple(self.joint_names[i] for i in self.group(name))

    def gains(self, profile: str) -> tuple[np.ndarray, np.ndarray]:
        """(kp in N·m/rad, kd in N·m·s/rad), each of shape (29,), of a named gain profile."""
        try:
            return self.gain_profiles[profile]
        except KeyError:
            raise KeyError(
                f"unknown gain profile {profile!r}; {self.config_path} defines {sorted(self.gain_profiles)}"
            ) from None


# ---------------------------------------------------------------------------------------------------
# Loading and validation


def load_robot(config: Path | None = None, model: Path | None = None) -> Robot:
    """Read and validate the robot configuration, and the limits of its model file.

    ``config`` defaults to ``config/g1_29dof.yaml``; ``model`` (a MJCF ``.xml`` or a ``.urdf``) replaces the
    configuration's model file.
    """
    config_file = Path(config) if config is not None else config_path(DEFAULT_CONFIG)
    try:
        raw = load_yaml(config_file.read_text(), str(config_file))
    except (OSError, yaml.YAMLError) as exc:
        raise RobotConfigError(f"{config_file}: cannot read: {exc}") from exc
    where = ConfigLocation(str(config_file), RobotConfigError)
    if not isinstance(raw, dict):
        raise RobotConfigError(f"{config_file}: expected a mapping at the top level")
    check_keys(raw, _TOP_KEYS, _TOP_KEYS, where)

    joint_names, velocity_limit, default_q = _parse_joints(raw["joints"], where.key("joints"))
    gain_profiles = _parse_gain_profiles(raw["gain_profiles"], joint_names, where.key("gain_profiles"))
    gain_limits = _parse_gain_profiles({"gain_limits": raw["gain_limits"]}, joint_names, where)["gain_limits"]
    over = [f"{profile} ({name})" for profile, gains in gain_profiles.items()
            for name, values, limit in zip(("kp", "kd"), gains, gain_limits, strict=True) if np.any(values > limit)]
    if over:
        raise where.key("gain_profiles").error(f"gains above gain_limits: {', '.join(over)}")
    dynamics = _parse_dynamics(raw["mujoco_joint_dynamics"], joint_names, where.key("mujoco_joint_dynamics"))
    frames = _parse_frames(raw["frames"], where.key("frames"))
    self_collision = _parse_self_collision(raw["self_collision"], where.key("self_collision"))
    base_link = string(raw["base_link"], where.key("base_link"))
    spawn_height = number(raw["spawn_height"], where.key("spawn_height"), minimum=0.0, strict=True)

    configured_model = Path(string(raw["model"], where.key("model")))
    if model is not None:
        model_file = Path(model)
    elif configured_model.is_absolute():
        model_file = configured_model
    else:
        model_file = urdf_path(*configured_model.parts)
    if model_file.suffix.lower() not in (".xml", ".urdf"):
        raise where.key("model").error(f"{model_file} is not a MJCF (.xml) or URDF (.urdf) file")
    if not model_file.is_file():
        raise where.key("model").error(f"{model_file}: model file not found")
    try:
        q_lower, q_upper, effort_limit, bodies = _read_model(model_file, joint_names)
    except RobotConfigError as exc:
        raise where.key("model").error(str(exc)) from exc
    joint_groups = _parse_joint_groups(raw["joint_groups"], joint_names, where.key("joint_groups"))
    outside = [
        f"{n} ({q:g} not in [{lo:g}, {hi:g}])"
        for n, q, lo, hi in zip(joint_names, default_q, q_lower, q_upper, strict=True)
        if not lo <= q <= hi
    ]
    if outside:
        raise RobotConfigError(f"{where.key('joints')}: default_q outside the limits of {model_file}: "
                               + ", ".join(outside))
    needed = {base_link: "base_link"} | {f.parent: f"frames.{role}.parent" for role, f in frames.items()}
    if model_file.suffix.lower() == ".urdf":  # self-collision groups apply to the URDF path only
        for group, links in self_collision.groups.items():
            needed |= {link: f"self_collision.groups.{group}" for link in links}
    missing = sorted(f"{link} ({key})" for link, key in needed.items() if link not in bodies)
    if missing:
        raise RobotConfigError(f"{config_file}: links not in {model_file}: " + ", ".join(missing))

    return Robot(
        joint_names=joint_names,
        q_lower=_frozen(q_lower),
        q_upper=_frozen(q_upper),
        effort_limit=_frozen(effort_limit),
        velocity_limit=_frozen(velocity_limit),
        default_q=_frozen(default_q),
        armature=dynamics["armature"],
        damping=dynamics["damping"],
        frictionloss=dynamics["frictionloss"],
        joint_groups=MappingProxyType(joint_groups),
        gain_profiles=MappingProxyType(gain_profiles),
        gain_limits=gain_limits,
        frames=MappingProxyType(frames),
        self_collision=self_collision,
        base_link=base_link,
        spawn_height=spawn_height,
        model_path=model_file.resolve(),
        config_path=config_file.resolve(),
    )


def _frozen(values: Any) -> np.ndarray:
    array = np.array(values, dtype=float)
    array.flags.writeable = False
    return array


def _parse_joints(value: Any, where: ConfigLocation) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    if not isinstance(value, list) or len(value) != NUM_JOINTS:
        count = len(value) if isinstance(value, list) else type(value).__name__
        raise where.error(f"expected a list of {NUM_JOINTS} joints in DDS order, got {count}")
    names: list[str] = []
    velocity: list[float] = []
    default: list[float] = []
    for i, entry in enumerate(value):
        at = where.key(i)
        check_keys(entry, _JOINT_KEYS, _JOINT_KEYS, at)
        name = string(entry["name"], at.key("name"))
        if name in names:
            raise at.key("name").error(f"duplicate joint {name!r} (also at index {names.index(name)})")
        names.append(name)
        velocity.append(number(entry["velocity_limit"], at.key("velocity_limit"), minimum=0.0, strict=True))
        default.append(number(entry["default_q"], at.key("default_q")))
    return tuple(names), np.array(velocity), np.array(default)


def _parse_joint_groups(value: Any, joint_names: Sequence[str], where: ConfigLocation) -> dict[str, np.ndarray]:
    """Each group's joint indices; an entry names a joint or another group (expanded in place)."""
    if not isinstance(value, dict) or not value:
        raise where.error("expected a non-empty mapping of group name -> list of joint or group names")
    groups: dict[str, np.ndarray] = {}

    def resolve(name: str, chain: tuple[str, ...]) -> np.ndarray:
        if name in groups:
            return groups[name]
        at = where.key(name)
        entries = value[name]
        if not isinstance(entries, list) or not entries:
            raise at.error(f"expected a non-empty list of joint or group names, got {entries!r}")
        indices: list[int] = []
        for i, entry in enumerate(entries):
            entry = string(entry, at.key(i))
            if entry in chain:
                raise at.key(i).error(f"group {entry!r} contains itself")
            if entry in value:
                indices.extend(int(j) for j in resolve(entry, (*chain, entry)))
            elif entry in joint_names:
                indices.append(joint_names.index(entry))
            else:
                raise at.key(i).error(f"{entry!r} is neither a joint nor a group")
        if len(set(indices)) != len(indices):
            raise at.error("a joint appears twice")
        groups[name] = frozen_indices(indices)
        return groups[name]

    for name in value:
        resolve(str(name), (str(name),))
    return groups


def _per_joint(value: Any, joint_names: Sequence[str], where: ConfigLocation) -> np.ndarray:
    """A non-negative number for every joint, or a list in joint order."""
    if isinstance(value, list):
        values = vector(value, len(joint_names), where)
        negative = [joint_names[int(i)] for i in np.flatnonzero(values < 0)]
        if negative:
            raise where.error(f"must be >= 0, negative for {', '.join(negative)}")
        return _frozen(values)
    return _frozen(np.full(len(joint_names), number(value, where, minimum=0.0)))


def _parse_gain_profiles(
    value: Any, joint_names: Sequence[str], where: ConfigLocation
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    if not isinstance(value, dict) or not value:
        raise where.error("expected a non-empty mapping of profile name -> {kp, kd}")
    profiles = {}
    for name, entry in value.items():
        at = where.key(str(name))
        check_keys(entry, ("kp", "kd"), ("kp", "kd"), at)
        profiles[str(name)] = (_per_joint(entry["kp"], joint_names, at.key("kp")),
                               _per_joint(entry["kd"], joint_names, at.key("kd")))
    return profiles


def _parse_dynamics(value: Any, joint_names: Sequence[str], where: ConfigLocation) -> dict[str, np.ndarray]:
    check_keys(value, _DYNAMICS_KEYS, _DYNAMICS_KEYS, where)
    dynamics = {}
    for key in _DYNAMICS_KEYS:
        at = where.key(key)
        entry = value[key]
        if not isinstance(entry, dict):
            dynamics[key] = _frozen(np.full(len(joint_names), number(entry, at, minimum=0.0)))
            continue
        if "default" not in entry:
            raise at.error("a per-joint mapping needs a 'default' value")
        unknown = [str(k) for k in entry if k != "default" and k not in joint_names]
        if unknown:
            raise at.error(f"unknown joint(s) {', '.join(unknown)}")
        default = number(entry["default"], at.key("default"), minimum=0.0)
        dynamics[key] = _frozen([
            number(entry[n], at.key(n), minimum=0.0) if n in entry else default for n in joint_names
        ])
    return dynamics


def _parse_frames(value: Any, where: ConfigLocation) -> dict[str, FixedFrame]:
    check_keys(value, FRAME_ROLES, FRAME_ROLES, where)
    frames = {}
    keys = ("name", "parent", "position", "quat_wxyz")
    for role in FRAME_ROLES:
        at = where.key(role)
        entry = value[role]
        check_keys(entry, keys, keys, at)
        quat = vector(entry["quat_wxyz"], 4, at.key("quat_wxyz"))
        if abs(np.linalg.norm(quat) - 1.0) > 1e-6:
            raise at.key("quat_wxyz").error(f"not a unit quaternion (norm {np.linalg.norm(quat):.9g})")
        frames[role] = FixedFrame(
            name=string(entry["name"], at.key("name")),
            parent=string(entry["parent"], at.key("parent")),
            position=_frozen(vector(entry["position"], 3, at.key("position"))),
            quat_wxyz=_frozen(quat / np.linalg.norm(quat)),
        )
    names = [f.name for f in frames.values()]
    if len(set(names)) != len(names):
        raise where.error(f"frame names must be distinct, got {names}")
    return frames


def _parse_self_collision(value: Any, where: ConfigLocation) -> SelfCollision:
    check_keys(value, ("groups", "pairs"), ("groups", "pairs"), where)
    groups_at = where.key("groups")
    if not isinstance(value["groups"], dict):
        raise groups_at.error("expected a mapping of group name -> list of links")
    if len(value["groups"]) > 30:  # one contype bit per group, bit 0 is the floor's
        raise groups_at.error(f"at most 30 groups, got {len(value['groups'])}")
    groups: dict[str, tuple[str, ...]] = {}
    owner: dict[str, str] = {}
    for group, links in value["groups"].items():
        at = groups_at.key(str(group))
        if not isinstance(links, list) or not links:
            raise at.error(f"expected a non-empty list of link names, got {links!r}")
        for i, link in enumerate(links):
            link = string(link, at.key(i))
            if link in owner:
                raise at.key(i).error(f"link {link!r} is already in group {owner[link]!r}")
            owner[link] = str(group)
        groups[str(group)] = tuple(links)
    pairs_at = where.key("pairs")
    if not isinstance(value["pairs"], list):
        raise pairs_at.error("expected a list of [group, group] pairs")
    pairs = []
    for i, pair in enumerate(value["pairs"]):
        if not isinstance(pair, list) or len(pair) != 2 or any(g not in groups for g in pair):
            raise pairs_at.key(i).error(f"expected two group names out of {sorted(groups)}, got {pair!r}")
        pairs.append((pair[0], pair[1]))
    return SelfCollision(groups=MappingProxyType(groups), pairs=tuple(pairs))


def _read_model(
    path: Path, joint_names: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, set[str]]:
    """Position limits, torque limits (DDS order) and body/link names of a MJCF or URDF file."""
    try:
        spec = mjspec_from_file(path)
    except ModelFileError as exc:
        raise RobotConfigError(str(exc)) from exc
    joints = {j.name: j for j in spec.joints}
    missing = [n for n in joint_names if n not in joints]
    if missing:
        raise RobotConfigError(f"{path}: {len(missing)} of the {len(joint_names)} G1 joints are missing from the model "
                               f"({', '.join(missing[:4])}{' …' if len(missing) > 4 else ''}): is it a 29-DoF G1 "
                               f"model (MJCF or URDF) with Unitree's joint names?")
    unit = math.pi / 180.0 if spec.compiler.degree else 1.0
    lower, upper, effort, problems = [], [], [], []
    for name in joint_names:
        joint = joints[name]
        lo, hi = (float(x) * unit for x in joint.range)
        if joint.limited == mujoco.mjtLimited.mjLIMITED_FALSE or not lo < hi:
            problems.append(f"{name} has no position range")
        frc = float(joint.actfrcrange[1])
        if joint.actfrclimited == mujoco.mjtLimited.mjLIMITED_FALSE or frc <= 0.0:
            problems.append(f"{name} has no torque limit (MJCF actuatorfrcrange, URDF <limit effort>)")
        lower.append(lo)
        upper.append(hi)
        effort.append(frc)
    if problems:
        raise RobotConfigError(f"{path}: " + "; ".join(problems))
    return np.array(lower), np.array(upper), np.array(effort), {b.name for b in spec.bodies}


def frozen_indices(values: Any) -> np.ndarray:
    """A read-only integer index array."""
    array = np.array(values, dtype=np.intp)
    array.flags.writeable = False
    return array
