"""Kinematics of the G1 standing on both feet: leg IK with both feet flat and fixed, centre of mass. ROS-free.

Frames: the support frame S has its origin at the centre of the feet's contact points on the floor at the
default pose, its axes those of the pelvis at the default pose (x forward, y left, z up); the feet stay
where the default pose puts them. Each foot carries a sole frame: at the centre of its contact points,
on the floor, level when the foot is flat. A pelvis pose in S is its height and pitch (roll and yaw 0)
and its horizontal position. Joint vectors are in DDS motor order.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import casadi as ca
import numpy as np
import pinocchio as pin

from g1_teleop.core.compiled_function import CompiledFunction
from g1_teleop.core.dex3_description import Dex3
from g1_teleop.core.foot_contacts import FOOT_BODIES, foot_contact_spheres
from g1_teleop.core.mujoco_model import build_mujoco_model
from g1_teleop.core.pinocchio_model import PinJointMap, build_pinocchio_model
from g1_teleop.core.robot_description import FREE_JOINT_NAME, Robot
from g1_teleop.core.symbolic_kinematics import SymbolicPlacement, joint_placements, log3

SOLE_FRAMES = ("left_sole", "right_sole")
LEG_GROUPS = ("left_leg", "right_leg")  # the legs of the soles, in the same order


class StanceError(RuntimeError):
    """The leg IK did not reach the feet: the pelvis pose is out of the legs' reach."""


@dataclass(frozen=True)
class PelvisPose:
    """Pelvis in the support frame: position (m) and pitch about y (rad, positive leans forward)."""

    x_m: float
    y_m: float
    height_m: float
    pitch_rad: float

    def support_T_pelvis(self) -> pin.SE3:
        return pin.SE3(pin.utils.rotate("y", self.pitch_rad), np.array([self.x_m, self.y_m, self.height_m]))


class StanceModel:
    """A floating-base Pinocchio model of the robot with sole frames, and the feet's place in S."""

    def __init__(self, robot: Robot, contact_spheres: dict[str, tuple[np.ndarray, np.ndarray]],
                 hands: Dex3 | None = None) -> None:
        """``contact_spheres``: per foot body, its contact spheres' centres (n, 3) in the body frame (m) and
        radii (n,), as :func:`g1_teleop.core.foot_contacts.foot_contact_spheres` reads them; ``hands``: Dex3-1
        hands on the wrists (fingers open)."""
        missing = [body for body in FOOT_BODIES if body not in contact_spheres]
        if missing:
            raise ValueError(f"no ground contact points for {missing}: the model needs contact spheres under "
                             "each foot (see urdf/g1_29dof.urdf)")
        self.robot = robot
        model = self.model = build_pinocchio_model(robot, floating_base=True, hands=hands)
        self.joints = PinJointMap.from_model(model, robot.joint_names)
        data = model.createData()
        q = self.configuration(pin.SE3.Identity(), robot.default_q)
        pin.framesForwardKinematics(model, data, q)
        pelvis_p_contacts = []
        for body, sole in zip(FOOT_BODIES, SOLE_FRAMES, strict=True):
            body_id = model.getFrameId(body, pin.FrameType.BODY)
            pelvis_T_foot = data.oMf[body_id]
            centres, radii = contact_spheres[body]
            pelvis_p = _transform(pelvis_T_foot, centres)  # lowest points, pelvis level
            pelvis_p[:, 2] -= radii
            pelvis_p_contacts.append(pelvis_p)
            centre = np.array([*pelvis_p[:, :2].mean(axis=0), pelvis_p[:, 2].min()])
            pelvis_T_sole = pin.SE3(np.eye(3), centre)
            frame = model.frames[body_id]
            model.addFrame(pin.Frame(sole, frame.parentJoint, body_id,
                                     frame.placement * pelvis_T_foot.actInv(pelvis_T_sole), pin.FrameType.OP_FRAME))
        self.data = model.createData()  # after the sole frames
        self.sole_ids = tuple(model.getFrameId(name) for name in SOLE_FRAMES)
        contacts = np.vstack(pelvis_p_contacts)
        pelvis_p_support = np.array([*contacts[:, :2].mean(axis=0), contacts[:, 2].min()])
        self.default_pelvis = PelvisPose(*(-pelvis_p_support[:3]), 0.0)
        support_T_pelvis = self.default_pelvis.support_T_pelvis()
        pin.framesForwardKinematics(model, self.data, self.configuration(support_T_pelvis, robot.default_q))
        self.support_T_sole = tuple(self.data.oMf[i].copy() for i in self.sole_ids)
        # Sole frame: half-length along x and half-width along y of each foot's contact points (m).
        sole_p = [_transform(self.support_T_sole[k].inverse() * support_T_pelvis, p)
                  for k, p in enumerate(pelvis_p_contacts)]
        self.sole_half_size = np.max(np.abs(np.vstack(sole_p)[:, :2]), axis=0)
        self.mass = float(pin.computeTotalMass(model))

    @classmethod
    def for_robot(cls, robot: Robot, hands: Dex3 | None = None) -> StanceModel:
        """The stance model with the feet's contact spheres of the robot's MuJoCo model."""
        return cls(robot, foot_contact_spheres(build_mujoco_model(robot)), hands)

    def configuration(self, world_T_pelvis: pin.SE3, q: np.ndarray) -> np.ndarray:
        """Pinocchio configuration of the pelvis placement and the 29 joints ``q`` (DDS order)."""
        config = pin.neutral(self.model)
        config[:7] = pin.SE3ToXYZQUAT(world_T_pelvis)
        config[self.joints.idx_q] = q
        return config

    def pelvis_kinematics(self, q: ca.SX) -> PelvisKinematics:
        """Every body's placement in the pelvis frame, as CasADi expressions of the 29 joints ``q`` (DDS order; a
        hand's fingers open), and each body's mass times its centre of mass (kg·m), for compiled functions."""
        model = self.model
        slot = {int(i): k for k, i in enumerate(self.joints.idx_q)}
        config = ca.vertcat(*[q[slot[i]] if i in slot else ca.SX(0) for i in range(model.nq)])
        pelvis_joint = model.getJointId(FREE_JOINT_NAME)
        bodies = [j for j in range(1, model.njoints) if pelvis_joint in model.supports[j]]
        placements = joint_placements(model, config, bodies, base=pelvis_joint)
        weighted = {j: model.inertias[j].mass * placements[j].point(model.inertias[j].lever) for j in bodies}
        soles = tuple(placements[model.frames[i].parentJoint].transform(model.frames[i].placement.rotation,
                                                                        model.frames[i].placement.translation)
                      for i in self.sole_ids)
        return PelvisKinematics(placements, weighted, soles)


