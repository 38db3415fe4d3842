"""The whole-body IK problem at one point: GMR's frame tasks as weighted residuals over the floating base and the
29 joints, with their Jacobian, from one CasADi function compiled to machine code (``compiled_function``), in
the form the Levenberg-Marquardt solver (``levenberg_marquardt``) takes; with a collision model, the arm IK's
clearance constraints (``clearance_constraints``) between the arms and the trunk, the thighs and the other arm.
ROS-free.

Coordinates x (35,): the pelvis position in the world (3, m), a rotation vector ω (3) of the pelvis relative
to a reference orientation (a parameter: the previous frame's), world_R_pelvis = R_ref·R(ω) with R(ω) the unit
quaternion (1, ω/2)/‖·‖, then the 29 joints in DDS order (rad). Residuals per tracked link: c_p·(p − p*) and
c_R·log3(R*ᵀR) (world axes), c the task costs as mink's FrameTask weighs its errors (cost ⊙ error).
Clearances do not depend on the base: they are computed in the pelvis frame, and linearised over the arm
joints only (the trunk and thighs the waist and legs move are held in the step; the solver's acceptance test
uses the exact clearance).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import casadi as ca
import mujoco
import numpy as np
import pinocchio as pin

from g1_teleop.core.compiled_function import CompiledFunction
from g1_teleop.core.pinocchio_model import PinJointMap, build_pinocchio_model
from g1_teleop.core.robot_description import Robot
from g1_teleop.core.symbolic_kinematics import joint_placements, log3
from g1_teleop.retarget.arm_ik_problem import Linearization
from g1_teleop.retarget.clearance_constraints import ClearanceConstraints
from g1_teleop.retarget.self_collision import ArmCollisionModel
from g1_teleop.retarget.whole_body_config import TOE_FRAMES, TOE_POSITION_M

BASE_SIZE = 6  # pelvis position (3) and rotation vector (3) at the front of x
_UNBOUNDED = 1e30
_IDENTITY_TARGET = np.array([1.0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0])  # [R column by column, p] of a target


def tracking_model(robot: Robot) -> pin.Model:
    """The fixed-base Pinocchio model (world = pelvis) with GMR's toe frames added."""
    model = build_pinocchio_model(robot, floating_base=False)
    for toe, ankle in TOE_FRAMES.items():
        if not model.existFrame(toe):
            parent_id = model.getFrameId(ankle, pin.FrameType.BODY)
            parent = model.frames[parent_id]
            placement = parent.placement * pin.SE3(np.eye(3), np.array(TOE_POSITION_M))
            model.addFrame(pin.Frame(toe, parent.parentJoint, parent_id, placement, pin.FrameType.OP_FRAME))
    return model


