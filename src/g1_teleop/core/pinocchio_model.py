"""The Pinocchio model of the robot, built from its description (fixed or floating base, with the configured
frames), and the map from DDS joint order to its configuration indices. ROS-free."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from g1_teleop.core.dex3_description import Dex3
from g1_teleop.core.dex3_urdf import HandsOnUrdfError, urdf_with_dex3_hands
from g1_teleop.core.model_files import flattened_mjcf
from g1_teleop.core.robot_description import FREE_JOINT_NAME, Robot, frozen_indices


def build_pinocchio_model(robot: Robot, floating_base: bool = False, hands: Dex3 | None = None) -> pin.Model:
    """Pinocchio model of the robot (fixed base: base link at the world origin; or a free flyer).

    A MJCF's own free joint is kept for ``floating_base`` and locked at the origin otherwise. The fixed
    frames of the configuration are added (as operational frames) where the model lacks them. With ``hands``, a
    Dex3-1 hand on each wrist (``core.dex3_urdf``), its 7 finger joints after the body's (held at 0, the open hand,
    by whoever does not set them).
    """
    path = str(robot.model_path)
    if hands is not None:
        if robot.model_is_mjcf:
            raise HandsOnUrdfError(f"Dex3 hands go on a URDF body; {path} is an MJCF (give a URDF model, or Unitree's "
                                   "g1_body29_hand14 files without dex3)")
        urdf = urdf_with_dex3_hands(robot.model_path.read_text(), hands)
        model = (pin.buildModelFromXML(urdf, pin.JointModelFreeFlyer(), FREE_JOINT_NAME) if floating_base
                 else pin.buildModelFromXML(urdf))
    elif not robot.model_is_mjcf:
        model = (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer(), FREE_JOINT_NAME) if floating_base
                 else pin.buildModelFromUrdf(path))
    else:
        path = str(flattened_mjcf(robot.model_path))  # includes expanded, one worldbody (model_files)
        model = pin.buildModelFromMJCF(path)
        has_free_joint = model.njoints > 1 and model.joints[1].shortname() == "JointModelFreeFlyer"
        if has_free_joint and not floating_base:
            model = pin.buildReducedModel(model, [1], pin.neutral(model))
        elif floating_base and not has_free_joint:
            model = pin.buildModelFromMJCFAndRootJoint(path, pin.JointModelFreeFlyer(), FREE_JOINT_NAME)
    for frame in robot.frames.values():
        if model.existFrame(frame.name):
            continue
        parent_id = model.getFrameId(frame.parent, pin.FrameType.BODY)
        parent = model.frames[parent_id]
        parent_T_frame = pin.SE3(frame.parent_T_frame)
        model.addFrame(pin.Frame(frame.name, parent.parentJoint, parent_id, parent.placement * parent_T_frame,
                                 pin.FrameType.OP_FRAME))
    return model


@dataclass(frozen=True, eq=False)
class PinJointMap:
    """DDS joint index -> Pinocchio configuration / velocity indices ``idx_q``, ``idx_v`` (29,)."""

    idx_q: np.ndarray
    idx_v: np.ndarray

    @classmethod
    def from_model(cls, model: pin.Model, joint_names: Sequence[str]) -> PinJointMap:
        """Look the joints up by name; raise KeyError naming joints the model lacks."""
        missing = [n for n in joint_names if not model.existJointName(n)]
        if missing:
            raise KeyError(f"model lacks joints: {', '.join(missing)}")
        joint_ids = [model.getJointId(n) for n in joint_names]
        not_1dof = [
            n for n, j in zip(joint_names, joint_ids, strict=True) if model.nqs[j] != 1 or model.nvs[j] != 1
        ]
        if not_1dof:
            raise KeyError(f"not one-degree-of-freedom joints: {', '.join(not_1dof)}")
        return cls(idx_q=frozen_indices([model.idx_qs[j] for j in joint_ids]),
                   idx_v=frozen_indices([model.idx_vs[j] for j in joint_ids]))