@dataclass(frozen=True)
class PelvisKinematics:
    """``placements``: per Pinocchio joint, its placement in the pelvis frame; ``weighted_com``: per body (joint),
    its mass times its centre of mass there (kg·m); ``soles``: the sole frames' placements there (SOLE_FRAMES'
    order); CasADi expressions (StanceModel.pelvis_kinematics)."""

    placements: dict[int, SymbolicPlacement]
    weighted_com: dict[int, ca.SX]
    soles: tuple[SymbolicPlacement, ...]

    def com(self, mass_kg: float) -> ca.SX:
        """The centre of mass (3x1, m) in the pelvis frame, of a robot of ``mass_kg``."""
        return sum(self.weighted_com.values(), ca.SX.zeros(3, 1)) / mass_kg


def _pose(pelvis: PelvisPose) -> np.ndarray:
    """(x, y, height m, pitch rad): the leg IK's compiled function's pelvis input."""
    return np.array([pelvis.x_m, pelvis.y_m, pelvis.height_m, pelvis.pitch_rad])


def _transform(a_T_b: pin.SE3, b_p: np.ndarray) -> np.ndarray:
    """Points (n, 3) from frame b to frame a."""
    return np.asarray(b_p, dtype=float) @ a_T_b.rotation.T + a_T_b.translation


