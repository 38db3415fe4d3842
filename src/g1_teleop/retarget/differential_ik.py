"""Differential IK of the two arms: the joint motion that moves each end effector with a twist, by damped least
squares per arm (Nakamura and Hanafusa 1986; Wampler 1986), for the gamepad mode. ROS-free."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from g1_teleop.retarget.arm_chains import ArmChains


class DifferentialArmIK:
    """One integration step of the arms' joint velocities for end-effector twists (pelvis axes)."""

    def __init__(self, chains: ArmChains) -> None:
        self._chains = chains
        self._data = chains.model.createData()

    def step(
        self,
        q_body: np.ndarray,
        left_twist: np.ndarray,
        right_twist: np.ndarray,
        dt: float,
        damping: float = 0.05,
        rotation_weight: float = 1.0,
        max_joint_speed: float = np.inf,
    ) -> np.ndarray:
        """Arm joints (14,) after moving each end effector with a twist for ``dt`` seconds.

        Damped least squares per arm: q̇ = J̃ᵀ(J̃J̃ᵀ + λ²I)⁻¹W ẋ with ẋ = (v [m/s], ω [rad/s]) of left_ee /
        right_ee in pelvis axes, J̃ = W J, W = diag(1, 1, 1, w, w, w) (w = ``rotation_weight``: below 1 the
        orientation yields first where the arm cannot do both) and λ = ``damping``: near singularities and
        at the edge of the workspace the hand lags instead of the joints whipping. q̇ is scaled down as a
        whole to at most ``max_joint_speed`` rad/s. q_body: body joints (DDS order, rad) the step starts
        from. The result stays inside the joint bounds.
        """
        chains = self._chains
        q = chains.full_q(np.asarray(q_body, dtype=float))
        pin.computeJointJacobians(chains.model, self._data, q)
        weights = np.array([1.0, 1.0, 1.0] + [rotation_weight] * 3)
        q_arm = np.asarray(q_body, dtype=float)[chains.arm_indices].copy()
        for arm, (frame_id, twist) in enumerate(zip(chains.frame_ids, (left_twist, right_twist), strict=True)):
            twist = np.asarray(twist, dtype=float)
            if twist.shape != (6,) or not np.all(np.isfinite(twist)):
                raise ValueError(f"differential IK: twists must be 6 finite values, got {twist}")
            pin.updateFramePlacement(chains.model, self._data, frame_id)
            J = pin.getFrameJacobian(chains.model, self._data, frame_id, pin.LOCAL_WORLD_ALIGNED)
            J = weights[:, None] * J[:, chains.chain_idx_v[arm]]
            q_dot = J.T @ np.linalg.solve(J @ J.T + damping**2 * np.eye(6), weights * twist)
            q_dot *= min(1.0, max_joint_speed / max(float(np.abs(q_dot).max()), 1e-12))
            q_arm[chains.columns[arm]] += q_dot * dt
        return np.clip(q_arm, chains.q_lower, chains.q_upper)