class WholeBodyProblem:
    """Weighted frame-task residuals of ``links`` over x (module docstring) on ``robot``'s model.

    ``lower``/``upper`` (35,) are the bounds of x the solver keeps; the caller sets them per solve (joint limits
    narrowed by the speed limit; the base unbounded). mj_model: the robot's MuJoCo model, whose collision geoms
    give the clearance constraints (``min_clearance_m`` between the arms and what they may touch); None: none.
    """

    def __init__(self, robot: Robot, links: Sequence[str], mj_model: mujoco.MjModel | None = None,
                 min_clearance_m: float = 0.0) -> None:
        self.model = tracking_model(robot)
        missing = [name for name in links if not self.model.existFrame(name)]
        if missing:
            raise ValueError(f"whole-body IK: the model has no frames {missing}")
        self.links = tuple(links)
        self.joint_lower, self.joint_upper = np.asarray(robot.q_lower, float), np.asarray(robot.q_upper, float)
        self.size = BASE_SIZE + len(robot.joint_names)
        self.lower = np.concatenate([np.full(BASE_SIZE, -_UNBOUNDED), self.joint_lower])
        self.upper = np.concatenate([np.full(BASE_SIZE, _UNBOUNDED), self.joint_upper])
        self.min_clearance_m = min_clearance_m
        self._idx_q = PinJointMap.from_model(self.model, robot.joint_names).idx_q
        arms = robot.group("arms")
        self._arm_columns = BASE_SIZE + arms
        self._clearance = None if mj_model is None else ClearanceConstraints(
            ArmCollisionModel(robot, mj_model, self.model), self.model,
            [self.model.getJointId(robot.joint_names[i]) for i in arms], min_clearance_m)
        self._function = CompiledFunction(self._symbolic_function())
        self._no_constraints = np.empty((0, self.size))
        self._eye = np.eye(self.size)

    def parameters(self, reference_wxyz: np.ndarray, targets: np.ndarray, costs: np.ndarray,
                   previous: np.ndarray, smoothing_weight: float) -> tuple[np.ndarray, np.ndarray, float]:
        """The parameters of one solve: the reference pelvis orientation (w, x, y, z), the links' targets (L, 4, 4;
        world, m), their task costs (L, 2: position per m, orientation per rad), the previous frame's x (in the
        same reference) and the weight on ‖x − previous‖²."""
        vector = np.concatenate([reference_wxyz, targets[:, :3, :].transpose(0, 2, 1).reshape(-1),
                                 np.asarray(costs, float).ravel()])
        return vector, previous, smoothing_weight

    def linearize(self, x: np.ndarray, parameters: tuple[np.ndarray, np.ndarray, float]) -> Linearization:
        """Objective Σ‖residual‖² + w‖x − previous‖², half its gradient and half its Gauss-Newton Hessian at x;
        ``errors`` = the links' position errors (m) then orientation errors (rad)."""
        vector, previous, weight = parameters
        residual, jacobian, errors, _, *collision = self._function(x, vector)
        J = jacobian.reshape(self.size, residual.size).T
        offset = x - previous
        if self._clearance is None:
            close, gradient, smallest = np.empty(0), self._no_constraints, math.inf
        else:
            close, arm_gradient, smallest = self._clearance.linearize(*collision)
            gradient = np.zeros((close.size, self.size))
            gradient[:, self._arm_columns] = arm_gradient
        return Linearization(
            x=x, cost=float(residual @ residual + weight * (offset @ offset)),
            gradient=J.T @ residual + weight * offset, hessian=J.T @ J + weight * self._eye,
            errors=errors.copy(), clearance=close, clearance_gradient=gradient, smallest_clearance=smallest,
            violation=max(0.0, self.min_clearance_m - smallest))

    def link_poses(self, x: np.ndarray, reference_wxyz: np.ndarray) -> np.ndarray:
        """World poses (L, 4, 4) of the links at x."""
        count = len(self.links)
        vector = np.concatenate([reference_wxyz, np.tile(_IDENTITY_TARGET, count), np.zeros(2 * count)])
        poses = self._function(x, vector)[3].reshape(count, 4, 3).transpose(0, 2, 1)  # [R | p] per link
        out = np.zeros((count, 4, 4))
        out[:, :3, :] = poses
        out[:, 3, 3] = 1.0
        return out

    def _symbolic_function(self) -> ca.Function:
        model, count = self.model, len(self.links)
        x = ca.SX.sym("x", self.size)
        reference, targets, costs = ca.SX.sym("reference", 4), ca.SX.sym("targets", 12, count), ca.SX.sym("costs", 2,
                                                                                                         count)
        slot = {int(column): k for k, column in enumerate(self._idx_q)}
        q = ca.vertcat(*[x[BASE_SIZE + slot[i]] if i in slot else 0.0 for i in range(model.nq)])
        half = x[3:6] / 2.0
        delta = ca.vertcat(1.0, half) / ca.sqrt(1.0 + ca.dot(half, half))
        world_R_pelvis = _matrix(reference / ca.norm_2(reference)) @ _matrix(delta)
        frames = [model.frames[model.getFrameId(name)] for name in self.links]
        extra = [] if self._clearance is None else self._clearance.joints
        placements = joint_placements(model, q, [f.parentJoint for f in frames] + extra)
        residuals, errors_p, errors_R, poses = [], [], [], []
        for k, frame in enumerate(frames):
            local = placements[frame.parentJoint].transform(frame.placement.rotation, frame.placement.translation)
            world_R = world_R_pelvis @ local.world_R
            world_p = world_R_pelvis @ local.world_p + x[:3]
            target_R, target_p = ca.reshape(targets[:9, k], 3, 3), targets[9:, k]
            position, rotation = world_p - target_p, log3(target_R.T @ world_R)
            residuals += [costs[0, k] * position, costs[1, k] * rotation]
            errors_p.append(ca.norm_2(position))
            errors_R.append(ca.norm_2(rotation))
            poses.append(ca.vec(ca.horzcat(world_R, world_p)))  # 12: R column by column, then p
        residual = ca.vertcat(*residuals)
        parameters = ca.vertcat(reference, ca.vec(targets), ca.vec(costs))
        outputs = [residual, ca.jacobian(residual, x), ca.vertcat(*errors_p, *errors_R), ca.horzcat(*poses)]
        names = ["residual", "jacobian", "errors", "poses"]
        if self._clearance is None:
            return ca.Function("g1_whole_body", [x, parameters], [ca.densify(v) for v in outputs], ["x", "parameters"],
                               names)
        # as the arm IK's problem: sphere centres and their Jacobians here, the pair distances in the collision
        # model's mapped kernels, composed below
        kinematics = ca.Function("g1_whole_body_kinematics", [x, parameters],
                                 [*outputs, *self._clearance.symbolic_kinematics(placements)])
        x_mx, parameters_mx = ca.MX.sym("x", self.size), ca.MX.sym("parameters", parameters.numel())
        *values, centers, center_jacobians, static_poses = kinematics(x_mx, parameters_mx)
        distance, direction = self._clearance.distance_function()(centers, static_poses)
        return ca.Function("g1_whole_body", [x_mx, parameters_mx],
                           [ca.densify(v) for v in [*values, distance, direction, center_jacobians]],
                           ["x", "parameters"], [*names, "clearance", "direction", "center_jacobians"])


def _matrix(q: ca.SX) -> ca.SX:
    """Rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    return ca.vertcat(
        ca.horzcat(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
        ca.horzcat(2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
        ca.horzcat(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)))
