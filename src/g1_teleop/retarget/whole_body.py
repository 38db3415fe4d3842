"""Whole-body retargeting of the operator's 24 body points (XRobot's layout) to the G1's floating base and 29
joints, by GMR's method (YanjieZe/GMR, general_motion_retargeting/motion_retarget.py). ROS-free.

Per body frame, as GMR: (1) scale: the pelvis position p_root' = s_root·p_root, every other tracked point
p' = s_b·(p_b − p_root) + p_root', orientations unchanged; (2) offsets: q' = q ⊗ q_off, then p' = p' + R(q')·p_off
(``whole_body_config.XROBOT_TO_G1``); (3) two IK phases over the frame tasks with the tables' costs, each
iterated while it improves, within the joint limits and the joint speed limit. Unlike GMR:

- calibration (``calibrate``): 2 s of the operator standing still give the scales, the robot's lengths over
  the operator's, where GMR multiplies its fixed table by actual_height / 1.8 (which scales a taller operator
  up, not down);
- the floor: every frame is shifted vertically so that the lower toe target lies where the robot's toe frame
  is when it stands on the floor, instead of a fixed ground offset;
- each phase is a Levenberg-Marquardt solve with box-constrained QP steps (``levenberg_marquardt``) on a
  compiled function of the kinematics (``whole_body_problem``), not mink's differential IK at dt = 2 ms;
- with the robot's MuJoCo model, the arm IK's self-collision clearance between the arms and the trunk, the
  thighs and the other arm (``clearance_constraints``).

Frames: body points and outputs in the same z-up world frame (x forward, y left, floor at z = 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from g1_teleop.core.body_points import BODY_POINT_COUNT, body_point_index
from g1_teleop.core.robot_description import Robot
from g1_teleop.core.rotations import IDENTITY_WXYZ, matrix_from_wxyz, wxyz_from_matrix
from g1_teleop.retarget.levenberg_marquardt import LevenbergMarquardt
from g1_teleop.retarget.whole_body_config import (
    FOOT_POINTS,
    HUMAN_ROOT,
    POINT_PARENTS,
    UNTRACKED_POINTS,
    XROBOT_TO_G1,
    TrackedBody,
    WholeBodyConfig,
)
from g1_teleop.retarget.whole_body_problem import BASE_SIZE, WholeBodyProblem


@dataclass(frozen=True)
class Calibration:
    """Scales of one operator: ``scales`` per tracked body point (the pelvis's applies to its world position),
    robot length over the operator's; ``height_ratio``: the operator's size over the 1.8 m person GMR's table
    assumes (GMR's actual_height / 1.8)."""

    scales: dict[str, float]
    height_ratio: float


@dataclass(frozen=True)
class WholeBodyFrame:
    """The retargeted robot for one body frame: pelvis position (3,) m and orientation (w, x, y, z) in the world,
    the 29 joints (DDS order, rad), the world poses (L, 4, 4) of the tracked links (``WholeBodyRetargeter.links``)
    and their position (m) and orientation (rad) errors to the targets, IK evaluations over both phases,
    whether both phases converged before the iteration cap, and the smallest clearance between the arms and what
    they may touch (m, capped at the collision model's search range; inf without one)."""

    base_position: np.ndarray
    base_wxyz: np.ndarray
    joints: np.ndarray
    link_poses: np.ndarray
    position_error_m: np.ndarray
    rotation_error_rad: np.ndarray
    iterations: int
    converged: bool
    clearance_m: float

    @property
    def configuration(self) -> np.ndarray:
        """GMR's qpos: pelvis xyz (3), pelvis (w, x, y, z) (4), the 29 joints (36,)."""
        return np.concatenate([self.base_position, self.base_wxyz, self.joints])


class WholeBodyRetargeter:
    """GMR's whole-body retargeting on ``robot`` (module docstring), warm-started from frame to frame.

    calibration: the operator's scales; None: GMR's table for a 1.8 m operator. mj_model: the robot's MuJoCo
    model, whose collision geoms give the clearance constraints (config.min_clearance_m); None: none. Call
    ``reset`` before an unrelated stream.
    """

    def __init__(self, robot: Robot, config: WholeBodyConfig | None = None,
                 calibration: Calibration | None = None, mj_model: mujoco.MjModel | None = None,
                 table: tuple[TrackedBody, ...] = XROBOT_TO_G1) -> None:
        self.config = config or WholeBodyConfig()
        self.robot = robot
        self.table = table
        self.links = tuple(row.link for row in table)
        self.problem = WholeBodyProblem(robot, self.links, mj_model, self.config.min_clearance_m)
        self._solver = LevenbergMarquardt(self.problem, self.config)
        self._point_index = np.array([row.point_index for row in table])
        self._root = next(k for k, row in enumerate(table) if row.point == HUMAN_ROOT)
        self._feet = [k for k, row in enumerate(table) if row.point in FOOT_POINTS]
        self._offset_R = matrix_from_wxyz(np.array([row.rotation_offset_wxyz for row in table]))
        self._offset_p = np.array([row.position_offset for row in table], dtype=float)
        self._costs = [np.array([row.phase1 for row in table], float), np.array([row.phase2 for row in table], float)]
        self.calibrate_with(calibration or Calibration({row.point: row.scale for row in table}, 1.0))
        standing = self.problem.link_poses(self.standing_x(), IDENTITY_WXYZ)
        self.floor_toe_height_m = float(min(standing[k][2, 3] for k in self._feet))
        """Height of the toe frames when the robot stands on the floor (m)."""
        self.reset()

    def calibrate_with(self, calibration: Calibration) -> None:
        """Use an operator's scales (``calibrate``) from the next frame on."""
        self.calibration = calibration
        self._scales = np.array([calibration.scales[row.point] for row in self.table])

    def standing_x(self) -> np.ndarray:
        """x of the robot standing on the floor at its default pose (pelvis at spawn_height, level)."""
        return np.concatenate([[0.0, 0.0, self.robot.spawn_height], np.zeros(3), self.robot.default_q])

    def reset(self, base_position: np.ndarray | None = None, base_wxyz: np.ndarray = IDENTITY_WXYZ,
              joints: np.ndarray | None = None) -> None:
        """Start the next solve from this robot pose (default: standing at the default pose) with no speed limit."""
        x = self.standing_x()
        if base_position is not None:
            x[:3] = base_position
        if joints is not None:
            x[BASE_SIZE:] = joints
        self._x = x
        self._reference = np.asarray(base_wxyz, dtype=float)
        self._stamp: float | None = None

    def targets(self, positions: np.ndarray, quat_wxyz: np.ndarray) -> np.ndarray:
        """The tracked links' world targets (L, 4, 4) of one body frame: (24, 3) positions (m) and (24, 4)
        orientations, XRobot's order. Scale, offsets, then the floor (module docstring)."""
        points = np.asarray(positions, float)[self._point_index]
        root = points[self._root]
        scaled = self._scales[:, None] * (points - root) + self._scales[self._root] * root
        targets = np.zeros((len(self.table), 4, 4))
        targets[:, :3, :3] = matrix_from_wxyz(np.asarray(quat_wxyz, float)[self._point_index]) @ self._offset_R
        targets[:, :3, 3] = scaled + (targets[:, :3, :3] @ self._offset_p[:, :, None])[:, :, 0]
        targets[:, 2, 3] += self.floor_toe_height_m - targets[self._feet, 2, 3].min()
        targets[:, 3, 3] = 1.0
        return targets

    def solve(self, stamp: float, positions: np.ndarray, quat_wxyz: np.ndarray) -> WholeBodyFrame:
        """The robot for one body frame at ``stamp`` (s): both IK phases from the previous frame's answer, the
        joints within their limits and within max_joint_speed of the previous frame's."""
        targets = self.targets(positions, quat_wxyz)
        lower, upper = self.problem.joint_lower, self.problem.joint_upper
        if self._stamp is not None and stamp > self._stamp:
            reach = self.config.max_joint_speed * (stamp - self._stamp)
            lower = np.maximum(lower, self._x[BASE_SIZE:] - reach)
            upper = np.minimum(upper, self._x[BASE_SIZE:] + reach)
        self.problem.lower[BASE_SIZE:], self.problem.upper[BASE_SIZE:] = lower, upper
        x, iterations, converged = self._x, 0, True
        for costs in self._costs:
            parameters = self.problem.parameters(self._reference, targets, costs, self._x,
                                                 self.config.smoothing_weight)
            solution, phase_converged, evaluations = self._solver.minimize(x, parameters)
            x, iterations, converged = solution.x, iterations + evaluations, converged and phase_converged
        errors = solution.errors
        link_poses = self.problem.link_poses(x, self._reference)
        base_wxyz = _base_wxyz(self._reference, x[3:6])
        self._x = np.concatenate([x[:3], np.zeros(3), x[BASE_SIZE:]])
        self._reference, self._stamp = base_wxyz, stamp
        count = len(self.table)
        return WholeBodyFrame(x[:3].copy(), base_wxyz, x[BASE_SIZE:].copy(), link_poses, errors[:count].copy(),
                              errors[count:].copy(), iterations, converged, solution.smallest_clearance)

    def body_points(self, base_position: np.ndarray, base_wxyz: np.ndarray, joints: np.ndarray,
                    scales: dict[str, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The inverse of ``targets``: the 24 body points (24, 3) m and orientations (24, 4), XRobot's order, of
        an operator with ``scales`` (default: this retargeter's) for whom the robot would take this pose (the
        pelvis in the world, the 29 joints in DDS order). The points no task follows are placed by
        ``UNTRACKED_POINTS`` on the links they are near. The floor is the robot's."""
        scale = self._scales if scales is None else np.array([scales[row.point] for row in self.table])
        x = np.concatenate([base_position, np.zeros(3), joints])
        poses = self.problem.link_poses(x, np.asarray(base_wxyz, float))
        rotations = poses[:, :3, :3]
        scaled = poses[:, :3, 3] - (rotations @ self._offset_p[:, :, None])[:, :, 0]
        orientations = rotations @ self._offset_R.transpose(0, 2, 1)
        points = np.zeros((BODY_POINT_COUNT, 3))
        quat = np.zeros((BODY_POINT_COUNT, 4))
        rows = [(self._point_index[k], k, scaled[k]) for k in range(len(self.table))]
        rows += [(body_point_index(name), self.links.index(link), poses[self.links.index(link)] @ np.append(local, 1.0))
                 for name, (link, local) in UNTRACKED_POINTS.items()]
        root = scaled[self._root] / scale[self._root]
        for point, k, position in rows:
            points[point] = (position[:3] - scaled[self._root]) / scale[k] + root
            quat[point] = wxyz_from_matrix(orientations[k])
        return points, quat


def _base_wxyz(reference_wxyz: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """world_q_pelvis = q_ref ⊗ (1, ω/2)/‖·‖ (``whole_body_problem``), w ≥ 0 (a quaternion product, no matrix
    conversion)."""
    w0, x0, y0, z0 = reference_wxyz
    w1, (x1, y1, z1) = 1.0, omega / 2.0
    q = np.array([w0 * w1 - x0 * x1 - y0 * y1 - z0 * z1, w0 * x1 + x0 * w1 + y0 * z1 - z0 * y1,
                  w0 * y1 - x0 * z1 + y0 * w1 + z0 * x1, w0 * z1 + x0 * y1 - y0 * x1 + z0 * w1])
    return q / (np.linalg.norm(q) if q[0] >= 0.0 else -np.linalg.norm(q))


def calibrate(retargeter: WholeBodyRetargeter, positions: np.ndarray) -> Calibration:
    """An operator's scales from body frames (N, 24, 3) m of them standing still (``calibration_s`` of a stream,
    see ``BodyStream.window``).

    Each tracked point's scale is the robot's path length from the pelvis along ``POINT_PARENTS`` (standing at
    its default pose) over the operator's (their mean positions; lengths of rigid segments, so any posture
    works); the pelvis's is the robot's pelvis height above its lower foot point over the operator's. Raises
    ValueError when a point moved more than still_tolerance_m from its mean (the operator did not stand still).
    """
    positions = np.asarray(positions, dtype=float)
    mean = positions.mean(axis=0)
    moved = float(np.linalg.norm(positions - mean, axis=-1).max())
    config = retargeter.config
    if moved > config.still_tolerance_m:
        raise ValueError(f"calibration: a body point moved {moved:.3f} m (more than {config.still_tolerance_m} m); "
                         f"stand still for {config.calibration_s} s")
    table = retargeter.table
    unit = {row.point: 1.0 for row in table}
    robot_points, _ = retargeter.body_points(retargeter.standing_x()[:3], IDENTITY_WXYZ,
                                             retargeter.robot.default_q, unit)
    robot = {row.point: robot_points[body_point_index(row.point)] for row in table}
    operator = {row.point: mean[body_point_index(row.point)] for row in table}

    def path(points: dict[str, np.ndarray], name: str) -> float:
        return 0.0 if name == HUMAN_ROOT else (float(np.linalg.norm(points[name] - points[POINT_PARENTS[name]]))
                                               + path(points, POINT_PARENTS[name]))

    def pelvis_height(points: dict[str, np.ndarray]) -> float:
        return float(points[HUMAN_ROOT][2] - min(points[f][2] for f in FOOT_POINTS))

    scales = {row.point: path(robot, row.point) / path(operator, row.point)
              for row in table if row.point != HUMAN_ROOT}
    scales[HUMAN_ROOT] = pelvis_height(robot) / pelvis_height(operator)
    if not all(np.isfinite(s) and s > 0.0 for s in scales.values()):
        raise ValueError("calibration: body points coincide or the pelvis is not above the feet; check the stream")
    root_row = next(row for row in table if row.point == HUMAN_ROOT)
    return Calibration(scales, root_row.scale / scales[HUMAN_ROOT])
