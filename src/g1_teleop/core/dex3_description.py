"""Unitree Dex3-1 hands as config/dex3.yaml describes them: the motor order, each side's joint limits, the gains
and timeouts of the hand loop, and the hand's links (origins, axes, inertials) for the simulated hands and the
hand retargeting's kinematics. ROS-free.

The file gives the LEFT hand's links; :meth:`HandModel.link` gives either side's (the right hand is the left one
mirrored in the palm's x–z plane: y of every position negated, the joint axes unchanged). Units: m, rad, kg,
kg·m², N·m, rad/s, s. Vectors in HandCmd motor order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from g1_teleop.core.config_location import ConfigLocation, check_keys, number, string, vector
from g1_teleop.core.limits import JointLimits
from g1_teleop.core.paths import config_path
from g1_teleop.core.settings import setting
from g1_teleop.core.strict_yaml import load_yaml

SIDES = ("left", "right")
NUM_HAND_MOTORS = 7
RATE_HZ = 100.0  # HandCmd/HandState per hand per second (Unitree's Dex3 example, unitree_sdk2 g1_dex3_example)
_JOINT_KEYS = ("left", "right", "effort", "velocity")
_AXES = ("x", "y", "z")
_MIRROR = np.array([1.0, -1.0, 1.0])  # the left hand's positions → the right hand's
FINGER_RADIUS_M = 0.008  # the finger links are drawn as capsules (MuJoCo) or cylinders (URDF) of this radius
PALM_BOX_CENTER = np.array([0.035, 0.0, 0.0])  # the box drawn for the palm, in the palm link's frame (m)
PALM_BOX_HALF_SIZE = np.array([0.035, 0.012, 0.045])


class Dex3ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Inertial:
    """A link's mass (kg), centre of mass (m, link frame) and principal moments (kg·m²) about axes turned by
    ``quat`` (w, x, y, z) from the link frame."""

    mass: float
    com: np.ndarray
    moments: np.ndarray
    quat: np.ndarray

    def mirrored(self) -> Inertial:
        """The same body mirrored in the x–z plane (y negated): its principal axes reflect too, which for the
        rotation R means S·R·S with S = diag(1, −1, 1), i.e. the quaternion (w, −x, y, −z)."""
        w, x, y, z = self.quat
        return Inertial(self.mass, self.com * _MIRROR, self.moments, np.array([w, -x, y, -z]))


@dataclass(frozen=True)
class HandLink:
    """One finger link and the joint that moves it: its parent (``"palm"`` or a joint name), the joint's origin
    in the parent's frame (m; the link frame is parallel to it at q = 0), its axis (``"x"``, ``"y"`` or ``"z"``)
    and the link's inertial."""

    joint: str
    parent: str
    origin: np.ndarray
    axis: str
    inertial: Inertial


@dataclass(frozen=True)
class HandModel:
    """The hand's links (left hand as given; :meth:`links` mirrors them for the right), the palm's origin in the
    wrist yaw link, the wrist yaw link's inertial with the palm, and where the fingertip points sit on the distal
    links (m)."""

    palm_in_wrist: np.ndarray
    wrist_with_hand: Inertial
    tip_along_distal: float
    left_links: tuple[HandLink, ...]  # a parent before its children

    def links(self, side: str) -> tuple[HandLink, ...]:
        if side == "left":
            return self.left_links
        return tuple(HandLink(link.joint, link.parent, link.origin * _MIRROR, link.axis, link.inertial.mirrored())
                     for link in self.left_links)

    def palm_origin(self, side: str) -> np.ndarray:
        """The palm link's origin in ``<side>_wrist_yaw_link`` (m)."""
        return self.palm_in_wrist * (_MIRROR if side == "right" else 1.0)

    def wrist_inertial(self, side: str) -> Inertial:
        return self.wrist_with_hand.mirrored() if side == "right" else self.wrist_with_hand

    def distal_tip(self, side: str, joint: str) -> np.ndarray:
        """The fingertip point on the distal link of ``joint`` in that link's frame (m): ``tip_along_distal`` along
        the link, −y for the left thumb (+y for the right one), x for the other fingers."""
        if joint.startswith("thumb"):
            return np.array([0.0, self.tip_along_distal if side == "right" else -self.tip_along_distal, 0.0])
        return np.array([self.tip_along_distal, 0.0, 0.0])

    def drawn_segment_end(self, side: str, link: HandLink) -> np.ndarray:
        """Where the segment drawn for ``link`` (from its origin) ends in its frame (m): at its child's origin, or
        at the fingertip point of a distal link."""
        children = [other.origin for other in self.links(side) if other.parent == link.joint]
        return children[0] if children else self.distal_tip(side, link.joint)


@dataclass(frozen=True)
class Dex3:
    """Both hands: the motor order, per-side joint limits, gains, the bridge's timeouts and the links."""

    motor_order: tuple[str, ...]  # HandCmd.motor_cmd index → joint ("thumb_0", …)
    limits: dict[str, JointLimits]  # by side
    kp: float
    kd: float
    damping_kd: float
    slew_velocity_scale: float
    command_timeout_s: float
    state_timeout_s: float
    model: HandModel

    def joint_names(self, side: str) -> tuple[str, ...]:
        """ROS joint names of one hand, in motor order (``left_hand_thumb_0_joint`` …)."""
        return tuple(f"{side}_hand_{joint}_joint" for joint in self.motor_order)

    def both_joint_names(self) -> tuple[str, ...]:
        """Both hands' 14 joints, the left hand's then the right hand's, each in motor order."""
        return tuple(name for side in SIDES for name in self.joint_names(side))


