"""Forward kinematics of one Unitree Dex3-1 hand, built in code with Pinocchio. ROS-free.

The hand's frame is its palm link (``<side>_hand_palm_link``): x along the fingers, y out of the back of the
left hand (into the palm of the right one), z from the middle finger towards the index finger. The joints'
origins and axes are those of Unitree's Dex3-1 description (unitreerobotics/unitree_ros,
robots/g1_description/dex3_1_l.urdf and dex3_1_r.urdf; the same values in its g1_29dof_with_hand_rev_1_0.urdf):
the right hand is the left one mirrored in the palm's x–z plane (y negated; its z joints turn the other way,
hence its mirrored limits). The fingertip points sit ``TIP_M`` along each distal link, short of the link's
mesh end (0.069 m in that description): the middle of the pad that touches in a pinch. Units: m, rad.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin

FINGERS = ("thumb", "index", "middle")
TIP_M = 0.06

# joint: (parent joint or None for the palm, origin in the parent's frame for the left hand (m), axis)
_LEFT_JOINTS: dict[str, tuple[str | None, tuple[float, float, float], str]] = {
    "thumb_0": (None, (0.0255, 0.0, 0.0), "y"),
    "thumb_1": ("thumb_0", (-0.0025, -0.0193, 0.0), "z"),
    "thumb_2": ("thumb_1", (0.0, -0.0458, 0.0), "z"),
    "index_0": (None, (0.0777, 0.0016, 0.0285), "z"),
    "index_1": ("index_0", (0.0458, 0.0, 0.0), "z"),
    "middle_0": (None, (0.0777, 0.0016, -0.0285), "z"),
    "middle_1": ("middle_0", (0.0458, 0.0, 0.0), "z"),
}
_TIPS = {"thumb": ("thumb_2", (0.0, -TIP_M, 0.0)), "index": ("index_1", (TIP_M, 0.0, 0.0)),
         "middle": ("middle_1", (TIP_M, 0.0, 0.0))}
_AXES = {"y": pin.JointModelRY, "z": pin.JointModelRZ}


def _mirrored(xyz: tuple[float, float, float], side: str) -> np.ndarray:
    x, y, z = xyz
    return np.array([x, -y if side == "right" else y, z])


class Dex3Kinematics:
    """One hand's fingertip positions and their Jacobians in the palm frame, for q in the order ``joints``
    (names as config/dex3.yaml's motor_order: ``thumb_0`` …; a joint's parent comes before it)."""

    def __init__(self, side: str, joints: Sequence[str]) -> None:
        if side not in ("left", "right"):
            raise ValueError(f"side must be left or right, got {side!r}")
        if sorted(joints) != sorted(_LEFT_JOINTS):
            raise ValueError(f"a Dex3 hand has the joints {', '.join(_LEFT_JOINTS)}, got {list(joints)}")
        model = pin.Model()
        model.name = f"{side}_dex3"
        ids: dict[str, int] = {}
        for name in joints:
            parent, xyz, axis = _LEFT_JOINTS[name]
            if parent is not None and parent not in ids:
                raise ValueError(f"joint order {list(joints)}: {parent} must come before {name}")
            placement = pin.SE3(np.eye(3), _mirrored(xyz, side))
            ids[name] = model.addJoint(0 if parent is None else ids[parent], _AXES[axis](), placement,
                                       f"{side}_hand_{name}_joint")
            model.appendBodyToJoint(ids[name], pin.Inertia.FromSphere(0.01, 0.01), pin.SE3.Identity())
        self.tip_frames = []
        for finger in FINGERS:
            joint, xyz = _TIPS[finger]
            frame = pin.Frame(f"{side}_hand_{finger}_tip", ids[joint], 0, pin.SE3(np.eye(3), _mirrored(xyz, side)),
                              pin.FrameType.OP_FRAME)
            self.tip_frames.append(model.addFrame(frame))
        self.model = model
        self.data = model.createData()
        self.side = side

    def tips(self, q: np.ndarray) -> np.ndarray:
        """(3, 3): the thumb, index and middle fingertip positions in the palm frame (m)."""
        pin.framesForwardKinematics(self.model, self.data, np.asarray(q, dtype=float))
        return np.array([self.data.oMf[f].translation for f in self.tip_frames])

    def tips_and_jacobians(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The fingertips (3, 3) and their position Jacobians (3, 3, nq) in the palm frame (m, m/rad)."""
        q = np.asarray(q, dtype=float)
        pin.computeJointJacobians(self.model, self.data, q)
        pin.updateFramePlacements(self.model, self.data)
        tips = np.array([self.data.oMf[f].translation for f in self.tip_frames])
        jac = np.array([pin.getFrameJacobian(self.model, self.data, f, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)[:3]
                        for f in self.tip_frames])
        return tips, jac
