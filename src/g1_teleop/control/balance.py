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

All of it is one CasADi function of the measured state, compiled (core.compiled_function), on the kinematics
written out from the stance model (core.symbolic_kinematics), in the pelvis frame: a joint's load is its axis ·
(the moment about its origin of its subtree's weight under the virtual gravity), less that of the sole wrenches
it carries. Pinocchio's RNEA and frame Jacobians, called from Python, took 119 µs a tick here; this takes
21 µs (tests/unit/test_standing_controller.py checks it against them).
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from g1_teleop.control.leg_ik import StanceModel
from g1_teleop.control.proprioception import Proprioception
from g1_teleop.core.compiled_function import CompiledFunction
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
        self._gains = np.array([gains.kp_per_s2, gains.kd_per_s, gains.max_accel_m_s2, gains.moment_arm_m])
        self._no_offset = np.zeros(2)
        self._function = CompiledFunction(self._symbolic_function())

    def torques(self, state: Proprioception, com_offset_xy: np.ndarray | None = None) -> BalanceTorques:
        """Torques for the measured ``state``; ``com_offset_xy`` (m, world axes) moves the centre-of-mass
        target away from the centre of the soles."""
        offset = self._no_offset if com_offset_xy is None else np.asarray(com_offset_xy, dtype=float)
        world_R_pelvis = matrix_from_wxyz(state.world_q_pelvis)
        tau, error, accel = self._function(np.asarray(state.q, dtype=float), np.asarray(state.dq, dtype=float),
                                           world_R_pelvis, np.asarray(state.pelvis_w_pelvis, dtype=float), offset,
                                           self._gains)
        return BalanceTorques(tau=tau.copy(), com_error_m=error.copy(), com_accel_m_s2=accel.copy())

    def _symbolic_function(self) -> ca.Function:
        """(q, dq (29,) DDS order, world_R_pelvis (3x3), pelvis_w_pelvis (3,), com_offset_xy (2,), gains (kp, kd,
        max_accel, moment_arm)) → (tau (29,), com_error (2,), com_accel (2,)); the module doc's equations."""
        st = self.stance
        model, n = st.model, len(st.robot.joint_names)
        q, dq, world_R_pelvis = ca.SX.sym("q", n), ca.SX.sym("dq", n), ca.SX.sym("world_R_pelvis", 3, 3)
        w, offset, gains = ca.SX.sym("pelvis_w_pelvis", 3), ca.SX.sym("com_offset", 2), ca.SX.sym("gains", 4)
        kp, kd, max_accel, moment_arm = gains[0], gains[1], gains[2], gains[3]
        kinematics = st.pelvis_kinematics(q)
        at, weighted, com = kinematics.placements, kinematics.weighted_com, kinematics.com(st.mass)
        soles = [(placement.world_p, model.frames[i].parentJoint)  # (its position, its joint) in the pelvis frame
                 for placement, i in zip(kinematics.soles, st.sole_ids, strict=True)]
        centre = 0.5 * (soles[0][0] + soles[1][0])

        # c − s and its rate in world axes; the base's unknown linear velocity cancels in the difference
        error = (world_R_pelvis @ (com - centre))[:2] - offset
        rate = world_R_pelvis @ (ca.cross(w, com - centre) + ca.jtimes(com - centre, q, dq))
        accel = ca.fmin(ca.fmax(-kp * error - kd * rate[:2], -max_accel), max_accel)
        load = world_R_pelvis.T @ ca.vertcat(accel, GRAVITY_M_S2)  # per kg, pelvis axes: −(virtual gravity)

        # Sole wrenches (force, moment about the sole) that carry the whole load, least norm with the moments
        # weighted as forces at moment_arm: u = (f_l, m_l / arm, f_r, m_r / arm), A u = total load on the base.
        eye = ca.SX.eye(3)
        A = ca.vertcat(ca.horzcat(eye, ca.SX.zeros(3, 3), eye, ca.SX.zeros(3, 3)),
                       ca.horzcat(ca.skew(soles[0][0]), moment_arm * eye, ca.skew(soles[1][0]), moment_arm * eye))
        base_load = ca.vertcat(st.mass * load, ca.cross(st.mass * com, load))
        u = A.T @ ca.solve(A @ A.T, base_load)
        wrenches = [(u[0:3], moment_arm * u[3:6]), (u[6:9], moment_arm * u[9:12])]

        torques = []
        for name in st.robot.joint_names:
            j = model.getJointId(name)
            origin, axis = at[j].world_p, at[j].world_axis
            subtree = [i for i in model.subtrees[j] if i in weighted]
            carried = sum((weighted[i] for i in subtree), ca.SX.zeros(3, 1)) - sum(
                model.inertias[i].mass for i in subtree) * origin
            tau = ca.dot(axis, ca.cross(carried, load))
            for (position, sole_joint), (force, moment) in zip(soles, wrenches, strict=True):
                if j in model.supports[sole_joint]:
                    tau -= ca.dot(axis, ca.cross(position - origin, force) + moment)
            torques.append(tau)
        return ca.Function("g1_balance", [q, dq, world_R_pelvis, w, offset, gains],
                           [ca.vertcat(*torques), error, accel],
                           ["q", "dq", "world_R_pelvis", "pelvis_w_pelvis", "com_offset", "gains"],
                           ["tau", "com_error", "com_accel"])