def dex3_setting() -> Any:
    """The ``dex3`` setting of a node whose robot model carries the hands' weight (retarget and body_retarget: the
    arms' gravity feed-forward; policy: the built-in controller's balance)."""
    return setting(False, "Dex3-1 hands on the wrists (config/dex3.yaml): the robot model carries their mass (0.78 "
                   "kg each, against the 0.25 kg of the wrist with its rubber hand)")


def load_dex3(path: Path | None = None) -> Dex3:
    """Read and validate ``config/dex3.yaml`` (or ``path``)."""
    file = Path(path) if path is not None else config_path("dex3.yaml")
    try:
        raw = load_yaml(file.read_text(), str(file))
    except (OSError, yaml.YAMLError) as exc:
        raise Dex3ConfigError(f"{file}: cannot read: {exc}") from exc
    where = ConfigLocation(str(file), Dex3ConfigError)
    check_keys(raw, ("motor_order", "joints", "gains", "damping_kd", "slew_velocity_scale", "command_timeout_s",
                     "state_timeout_s", "hand_model"), (), where)
    order = raw["motor_order"]
    if not isinstance(order, list) or len(order) != NUM_HAND_MOTORS or len(set(order)) != NUM_HAND_MOTORS:
        raise where.key("motor_order").error(f"expected {NUM_HAND_MOTORS} distinct joint names, got {order!r}")
    order = tuple(string(name, where.key("motor_order").key(i)) for i, name in enumerate(order))
    joints = raw["joints"]
    check_keys(joints, order, (), where.key("joints"))
    ranges = {side: np.zeros((NUM_HAND_MOTORS, 2)) for side in SIDES}
    effort, velocity = np.zeros(NUM_HAND_MOTORS), np.zeros(NUM_HAND_MOTORS)
    for i, name in enumerate(order):
        at = where.key("joints").key(name)
        check_keys(joints[name], _JOINT_KEYS, (), at)
        for side in SIDES:
            ranges[side][i] = vector(joints[name][side], 2, at.key(side))
            if not ranges[side][i, 0] <= 0.0 <= ranges[side][i, 1]:
                raise at.key(side).error(f"must contain 0 (the open hand), got {ranges[side][i].tolist()}")
        effort[i] = number(joints[name]["effort"], at.key("effort"), minimum=0.0, strict=True)
        velocity[i] = number(joints[name]["velocity"], at.key("velocity"), minimum=0.0, strict=True)
    gains = raw["gains"]
    check_keys(gains, ("kp", "kd"), (), where.key("gains"))
    positive = {key: number(raw[key], where.key(key), minimum=0.0, strict=True)
                for key in ("slew_velocity_scale", "command_timeout_s", "state_timeout_s")}
    return Dex3(
        motor_order=order,
        limits={side: JointLimits(ranges[side][:, 0], ranges[side][:, 1], velocity, effort) for side in SIDES},
        kp=number(gains["kp"], where.key("gains").key("kp"), minimum=0.0),
        kd=number(gains["kd"], where.key("gains").key("kd"), minimum=0.0),
        damping_kd=number(raw["damping_kd"], where.key("damping_kd"), minimum=0.0),
        model=_hand_model(raw["hand_model"], order, where.key("hand_model")),
        **positive,
    )


def _inertial(raw: dict, where: ConfigLocation) -> Inertial:
    quat = vector(raw["inertia_quat"], 4, where.key("inertia_quat"))
    if not abs(np.linalg.norm(quat) - 1.0) < 1e-4:
        raise where.key("inertia_quat").error(f"must be a unit quaternion (w, x, y, z), got {quat.tolist()}")
    return Inertial(number(raw["mass"], where.key("mass"), minimum=0.0, strict=True), vector(raw["com"], 3,
                    where.key("com")), vector(raw["inertia"], 3, where.key("inertia"), minimum=0.0),
                    quat / np.linalg.norm(quat))


def _hand_model(raw: dict, order: tuple[str, ...], where: ConfigLocation) -> HandModel:
    check_keys(raw, ("palm_in_wrist", "wrist_with_hand", "tip_along_distal", "links"), (), where)
    inertial_keys = ("mass", "com", "inertia", "inertia_quat")
    check_keys(raw["wrist_with_hand"], inertial_keys, (), where.key("wrist_with_hand"))
    check_keys(raw["links"], order, (), where.key("links"))
    links: list[HandLink] = []
    for name in order:
        at = where.key("links").key(name)
        entry = raw["links"][name]
        check_keys(entry, ("parent", "origin", "axis", *inertial_keys), (), at)
        parent = string(entry["parent"], at.key("parent"))
        if parent != "palm" and parent not in [link.joint for link in links]:
            raise at.key("parent").error(f"must be palm or a joint listed before {name} in motor_order, got "
                                         f"{parent!r}")
        if entry["axis"] not in _AXES:
            raise at.key("axis").error(f"must be one of {', '.join(_AXES)}, got {entry['axis']!r}")
        links.append(HandLink(name, parent, vector(entry["origin"], 3, at.key("origin")), entry["axis"],
                              _inertial(entry, at)))
    return HandModel(vector(raw["palm_in_wrist"], 3, where.key("palm_in_wrist")),
                     _inertial(raw["wrist_with_hand"], where.key("wrist_with_hand")),
                     number(raw["tip_along_distal"], where.key("tip_along_distal"), minimum=0.0, strict=True),
                     tuple(links))
