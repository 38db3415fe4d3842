"""Rotations and poses: the package's one quaternion order and its conversions, on Pinocchio's (Eigen's) and MuJoCo's
rotation functions. ROS-free.

Not scipy's Rotation: importing ``scipy.spatial.transform`` costs each node process ~0.45 s at start (it imports all
of scipy.spatial), and a call ~100× more than Pinocchio's (roll-pitch-yaw of a matrix: 230 µs against 0.8 µs,
measured here under load), in the policy's 50 Hz tick among others. tests/unit/test_rotations.py checks every
function against scipy's.

Quaternions are (w, x, y, z) everywhere in g1_teleop, as MuJoCo (``qpos``, ``sensordata``), Pinocchio's
``Quaternion(w, x, y, z)`` and Unitree's LowState ``imu_state.quaternion`` order them. ROS messages
(geometry_msgs/Quaternion) and scipy's default are (x, y, z, w): convert at that boundary only, with
:func:`wxyz_from_xyzw` / :func:`xyzw_from_wxyz`. A name ``a_q_b`` is the orientation of frame b in frame a,
``a_T_b`` the 4×4 homogeneous transform taking b-coordinates to a-coordinates (metres).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import mujoco
import numpy as np
import pinocchio as pin

IDENTITY_WXYZ = np.array([1.0, 0.0, 0.0, 0.0])


def xyzw_from_wxyz(q_wxyz: Sequence[float] | np.ndarray) -> np.ndarray:
    """(x, y, z, w) of a (w, x, y, z) quaternion: the order of ROS messages."""
    q = np.asarray(q_wxyz, dtype=float)
    return np.array([q[1], q[2], q[3], q[0]])


def wxyz_from_xyzw(q_xyzw: Sequence[float] | np.ndarray) -> np.ndarray:
    """(w, x, y, z) of an (x, y, z, w) quaternion (a ROS message's order)."""
    q = np.asarray(q_xyzw, dtype=float)
    return np.array([q[3], q[0], q[1], q[2]])


def matrix_from_wxyz(q_wxyz: Sequence[float] | np.ndarray) -> np.ndarray:
    """3×3 rotation matrix of a (w, x, y, z) quaternion (normalised; (..., 4) gives (..., 3, 3)).

    Written out: this runs in the control loops (the policy's 50 Hz observation, the bridge's 500 Hz tilt
    check), and scipy's Rotation costs ~10× more (measured here: 165–180 vs 18–40 µs a call on this loaded
    2-core machine); it takes (N, 4) batches, which Pinocchio's Quaternion does not. tests/unit/test_rotations.py
    checks it against scipy's and Pinocchio's to 1e-12.
    """
    q = np.asarray(q_wxyz, dtype=float)
    if q.ndim == 1:  # one quaternion: plain floats are the fastest path
        norm = math.sqrt(float(q @ q))
        if not 0.0 < norm < math.inf:
            raise ValueError(f"not a rotation: quaternion norm {norm}")
        w, x, y, z = (float(v) / norm for v in q)
        return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                         [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    norms = np.linalg.norm(q, axis=-1, keepdims=True)
    if np.any(norms == 0.0) or not np.all(np.isfinite(norms)):
        raise ValueError("not a rotation: a quaternion norm is 0 or not finite")
    w, x, y, z = np.moveaxis(q / norms, -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=-1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=-1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1),
    ], axis=-2)


def wxyz_from_matrix(R: np.ndarray) -> np.ndarray:
    """(w, x, y, z), w ≥ 0, of a 3×3 rotation matrix; (..., 3, 3) gives (..., 4).

    MuJoCo's ``mju_mat2Quat``, a matrix at a time: 30 matrices in 65 µs, against 740 µs for scipy's
    ``Rotation.from_matrix`` in one batch (measured here under load; ~125 µs a call idle, batch or not), which cost
    robot_state a fifth of its time. Not Pinocchio's Quaternion(matrix): it leaks ~80 bytes a call (eigenpy; 8 MB per
    10⁵ calls, measured: robot_state grew 15 % in 6 min of a soak)."""
    R = np.asarray(R, dtype=float)
    flat = np.ascontiguousarray(R.reshape(-1, 9))
    q = np.empty((len(flat), 4))
    for matrix, quaternion in zip(flat, q, strict=True):
        mujoco.mju_mat2Quat(quaternion, matrix)
    q[q[:, 0] < 0.0] *= -1.0
    return q.reshape(*R.shape[:-2], 4)