class LegIK:
    """Leg joints that put both soles at their place in S for a given pelvis pose: Newton on each leg, each step
    (with the centre of mass) one compiled function of the joints and the pose (core.compiled_function: a few µs,
    where the same step through Pinocchio's and numpy's Python calls cost 30 µs)."""

    def __init__(self, stance: StanceModel, ankle_margin_rad: float = 0.05, tolerance: float = 1e-6,
                 max_iterations: int = 20) -> None:
        self.stance = stance
        robot = stance.robot
        self._legs = np.concatenate([robot.group(leg) for leg in LEG_GROUPS])  # sole order, DDS indices
        self._ankle_pitch = robot.group("ankle_pitch")
        self._ankle_bound = robot.q_lower[self._ankle_pitch] + ankle_margin_rad
        self.tolerance, self.max_iterations = tolerance, max_iterations
        self._newton = CompiledFunction(self._newton_step())

    def _newton_step(self) -> ca.Function:
        """One Newton step of both legs: (q (29,) rad, DDS order; pelvis (x, y, height m, pitch rad) in S) → (the
        stepped legs (12,) in ``_legs`` order, the largest sole error before the step, the centre of mass (3,) in S
        (m) before the step). A sole's error is its target in its own frame, position (m) and rotation vector (rad):
        zero when it stands at its place."""
        st = self.stance
        q, pelvis = ca.SX.sym("q", len(st.robot.joint_names)), ca.SX.sym("pelvis", 4)
        legs = q[self._legs.tolist()]
        kinematics = st.pelvis_kinematics(q)
        c, s = ca.cos(pelvis[3]), ca.sin(pelvis[3])
        support_R_pelvis = ca.vertcat(ca.horzcat(c, 0, s), ca.horzcat(0, 1, 0), ca.horzcat(-s, 0, c))
        steps, errors = [], []
        for k, (pelvis_T_sole, support_T_target) in enumerate(zip(kinematics.soles, st.support_T_sole, strict=True)):
            support_R_sole = support_R_pelvis @ pelvis_T_sole.world_R
            support_p_sole = support_R_pelvis @ pelvis_T_sole.world_p + pelvis[:3]
            sole_R_target = support_R_sole.T @ ca.DM(support_T_target.rotation)
            sole_p_target = support_R_sole.T @ (ca.DM(support_T_target.translation) - support_p_sole)
            error = ca.vertcat(sole_p_target, log3(sole_R_target))
            leg = legs[6 * k:6 * k + 6]
            steps.append(-ca.solve(ca.jacobian(error, leg), error))
            errors.append(error)
        support_com = support_R_pelvis @ kinematics.com(st.mass) + pelvis[:3]
        largest_error = ca.mmax(ca.fabs(ca.vertcat(*errors)))
        return ca.Function("g1_leg_ik_newton", [q, pelvis], [legs + ca.vertcat(*steps), largest_error, support_com],
                           ["q", "pelvis"], ["stepped", "error", "com"])

    def solve(self, pelvis: PelvisPose, q: np.ndarray) -> np.ndarray:
        """``q`` (29,) with the 12 leg joints solved; waist and arms as given; legs warm-start from ``q``."""
        return self._solve(pelvis, q)[0]

    def com_in_support(self, pelvis: PelvisPose, q: np.ndarray) -> np.ndarray:
        """Centre of mass (3,) in S (m) with the pelvis at ``pelvis`` and the joints at ``q``."""
        return self._newton(np.asarray(q, dtype=float), _pose(pelvis))[2].copy()

    def _solve(self, pelvis: PelvisPose, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``solve``'s answer and the centre of mass (3,) in S (m) there."""
        pose = _pose(pelvis)
        solved = np.array(q, dtype=float)
        for _ in range(self.max_iterations):
            stepped, error, com = self._newton(solved, pose)
            if error[0] < self.tolerance:
                return solved, com.copy()
            solved[self._legs] = stepped
        raise StanceError(f"leg IK did not reach the feet for the pelvis at {pelvis} (residual {error[0]:.2e})")

    def balanced(self, pelvis: PelvisPose, q: np.ndarray, com_target_xy: np.ndarray,
                 iterations: int = 4) -> tuple[PelvisPose, np.ndarray]:
        """The pelvis placed so that the centre of mass projects on ``com_target_xy`` (S, m), and ``q``
        with the legs solved for it.

        The pelvis moves horizontally at ``pelvis``'s height and pitch. Where the ankles would then bend
        past their dorsiflexion limit (less ``ankle_margin_rad``), as in a deep squat, the pelvis instead
        moves back until the ankles are at that bound and leans forward beyond ``pelvis.pitch_rad`` to keep
        the centre of mass over the feet (the pitch is a lower bound).
        """
        for _ in range(iterations):
            q, com = self._solve(pelvis, q)
            error = com[:2] - com_target_xy
            pelvis = replace(pelvis, x_m=float(pelvis.x_m - error[0]), y_m=float(pelvis.y_m - error[1]))
        q = self.solve(pelvis, q)
        if self._ankle_excess(q) <= 0:
            return pelvis, q
        commanded_pitch = pelvis.pitch_rad
        for _ in range(iterations):  # Newton on (x, pitch): centre of mass on target, ankles at the bound
            residual, q = self._ankle_bound_residual(pelvis, q, com_target_xy)
            jacobian = np.zeros((2, 2))
            for col, (dx, dpitch) in enumerate(((1e-4, 0.0), (0.0, 1e-4))):
                moved = replace(pelvis, x_m=pelvis.x_m + dx, pitch_rad=pelvis.pitch_rad + dpitch)
                jacobian[:, col] = (self._ankle_bound_residual(moved, q, com_target_xy)[0] - residual) / 1e-4
            dx, dpitch = np.linalg.solve(jacobian, -residual)
            pelvis = replace(pelvis, x_m=float(pelvis.x_m + dx),
                             pitch_rad=float(max(commanded_pitch, pelvis.pitch_rad + dpitch)))
        return pelvis, self.solve(pelvis, q)

    def _ankle_excess(self, q: np.ndarray) -> float:
        """How far (rad) the more bent ankle is past its dorsiflexion bound (negative: inside)."""
        return float(np.max(self._ankle_bound - q[self._ankle_pitch]))

    def _ankle_bound_residual(self, pelvis: PelvisPose, q: np.ndarray,
                              com_target_xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q, com = self._solve(pelvis, q)
        return np.array([com[0] - com_target_xy[0], self._ankle_excess(q)]), q

    def pelvis_of(self, q: np.ndarray) -> PelvisPose:
        """The pelvis pose in S that the leg joints ``q`` give with the left sole at its place (FK)."""
        st = self.stance
        config = st.configuration(pin.SE3.Identity(), q)
        pin.framesForwardKinematics(st.model, st.data, config)
        support_T_pelvis = st.support_T_sole[0] * st.data.oMf[st.sole_ids[0]].inverse()
        pitch = float(pin.rpy.matrixToRpy(support_T_pelvis.rotation)[1])
        x, y, z = support_T_pelvis.translation
        return PelvisPose(float(x), float(y), float(z), pitch)
