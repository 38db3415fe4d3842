"""The dual-arm IK's objective as CasADi expressions: OpenWBT's arm IK cost (OpenWBT,
deploy/teleop/robot_control/robot_arm_ik.py, G1_29_ArmIK), over the arm joints x with the rest of the body
locked,

    w_p·Σ‖p_ee − p*‖² + w_R·Σ‖log3(R*ᵀ·R_ee)‖² + w_0·‖x‖² + w_m·‖x − x_measured‖²

summed over both hands, written as a least-squares residual so that a Gauss-Newton step can use it: its value,
half its gradient and half its Gauss-Newton Hessian. ROS-free.
"""

from __future__ import annotations

from collections.abc import Sequence

import casadi as ca

from g1_teleop.core.symbolic_kinematics import SymbolicPlacement, log3


def hand_tracking_objective(
    x: ca.SX, measured: ca.SX, targets: ca.SX, weights: ca.SX, end_effectors: Sequence[SymbolicPlacement]
) -> dict[str, ca.SX]:
    """The objective's terms at arm joints x (n symbols, rad).

    measured: the measured arm joints (n, rad, the order of x); targets: the (left, right) targets' 3x4
    [R | p] as columns (12 x 2, column-major, pelvis frame, m); weights: (position per m², rotation per rad²,
    posture per rad², measured per rad²); end_effectors: the (left, right) end-effector placements, functions
    of x. Returns "cost", "gradient" (n, half the true gradient), "hessian" (n x n, half the Gauss-Newton
    Hessian) and "errors" (position left, right in m; rotation left, right in rad).
    """
    residuals = []
    for arm, ee in enumerate(end_effectors):
        target_R, target_p = ca.reshape(targets[:9, arm], 3, 3), targets[9:, arm]
        residuals += [ee.world_p - target_p, log3(target_R.T @ ee.world_R)]
    errors = ca.vertcat(*[ca.norm_2(r) for r in residuals[0::2] + residuals[1::2]])
    root_weights = ca.sqrt(ca.vertcat(weights[0], weights[0], weights[0], weights[1], weights[1], weights[1]))
    residual = ca.vertcat(*residuals) * ca.repmat(root_weights, 2, 1)
    J = ca.jacobian(residual, x)
    offset = x - measured
    return {
        "cost": ca.sumsqr(residual) + weights[2] * ca.sumsqr(x) + weights[3] * ca.sumsqr(offset),
        "gradient": J.T @ residual + weights[2] * x + weights[3] * offset,
        "hessian": J.T @ J + (weights[2] + weights[3]) * ca.SX.eye(x.numel()),
        "errors": errors,
    }