def wxyz_from_rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """(w, x, y, z), w ≥ 0, of R = Rz(yaw)·Ry(pitch)·Rx(roll) (rad): roll, pitch and yaw about the fixed x, y, z
    axes (Pinocchio's ``rpy`` convention)."""
    return wxyz_from_matrix(pin.rpy.rpyToMatrix(float(roll), float(pitch), float(yaw)))


def rpy_from_wxyz(q_wxyz: Sequence[float] | np.ndarray) -> np.ndarray:
    """(roll, pitch, yaw) in rad with R = Rz(yaw)·Ry(pitch)·Rx(roll), the inverse of :func:`wxyz_from_rpy`: roll
    and yaw in [−π, π], pitch in [−π/2, π/2] (ValueError on a zero or non-finite quaternion)."""
    return np.asarray(pin.rpy.matrixToRpy(matrix_from_wxyz(q_wxyz)), dtype=float)


def yaw_from_wxyz(q_wxyz: Sequence[float] | np.ndarray) -> float:
    """Heading (rad): the yaw of R = Rz(yaw)·Ry(pitch)·Rx(roll)."""
    return float(rpy_from_wxyz(q_wxyz)[2])


def slerp_wxyz(q0_wxyz: np.ndarray, q1_wxyz: np.ndarray, s: float) -> np.ndarray:
    """Spherical interpolation from q0 (s = 0) to q1 (s = 1) along the shorter arc, (w, x, y, z), w ≥ 0.

    Eigen's (Pinocchio's Quaternion.slerp): a scenario interpolates three poses a sample, and scipy's Slerp
    costs ~390 µs a call against ~9 µs (measured here)."""
    q0, q1 = (pin.Quaternion(*(float(v) for v in q)).normalized() for q in (q0_wxyz, q1_wxyz))
    x, y, z, w = q0.slerp(min(max(float(s), 0.0), 1.0), q1).coeffs()
    q = np.array([w, x, y, z])
    return q if w >= 0.0 else -q


def rotvec_from_matrix(R: np.ndarray) -> np.ndarray:
    """Rotation vector θ·axis (rad, θ in [0, π]) of a 3×3 rotation matrix (Pinocchio's log3)."""
    return np.asarray(pin.log3(np.asarray(R, dtype=float)), dtype=float)


def matrix_from_rotvec(rotvec: Sequence[float] | np.ndarray) -> np.ndarray:
    """3×3 rotation matrix of a rotation vector θ·axis (rad; Pinocchio's exp3)."""
    return np.asarray(pin.exp3(np.asarray(rotvec, dtype=float)), dtype=float)


def gravity_in_body(world_q_body: Sequence[float] | np.ndarray) -> np.ndarray:
    """Unit gravity direction in the body frame, body_R_world·(0, 0, −1) (the 'projected gravity' of policies)."""
    return -matrix_from_wxyz(world_q_body)[..., 2, :]


def tilt(world_q_body: Sequence[float] | np.ndarray) -> float | np.ndarray:
    """Angle (rad) between the body's z axis and the world's vertical: a float for one (w, x, y, z) quaternion,
    an (N,) array for (N, 4) quaternions."""
    q = np.asarray(world_q_body, dtype=float)
    if q.ndim == 1:  # the bridge's 500 Hz check: R[2, 2] = (w² − x² − y² + z²) / |q|² in plain floats
        w, x, y, z = (float(v) for v in q)
        norm2 = w * w + x * x + y * y + z * z
        if not 0.0 < norm2 < math.inf:
            raise ValueError(f"not a rotation: quaternion norm {math.sqrt(norm2)}")
        return math.acos(min(1.0, max(-1.0, (w * w - x * x - y * y + z * z) / norm2)))
    world_z_of_body_z = matrix_from_wxyz(q)[..., 2, 2]
    return np.arccos(np.clip(world_z_of_body_z, -1.0, 1.0))


def transform(position: Sequence[float] | np.ndarray, q_wxyz: Sequence[float] | np.ndarray) -> np.ndarray:
    """4×4 homogeneous transform of a position (m) and a (w, x, y, z) orientation."""
    T = np.eye(4)
    T[:3, :3] = matrix_from_wxyz(q_wxyz)
    T[:3, 3] = position
    return T


def position_wxyz(T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position (3,) m, orientation (w, x, y, z)) of a 4×4 homogeneous transform."""
    return np.array(T[:3, 3], dtype=float), wxyz_from_matrix(T[:3, :3])
