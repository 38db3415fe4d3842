"""Gravity feed-forward of the arm joints: the torques that hold the arms still where they are, the rest of the
body locked (RNEA at zero velocity and acceleration, as OpenWBT's arm IK computes its feed-forward: OpenWBT,
deploy/teleop/robot_control/robot_arm_ik.py, G1_29_ArmIK.solve_ik). ROS-free."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from g1_teleop.retarget.arm_chains import ArmChains


class ArmGravity:
    """Gravity torques of the arm joints of a fixed-base model (its world frame the pelvis, gravity along −z)."""

    def __init__(self, chains: ArmChains) -> None:
        self._chains = chains
        self._data = chains.model.createData()

    def torques(self, q: np.ndarray) -> np.ndarray:
        """τ (14,) N·m of the arm joints (q_arm order) holding model configuration ``q`` against gravity."""
        return pin.computeGeneralizedGravity(self._chains.model, self._data, q)[self._chains.arm_idx_v].copy()
