"""XR headset poses ↔ robot-frame wrist targets: the pipeline of televuer's ``TeleVuerWrapper``
(unitreerobotics/televuer, src/televuer/tv_wrapper.py; OpenWBT and xr_teleoperate use it), its
``arm_reference_mode="head_position"``.

OpenXR basis: x right, y up, z backward. Robot basis: x forward, y left, z up. A headset reports its head
and wrist poses in its own world frame, OpenXR basis. ``openxr_to_robot`` is the pipeline a real
headset's data goes through:

1. change of basis of every pose: M_robot = robot_T_openxr · M_xr · openxr_T_robot (tv_wrapper's
   T_ROBOT_OPENXR, T_OPENXR_ROBOT);
2. wrist convention: W' = W · C_side (hand tracking only; controllers already report Unitree wrist axes;
   T_TO_UNITREE_HUMANOID_LEFT_ARM / _RIGHT_ARM);
3. translation only, head-relative: p(W') −= p(H) (the head rotation is not removed);
4. shift to the IK frame (the pelvis): p(W') += IK_ORIGIN_IN_HEAD_FRAME (steps 3–4:
   transform_IPunitree_Brobot_world_arm_to_head_then_waist).

Steps 3–4 make the arms follow the head: turning the head moves the eyes about the neck, and the
targets with them. With a ``BodyReference`` the wrists are instead taken relative to a body-fixed
frame: the neck pivot under the head (so turning the head does not move the targets and walking
carries the frame along) with the operator's heading captured at calibration (so the operator need not
face the headset's forward axis). At the neutral posture, facing that heading, both give the same
targets.

Hand landmarks (25 per hand, WebXR joint order, https://immersive-web.github.io/webxr-hand-input/) go into
the Unitree hand frame with ``hand_points_in_wrist``: the wrist target's frame turned by ``WRIST_R_HAND``.
The OpenXR hand-joint axes of a wrist (+Z from the middle finger's metacarpal back to the wrist, +Y out of
the back of the hand) are those of the OpenXR specification, XR_EXT_hand_tracking (https://registry.khronos.org/OpenXR/specs/1.1/man/html/openxr.html).

Poses that fail the validity test (tv_wrapper's safe_mat_update) are replaced by fixed fallback poses
(CONST_HEAD_POSE, CONST_LEFT_ARM_POSE, CONST_RIGHT_ARM_POSE) before step 1, and an invalid wrist skips
step 2. ``robot_to_openxr`` is the exact inverse for valid poses: it builds what a headset
would report for given pelvis-frame wrist targets and a head pose.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from g1_teleop.core.rotations import matrix_from_wxyz, wxyz_from_rpy

ROBOT_R_OPENXR = np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
"""Rotation taking OpenXR-basis coordinates to robot-basis coordinates: (x, y, z)_xr → (−z, −x, y)."""

LEFT_WRIST_CONVENTION = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
"""Left wrist convention C_left (+90° about the wrist's own x), right-multiplied: W' = W·C_left."""

RIGHT_WRIST_CONVENTION = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
"""Right wrist convention C_right (−90° about the wrist's own x), right-multiplied: W' = W·C_right."""

IK_ORIGIN_IN_HEAD_FRAME = np.array([0.15, 0.0, 0.45])
"""Added to head-relative wrist positions (robot basis, m) to express them in the pelvis/IK frame."""

HEAD_IN_NECK = np.array([0.08, 0.0, 0.11])
"""The head pose's origin (between the eyes) seen from the neck pivot, head axes, robot basis (m): a
typical adult figure. Used by BodyReference only."""

HAND_KEYPOINT_CONVENTION = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
"""C_hand, left-multiplied on wrist-frame landmark positions to give the Unitree hand frame (tv_wrapper's
T_TO_UNITREE_HAND)."""

WRIST_R_HAND = {"left": (HAND_KEYPOINT_CONVENTION @ LEFT_WRIST_CONVENTION).T,
                "right": (HAND_KEYPOINT_CONVENTION @ RIGHT_WRIST_CONVENTION).T}
"""Rotation of the hand frame (the landmarks' of ``hand_points_in_wrist``) in the wrist target's frame, per side:
both come from the same OpenXR wrist W (hand tracking): target W·C_side, landmarks C_hand·W⁻¹·P, so the hand frame
is the target's turned by (C_hand·C_side)ᵀ, same origin (the wrist joint). robot_state puts it on /tf."""

VALIDITY_DETERMINANT = 1e-6
"""A pose matrix is valid when its determinant is finite and larger than this in magnitude (televuer)."""


def _translation(x: float, y: float, z: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


FALLBACK_HEAD_OPENXR = _translation(0.0, 1.5, -0.2)
"""Head pose used while the headset reports an invalid one (OpenXR basis, m)."""
FALLBACK_LEFT_WRIST_OPENXR = _translation(-0.15, 1.13, -0.3)
"""Left wrist pose used while the headset reports an invalid one (OpenXR basis, m)."""
FALLBACK_RIGHT_WRIST_OPENXR = _translation(0.15, 1.13, -0.3)
"""Right wrist pose used while the headset reports an invalid one (OpenXR basis, m)."""

_ROBOT_T_OPENXR = np.eye(4)
_ROBOT_T_OPENXR[:3, :3] = ROBOT_R_OPENXR
_OPENXR_T_ROBOT = _ROBOT_T_OPENXR.T.copy()  # a pure rotation: inverse = transpose

DEFAULT_WORLD_T_HEAD = _ROBOT_T_OPENXR @ FALLBACK_HEAD_OPENXR @ _OPENXR_T_ROBOT
"""The fallback head pose in the robot basis: 0.2 m forward, 1.5 m up, identity rotation."""


@dataclass(frozen=True)
class XrPoses:
    """Poses as a headset reports them: 4x4, metres, headset world frame, OpenXR basis.

    Wrist axes follow the OpenXR hand-joint convention for hand tracking, or the Unitree wrist
    convention for controllers.
    """

    xr_T_head: np.ndarray
    xr_T_left_wrist: np.ndarray
    xr_T_right_wrist: np.ndarray


@dataclass(frozen=True)
class RobotPoses:
    """Poses after the pipeline: 4x4, metres, robot basis.

    world_T_head: the head in the headset's world frame, robot basis. pelvis_T_*_wrist: wrist targets in
    the pelvis/IK frame with Unitree wrist axes (x toward the middle finger; left: y palm→back; right:
    y back→palm). The *_valid flags say whether the headset's pose was used (True) or the fallback.
    """

    world_T_head: np.ndarray
    pelvis_T_left_wrist: np.ndarray
    pelvis_T_right_wrist: np.ndarray
    head_valid: bool = True
    left_valid: bool = True
    right_valid: bool = True


@dataclass(frozen=True)
class BodyReference:
    """A body-fixed reference for the wrists: the neck pivot, with a heading fixed at calibration.

    world_R_heading: rotation about z (robot basis) of the operator's forward direction.
    """

    world_R_heading: np.ndarray

    @classmethod
    def calibrate(cls, world_T_head: np.ndarray) -> BodyReference:
        """Take the heading from the head's forward axis (its x axis, robot basis) projected on the floor."""
        forward = np.asarray(world_T_head, dtype=float)[:3, 0]
        if np.hypot(forward[0], forward[1]) < 1e-3:
            raise ValueError("cannot calibrate the body heading while the head looks straight up or down")
        yaw = float(np.arctan2(forward[1], forward[0]))
        return cls(matrix_from_wxyz(wxyz_from_rpy(0.0, 0.0, yaw)))


def ik_T_world(world_T_head: np.ndarray, body: BodyReference | None = None) -> np.ndarray:
    """The transform that takes wrist poses in the headset world (robot basis) to the pelvis/IK frame.

    Head-relative (body None, OpenWBT/televuer): a translation by IK_ORIGIN_IN_HEAD_FRAME − p(head).
    Body-relative: into the body frame at the neck pivot, then the same origin shift as seen from the pivot.
    """
    world_T_head = np.asarray(world_T_head, dtype=float)
    ik_T = np.eye(4)
    if body is None:
        ik_T[:3, 3] = IK_ORIGIN_IN_HEAD_FRAME - world_T_head[:3, 3]
        return ik_T
    world_p_pivot = world_T_head[:3, 3] - world_T_head[:3, :3] @ HEAD_IN_NECK
    heading_R_world = body.world_R_heading.T
    ik_T[:3, :3] = heading_R_world
    ik_T[:3, 3] = IK_ORIGIN_IN_HEAD_FRAME - HEAD_IN_NECK - heading_R_world @ world_p_pivot
    return ik_T


def hand_points_in_wrist(xr_T_wrist: np.ndarray, xr_points: np.ndarray) -> np.ndarray:
    """Hand landmarks (N, 3) in the headset world (OpenXR basis, m) → the Unitree hand frame (N, 3).

    P_robot = basis change of the points; P_wrist = W⁻¹·P_robot with the wrist pose W in the robot basis
    *before* the wrist convention; then C_hand·P_wrist (as tv_wrapper.py). An invalid wrist gives zeros
    (televuer).
    """
    points = np.asarray(xr_points, dtype=float)
    if points.ndim != 2 or points.shape[1] != 3:
        raise ValueError(f"hand landmarks must have shape (N, 3), got {points.shape}")
    if not is_valid_pose(xr_T_wrist):
        return np.zeros_like(points)
    world_T_wrist = _to_robot_basis(np.asarray(xr_T_wrist, dtype=float))
    world_points = points @ ROBOT_R_OPENXR.T
    wrist_points = (world_points - world_T_wrist[:3, 3]) @ world_T_wrist[:3, :3]
    return wrist_points @ HAND_KEYPOINT_CONVENTION.T


def is_valid_pose(M: np.ndarray) -> bool:
    """televuer's validity test for a reported 4x4 pose: finite determinant larger than 1e-6 in magnitude."""
    with np.errstate(invalid="ignore"):
        det = np.linalg.det(np.asarray(M, dtype=float))
    return bool(np.isfinite(det) and abs(det) > VALIDITY_DETERMINANT)


def openxr_to_robot(xr: XrPoses, hand_tracking: bool = True, body: BodyReference | None = None) -> RobotPoses:
    """Headset poses → head pose and pelvis-frame wrist targets (steps 1–4 of the module docstring).

    hand_tracking: True for OpenXR hand-joint wrists (the wrist convention is applied), False for
    controller poses (already in the Unitree wrist convention). body: wrists relative to this body-fixed
    reference instead of the head (see the module docstring).
    """
    head_valid, xr_T_head = _valid_or(xr.xr_T_head, FALLBACK_HEAD_OPENXR)
    world_T_head = _to_robot_basis(xr_T_head)
    ik_T = ik_T_world(world_T_head, body)
    wrists = []
    flags = []
    for reported, fallback, convention in (
        (xr.xr_T_left_wrist, FALLBACK_LEFT_WRIST_OPENXR, LEFT_WRIST_CONVENTION),
        (xr.xr_T_right_wrist, FALLBACK_RIGHT_WRIST_OPENXR, RIGHT_WRIST_CONVENTION),
    ):
        valid, xr_T_wrist = _valid_or(reported, fallback)
        world_T_wrist = _to_robot_basis(xr_T_wrist)
        if valid and hand_tracking:
            world_T_wrist[:3, :3] = world_T_wrist[:3, :3] @ convention
        wrists.append(ik_T @ world_T_wrist)
        flags.append(valid)
    return RobotPoses(world_T_head, wrists[0], wrists[1], head_valid, flags[0], flags[1])


def robot_to_openxr(
    world_T_head: np.ndarray,
    pelvis_T_left_wrist: np.ndarray,
    pelvis_T_right_wrist: np.ndarray,
    hand_tracking: bool = True,
    body: BodyReference | None = None,
) -> XrPoses:
    """The poses a headset would report for this head pose (robot basis) and these pelvis-frame wrist
    targets; ``openxr_to_robot`` of the result (same hand_tracking and body) gives the inputs back."""
    world_T_head = np.asarray(world_T_head, dtype=float)
    world_T_ik = np.linalg.inv(ik_T_world(world_T_head, body))
    xr_wrists = []
    for pelvis_T_wrist, convention in (
        (pelvis_T_left_wrist, LEFT_WRIST_CONVENTION),
        (pelvis_T_right_wrist, RIGHT_WRIST_CONVENTION),
    ):
        world_T_wrist = world_T_ik @ np.asarray(pelvis_T_wrist, dtype=float)
        if hand_tracking:
            world_T_wrist[:3, :3] = world_T_wrist[:3, :3] @ convention.T
        xr_wrists.append(_to_openxr_basis(world_T_wrist))
    return XrPoses(_to_openxr_basis(world_T_head), xr_wrists[0], xr_wrists[1])


def _valid_or(reported: np.ndarray, fallback: np.ndarray) -> tuple[bool, np.ndarray]:
    M = np.asarray(reported, dtype=float)
    if M.shape != (4, 4):
        raise ValueError(f"expected a 4x4 pose matrix, got shape {M.shape}")
    return (True, M) if is_valid_pose(M) else (False, fallback)


def _to_robot_basis(xr_M: np.ndarray) -> np.ndarray:
    return _ROBOT_T_OPENXR @ xr_M @ _OPENXR_T_ROBOT


def _to_openxr_basis(robot_M: np.ndarray) -> np.ndarray:
    return _OPENXR_T_ROBOT @ robot_M @ _ROBOT_T_OPENXR
