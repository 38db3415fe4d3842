"""Balance on both feet: joint torques that hold the robot against gravity with its feet on the ground
and push its centre of mass back over the support polygon. ROS-free.

The robot is a floating base with both soles in contact. Its joints must carry the generalized load
L = Σᵢ Jᵢᵀ mᵢ (g ẑ + a) (a "virtual gravity" g ẑ + a on every body): the contact wrenches wₖ of the two
soles take the base's share, L_base = Σₖ Jₖ,baseᵀ wₖ, and the joints the rest, τ = L_joints − Σₖ Jₖ,jointsᵀ wₖ.
With a = 0 this is the gravity feed-forward of the feet-on-the-ground posture; with a = the desired
horizontal acceleration of the centre of mass, the floor pushes the body by m·a, which is how the
controller moves the centre of mass back over the feet:

    a = −kp (c − s) − kd (ċ − ṡ)   (horizontal, world axes)

with c the centre of mass and s the centre of the soles, both from the measured joints and the IMU
orientation, and their velocities from the joint velocities and the gyro (the unknown base velocity
cancels in the difference). The wrenches are the least-squares split between the feet with moments
weighted as forces at ``moment_arm_m``, so that vertical load shifts between the feet before the centre
of pressure moves inside a foot. Frames: world axes (z up); sole wrenches about the sole centres.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from g1_teleop.control.leg_ik import StanceModel
from g1_teleop.control.proprioception import Proprioception
from g1_teleop.core.rotations import matrix_from_wxyz

GRAVITY_M_S2 = 9.81


@dataclass(frozen=True)
class BalanceGains:
    """Centre-of-mass feedback: kp (1/s²), kd (1/s); moment_arm_m weights sole moments against forces;
    max_accel_m_s2 bounds the commanded horizontal acceleration (≈ g · centre-of-pressure shift / height)."""

    kp_per_s2: float = 40.0
    kd_per_s: float = 8.0
    moment_arm_m: float = 0.05
    max_accel_m_s2: float = 2.0

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"balance: {name} must be a finite value > 0, got {value}")


@dataclass(frozen=True)
class BalanceTorques:
    """Joint torques (29,) N·m in DDS order, and the figures behind them (world axes)."""

    tau: np.ndarray
    com_error_m: np.ndarray  # (2,) c − s, horizontal
    com_accel_m_s2: np.ndarray  # (2,) the commanded a


class Balance:
    def __init__(self, stance: StanceModel, gains: BalanceGains) -> None:
        self.stance, self.gains = stance, gains
        self._model = stance.model.copy()  # its gravity is changed per call
        self._data = self._model.createData()
        scale = np.array([1.0, 1.0, 1.0] + [gains.moment_arm_m] * 3)
        self._wrench_scale = np.concatenate([scale, scale])

    def torques(self, state: Proprioception, com_offset_xy: np.ndarray | None = None) -> BalanceTorques:
        """Torques for the measured ``state``; ``com_offset_xy`` (m, world axes) moves the centre-of-mass
        target away from the centre of the soles."""
        st, model, data = self.stance, self._model, self._data
        world_T_pelvis = pin.SE3(matrix_from_wxyz(state.world_q_pelvis), np.zeros(3))
        config = st.configuration(world_T_pelvis, state.q)
        velocity = np.zeros(model.nv)
        velocity[3:6] = state.pelvis_w_pelvis  # free flyer: [linear, angular] in the pelvis frame
        velocity[st.joints.idx_v] = state.dq
        pin.forwardKinematics(model, data, config, velocity)
        pin.updateFramePlacements(model, data)
        com = pin.centerOfMass(model, data, config, velocity)
        com_velocity = data.vcom[0]
        soles = [data.oMf[i].translation for i in st.sole_ids]
        sole_velocities = [pin.getFrameVelocity(model, data, i, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED).linear
                           for i in st.sole_ids]
        error = com[:2] - 0.5 * (soles[0][:2] + soles[1][:2])
        if com_offset_xy is not None:
            error = error - com_offset_xy
        error_rate = com_velocity[:2] - 0.5 * (sole_velocities[0][:2] + sole_velocities[1][:2])
        g = self.gains
        accel = np.clip(-g.kp_per_s2 * error - g.kd_per_s * error_rate, -g.max_accel_m_s2, g.max_accel_m_s2)

        model.gravity.linear = np.array([-accel[0], -accel[1], -GRAVITY_M_S2])
        load = pin.computeGeneralizedGravity(model, data, config)
        pin.computeJointJacobians(model, data, config)
        contact_jacobian = np.vstack([
            pin.getFrameJacobian(model, data, i, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED) for i in st.sole_ids])
        scaled = contact_jacobian.T * self._wrench_scale  # (nv, 12): Jᵀ with the moment columns scaled
        wrenches = self._wrench_scale * np.linalg.lstsq(scaled[:6], load[:6], rcond=None)[0]
        tau_all = load - contact_jacobian.T @ wrenches
        return BalanceTorques(tau=tau_all[st.joints.idx_v], com_error_m=error, com_accel_m_s2=accel)
