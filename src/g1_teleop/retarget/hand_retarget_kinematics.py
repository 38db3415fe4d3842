"""Forward kinematics of one Unitree Dex3-1 hand, built with Pinocchio from the hand's links in config/dex3.yaml
(:class:`g1_teleop.core.dex3_description.HandModel`: the same description the simulated hands are built from).
ROS-free.

The hand's frame is its palm link (``<side>_hand_palm_link``): x along the fingers, y out of the back of the
left hand (into the palm of the right one), z from the middle finger towards the index finger. The fingertip
points sit ``tip_along_distal`` along each distal link, short of the link's end: the middle of the pad that touches
in a pinch. Units: m, rad.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from g1_teleop.core.dex3_description import HandModel

FINGERS = ("thumb", "index", "middle")
_DISTAL = {"thumb": "thumb_2", "index": "index_1", "middle": "middle_1"}  # each finger's distal joint
_AXES = {"x": pin.JointModelRX, "y": pin.JointModelRY, "z": pin.JointModelRZ}


class Dex3Kinematics:
    """One hand's fingertip positions and their Jacobians in the palm frame, for q in the hand's motor order
    (``joints``: ``thumb_0`` …)."""

    def __init__(self, side: str, hand: HandModel) -> None:
        if side not in ("left", "right"):
            raise ValueError(f"side must be left or right, got {side!r}")
        model = pin.Model()
        model.name = f"{side}_dex3"
        ids: dict[str, int] = {}
        for link in hand.links(side):
            ids[link.joint] = model.addJoint(0 if link.parent == "palm" else ids[link.parent], _AXES[link.axis](),
                                             pin.SE3(np.eye(3), link.origin), f"{side}_hand_{link.joint}_joint")
            model.appendBodyToJoint(ids[link.joint], pin.Inertia.FromSphere(0.01, 0.01), pin.SE3.Identity())
        self.joints = tuple(ids)
        self.tip_frames = []
        for finger in FINGERS:
            joint = _DISTAL[finger]
            frame = pin.Frame(f"{side}_hand_{finger}_tip", ids[joint], 0,
                              pin.SE3(np.eye(3), hand.distal_tip(side, joint)), pin.FrameType.OP_FRAME)
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
