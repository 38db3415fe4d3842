"""The two arms of a fixed-base Pinocchio model: which joints move each end effector, their bounds, and the
model configuration with the rest of the body locked at a measured pose. ROS-free.

Vectors over the arm joints come in two orders. ``q_arm`` follows the body's DDS order (left shoulder_pitch …
wrist_yaw, then right); the solver's x follows the chains (the left arm's joints root to wrist, then the
right arm's). For the G1 the two coincide.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pinocchio as pin

from g1_teleop.core.pinocchio_model import PinJointMap


class ArmChains:
    """The arm chains of ``model`` that move the end-effector frames ``frames`` (left, right).

    model: fixed-base model whose world frame is the pelvis, with 1-DoF joints. joint_names: the body joints
    in DDS order (the order of ``q_body``). An arm's joints are those that move its end-effector frame and not
    the other; model joints that are not in ``joint_names`` (for example hand joints) stay at their neutral
    value. Raises KeyError for body joints the model lacks and ValueError for an unsuitable model.
    """

    def __init__(self, model: pin.Model, joint_names: Sequence[str], frames: tuple[str, str]) -> None:
        self.model = model
        self._data = model.createData()
        self._n_body = len(joint_names)
        multi = [model.names[j] for j in range(1, model.njoints) if model.nqs[j] != 1 or model.nvs[j] != 1]
        if multi:
            raise ValueError(f"arm chains: the model must be fixed-base, with 1-DoF joints only: {multi}")
        self._body_idx_q = PinJointMap.from_model(model, joint_names).idx_q
        dds_position = {model.getJointId(n): i for i, n in enumerate(joint_names)}
        self._q_template = pin.neutral(model)

        absent = [f for f in frames if not model.existFrame(f)]
        if absent:
            raise ValueError(f"arm chains: frames missing from the Pinocchio model: {absent}")
        self.frame_ids = tuple(model.getFrameId(f) for f in frames)
        """Pinocchio frames of the (left, right) end effectors."""
        supports = [set(model.supports[model.frames[f].parentJoint]) - {0} for f in self.frame_ids]
        chains = []
        for frame, own, other in zip(frames, supports, supports[::-1], strict=True):
            chain = own - other
            outside = sorted(model.names[j] for j in chain if j not in dds_position)
            if not chain or outside:
                raise ValueError(
                    f"arm chains: the chain of {frame!r} is empty or has joints not in joint_names: {outside}"
                )
            chains.append(sorted(chain, key=dds_position.__getitem__))
        if len(chains[0]) != len(chains[1]):
            raise ValueError(f"arm chains: the chains differ in length: {len(chains[0])} vs {len(chains[1])}")
        self.joints: tuple[list[int], list[int]] = (chains[0], chains[1])
        """Pinocchio joints of each arm (left, right), root to wrist: the order of x."""
        arm_ids = sorted(chains[0] + chains[1], key=dds_position.__getitem__)
        self.arm_indices = np.array([dds_position[j] for j in arm_ids])
        """Positions of the arm joints in the DDS-ordered body vector, shape (14,)."""
        self.arm_joint_names: tuple[str, ...] = tuple(model.names[j] for j in arm_ids)
        self.arm_idx_q = np.array([model.idx_qs[j] for j in arm_ids])
        """Columns of the model configuration q holding q_arm."""
        self.arm_idx_v = np.array([model.idx_vs[j] for j in arm_ids])
        """Columns of the model velocity holding the arm joints (q_arm order)."""
        self.q_lower = model.lowerPositionLimit[self.arm_idx_q].copy()
        """Lower joint bounds (14,) rad in q_arm order, from the model."""
        self.q_upper = model.upperPositionLimit[self.arm_idx_q].copy()
        """Upper joint bounds (14,) rad in q_arm order, from the model."""
        if not (np.all(np.isfinite(self.q_lower)) and np.all(np.isfinite(self.q_upper))):
            raise ValueError("arm chains: every arm joint needs finite position limits in the model")
        self.columns = np.array([[arm_ids.index(j) for j in chain] for chain in chains])
        """Per arm (left, right): positions of its joints in q_arm, root to wrist, shape (2, 7)."""
        self.chain_idx_v = [_index(model.idx_vs[j] for j in chain) for chain in chains]
        """Per arm (left, right): columns of the model velocity (Jacobian columns) of its joints."""
        self.x_order = self.columns.ravel()
        """Positions in q_arm of the entries of x: q_arm[x_order] is x."""
        self.x_idx_q = self.arm_idx_q[self.x_order]
        """Columns of the model configuration q holding x."""
        self.x_lower = self.q_lower[self.x_order]
        """Lower joint bounds of x (rad)."""
        self.x_upper = self.q_upper[self.x_order]
        """Upper joint bounds of x (rad)."""

    @property
    def size(self) -> int:
        """Number of arm joints (14 on the G1)."""
        return int(self.x_order.size)

    def arm_from_x(self, x: np.ndarray) -> np.ndarray:
        """q_arm (DDS order) of the solver's x (chain order)."""
        q_arm = np.empty(self.size)
        q_arm[self.x_order] = x
        return q_arm

    def full_q(self, q_body: np.ndarray) -> np.ndarray:
        """The model configuration of body joints ``q_body`` (DDS order, rad); other model joints neutral."""
        if q_body.shape != (self._n_body,):
            raise ValueError(f"arm chains: expected {self._n_body} body joint positions, got {q_body.shape}")
        q = self._q_template.copy()
        q[self._body_idx_q] = q_body
        return q

    def with_arms(self, q: np.ndarray, q_arm: np.ndarray) -> np.ndarray:
        """A copy of the model configuration ``q`` with its arm joints at ``q_arm`` (DDS order, rad)."""
        q = q.copy()
        q[self.arm_idx_q] = q_arm
        return q

    def end_effector_poses(self, q_body: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """pelvis_T_left_ee, pelvis_T_right_ee (4x4, m) for body joints ``q_body`` (DDS order, rad)."""
        q = self.full_q(np.asarray(q_body, dtype=float))
        pin.framesForwardKinematics(self.model, self._data, q)
        left, right = (self._data.oMf[f].homogeneous.copy() for f in self.frame_ids)
        return left, right


def _index(positions: Iterable[int]) -> slice | np.ndarray:
    """A slice when the positions are consecutive (cheaper to index with), else an index array."""
    positions = list(positions)
    if positions == list(range(positions[0], positions[0] + len(positions))):
        return slice(positions[0], positions[0] + len(positions))
    return np.array(positions)
