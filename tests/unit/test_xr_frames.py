"""XR conventions (televuer's tv_wrapper.py): basis change, wrist conventions, head-relative IK targets,
validity test and fallbacks; robot_to_openxr inverts openxr_to_robot."""

from __future__ import annotations

import numpy as np
import pytest

from g1_teleop.operator.xr_frames import (
    DEFAULT_WORLD_T_HEAD,
    HEAD_IN_NECK,
    IK_ORIGIN_IN_HEAD_FRAME,
    LEFT_WRIST_CONVENTION,
    RIGHT_WRIST_CONVENTION,
    ROBOT_R_OPENXR,
    WRIST_R_HAND,
    BodyReference,
    XrPoses,
    _to_robot_basis,
    hand_points_in_wrist,
    ik_T_world,
    is_valid_pose,
    openxr_to_robot,
    robot_to_openxr,
)


def pose(R: np.ndarray, p: tuple[float, float, float]) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def rot_x(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q @ np.diag(np.sign(np.diag(r)))
    return q if np.linalg.det(q) > 0 else -q


def test_basis_change_maps_openxr_axes_to_robot_axes() -> None:
    # OpenXR x right, y up, z backward; robot x forward, y left, z up.
    # columns: where OpenXR right, up and backward point in robot axes
    np.testing.assert_array_equal(ROBOT_R_OPENXR, np.column_stack([[0, -1, 0], [0, 0, 1], [-1, 0, 0]]))
    assert np.linalg.det(ROBOT_R_OPENXR) == pytest.approx(1.0)


def test_wrist_conventions_are_quarter_turns_about_x() -> None:
    assert rot_x(np.pi / 2) == pytest.approx(LEFT_WRIST_CONVENTION)
    assert rot_x(-np.pi / 2) == pytest.approx(RIGHT_WRIST_CONVENTION)


def test_hand_computed_pipeline() -> None:
    # Head 1.6 m up at the XR origin; left wrist 0.2 m left of it, 0.4 m lower, 0.4 m forward; both with
    # the identity rotation (in OpenXR: fingers forward (−z), back of the hand up (+y): palm down).
    xr = XrPoses(pose(np.eye(3), (0, 1.6, 0)), pose(np.eye(3), (-0.2, 1.2, -0.4)), pose(np.eye(3), (0.3, 1.0, -0.5)))
    robot = openxr_to_robot(xr)
    assert robot.world_T_head == pytest.approx(pose(np.eye(3), (0, 0, 1.6)))
    # head-relative (0.4, 0.2, −0.4), then + (0.15, 0, 0.45)
    assert robot.pelvis_T_left_wrist[:3, 3] == pytest.approx([0.55, 0.2, 0.05])
    assert robot.pelvis_T_right_wrist[:3, 3] == pytest.approx([0.65, -0.3, -0.15])
    # Unitree wrist axes: x toward the fingers (forward); left: y palm→back (up), z pinky→index (right);
    # right: y back→palm (down), z pinky→index (left).
    left, right = robot.pelvis_T_left_wrist[:3, :3], robot.pelvis_T_right_wrist[:3, :3]
    assert left[:, 0] == pytest.approx([1, 0, 0]) and right[:, 0] == pytest.approx([1, 0, 0])
    assert left[:, 1] == pytest.approx([0, 0, 1]) and left[:, 2] == pytest.approx([0, -1, 0])
    assert right[:, 1] == pytest.approx([0, 0, -1]) and right[:, 2] == pytest.approx([0, 1, 0])
    assert (robot.head_valid, robot.left_valid, robot.right_valid) == (True, True, True)


def test_basis_change_of_a_rotation_is_a_similarity_transform() -> None:
    # A wrist turned 90° about OpenXR's up axis (y) is turned 90° about the robot's up axis (z).
    xr = XrPoses(np.eye(4), pose(rot_y(np.pi / 2), (0, 0, 0)), np.eye(4))
    robot = openxr_to_robot(xr, hand_tracking=False)
    expected = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]])  # Rz(90°)
    assert robot.pelvis_T_left_wrist[:3, :3] == pytest.approx(expected)


def test_head_rotation_is_not_removed_from_wrist_targets() -> None:
    wrist = pose(np.eye(3), (-0.2, 1.2, -0.4))
    still = openxr_to_robot(XrPoses(pose(np.eye(3), (0, 1.6, 0)), wrist, wrist))
    turned = openxr_to_robot(XrPoses(pose(rot_y(0.7), (0, 1.6, 0)), wrist, wrist))
    assert turned.pelvis_T_left_wrist == pytest.approx(still.pelvis_T_left_wrist)
    assert turned.world_T_head[:3, :3] != pytest.approx(still.world_T_head[:3, :3])


def test_controllers_skip_the_wrist_convention() -> None:
    xr = XrPoses(np.eye(4), pose(np.eye(3), (0, 1, 0)), pose(np.eye(3), (0, 1, 0)))
    robot = openxr_to_robot(xr, hand_tracking=False)
    assert robot.pelvis_T_left_wrist[:3, :3] == pytest.approx(np.eye(3))
    assert robot.pelvis_T_right_wrist[:3, :3] == pytest.approx(np.eye(3))


def test_invalid_poses_fall_back_to_constants() -> None:
    robot = openxr_to_robot(XrPoses(np.zeros((4, 4)), np.full((4, 4), np.nan), np.zeros((4, 4))))
    assert (robot.head_valid, robot.left_valid, robot.right_valid) == (False, False, False)
    assert robot.world_T_head == pytest.approx(DEFAULT_WORLD_T_HEAD)
    np.testing.assert_allclose(DEFAULT_WORLD_T_HEAD, pose(np.eye(3), (0.2, 0.0, 1.5)), atol=1e-15)
    # fallback wrists, identity rotation (no wrist convention on an invalid wrist), in the IK frame
    assert robot.pelvis_T_left_wrist == pytest.approx(pose(np.eye(3), (0.25, 0.15, 0.08)))
    assert robot.pelvis_T_right_wrist == pytest.approx(pose(np.eye(3), (0.25, -0.15, 0.08)))


def test_one_invalid_wrist_keeps_the_others() -> None:
    head = pose(np.eye(3), (0, 1.6, 0))
    robot = openxr_to_robot(XrPoses(head, np.zeros((4, 4)), pose(np.eye(3), (0.3, 1.0, -0.5))))
    assert (robot.head_valid, robot.left_valid, robot.right_valid) == (True, False, True)
    # fallback left wrist relative to the reported head: (0.3, 0.15, 1.13) − (0, 0, 1.6) + shift
    assert robot.pelvis_T_left_wrist[:3, 3] == pytest.approx([0.45, 0.15, -0.02])
    assert robot.pelvis_T_right_wrist[:3, 3] == pytest.approx([0.65, -0.3, -0.15])


@pytest.mark.parametrize(
    ("matrix", "valid"),
    [
        (np.eye(4), True),
        (np.diag([0.02, 0.02, 0.02, 1.0]), True),  # det 8e-6
        (np.diag([0.009, 0.009, 0.009, 1.0]), False),  # det 7.3e-7 ≤ 1e-6
        (np.zeros((4, 4)), False),
        (np.full((4, 4), np.inf), False),
    ],
)
def test_validity_test(matrix: np.ndarray, valid: bool) -> None:
    assert is_valid_pose(matrix) is valid


def test_rejects_a_pose_of_the_wrong_shape() -> None:
    with pytest.raises(ValueError, match=r"4x4 pose matrix, got shape \(3, 3\)"):
        openxr_to_robot(XrPoses(np.eye(3), np.eye(4), np.eye(4)))


@pytest.mark.parametrize("hand_tracking", [True, False])
def test_round_trip(hand_tracking: bool) -> None:
    rng = np.random.default_rng(7)
    for _ in range(50):
        head = pose(random_rotation(rng), tuple(rng.uniform(-2, 2, 3)))
        left = pose(random_rotation(rng), tuple(rng.uniform(-1, 1, 3)))
        right = pose(random_rotation(rng), tuple(rng.uniform(-1, 1, 3)))
        xr = robot_to_openxr(head, left, right, hand_tracking=hand_tracking)
        back = openxr_to_robot(xr, hand_tracking=hand_tracking)
        assert np.abs(back.world_T_head - head).max() < 1e-9
        assert np.abs(back.pelvis_T_left_wrist - left).max() < 1e-9
        assert np.abs(back.pelvis_T_right_wrist - right).max() < 1e-9
        # and the other way: headset poses → robot → headset poses
        again = robot_to_openxr(back.world_T_head, back.pelvis_T_left_wrist, back.pelvis_T_right_wrist,
                                hand_tracking=hand_tracking)
        for a, b in zip((again.xr_T_head, again.xr_T_left_wrist, again.xr_T_right_wrist),
                        (xr.xr_T_head, xr.xr_T_left_wrist, xr.xr_T_right_wrist), strict=True):
            assert np.abs(a - b).max() < 1e-9


def test_headset_poses_of_robot_targets_are_in_the_openxr_basis() -> None:
    # The IK-frame target (0.55, 0.2, 0.05) with the head 1.6 m up is 0.4 m in front of the head,
    # 0.2 m to its left and 0.4 m below it: OpenXR (−0.2, 1.2, −0.4).
    head = pose(np.eye(3), (0, 0, 1.6))
    xr = robot_to_openxr(head, pose(LEFT_WRIST_CONVENTION, (0.55, 0.2, 0.05)), np.eye(4))
    assert xr.xr_T_head == pytest.approx(pose(np.eye(3), (0, 1.6, 0)))
    assert xr.xr_T_left_wrist == pytest.approx(pose(np.eye(3), (-0.2, 1.2, -0.4)))
    np.testing.assert_array_equal(IK_ORIGIN_IN_HEAD_FRAME, [0.15, 0.0, 0.45])


# -- hand landmarks -------------------------------------------------------------------------------

def test_hand_points_go_into_the_unitree_hand_frame():
    # Identity wrist at (0.1, 1.0, −0.3) (OpenXR); a fingertip 10 cm ahead of it along −z_xr (forward).
    xr_T_wrist = pose(np.eye(3), (0.1, 1.0, -0.3))
    points = np.array([[0.1, 1.0, -0.3], [0.1, 1.0, -0.4], [0.1, 1.1, -0.3]])
    # Robot basis: the fingertip is 0.1 m along +x of the wrist, the third point 0.1 m along +z (up).
    # C_hand = rows [0 0 1; −1 0 0; 0 −1 0]: +x → (0, −0.1, 0) (y: middle→wrist), +z → (0.1, 0, 0).
    np.testing.assert_allclose(
        hand_points_in_wrist(xr_T_wrist, points), [[0, 0, 0], [0, -0.1, 0], [0.1, 0, 0]], atol=1e-12
    )


def test_hand_points_follow_the_wrist_rotation_and_vanish_with_an_invalid_wrist():
    rng = np.random.default_rng(3)
    R = random_rotation(rng)
    xr_T_wrist = pose(R, (0.2, 1.1, -0.4))
    local = rng.normal(size=(25, 3)) * 0.05  # landmarks in the wrist's own OpenXR axes
    points = local @ R.T + xr_T_wrist[:3, 3]
    # Rotating wrist and landmarks together changes nothing in the hand frame.
    expected = hand_points_in_wrist(pose(np.eye(3), (0, 0, 0)), local)
    np.testing.assert_allclose(hand_points_in_wrist(xr_T_wrist, points), expected, atol=1e-12)
    assert not np.any(hand_points_in_wrist(np.zeros((4, 4)), points))


# -- body-fixed reference ----------------------------------------------------------------------------

def head_about_neck(world_T_head0: np.ndarray, R: np.ndarray) -> np.ndarray:
    """The head pose after turning by R about the neck pivot (robot basis)."""
    pivot = world_T_head0[:3, 3] - world_T_head0[:3, :3] @ HEAD_IN_NECK
    turned = world_T_head0.copy()
    turned[:3, :3] = R @ world_T_head0[:3, :3]
    turned[:3, 3] = pivot + turned[:3, :3] @ HEAD_IN_NECK
    return turned


def xr(world_T_head, left, right) -> XrPoses:
    """Headset report for head and wrists given in the robot basis (controllers: no wrist convention)."""
    to_xr = np.eye(4)
    to_xr[:3, :3] = ROBOT_R_OPENXR.T
    return XrPoses(to_xr @ world_T_head @ to_xr.T, to_xr @ left @ to_xr.T, to_xr @ right @ to_xr.T)


WORLD_T_LEFT = pose(rot_x(0.3), (0.55, 0.2, 1.1))
WORLD_T_RIGHT = pose(rot_y(-0.2), (0.5, -0.25, 1.2))


def test_body_reference_equals_head_mode_at_the_neutral_posture():
    body = BodyReference.calibrate(DEFAULT_WORLD_T_HEAD)
    report = xr(DEFAULT_WORLD_T_HEAD, WORLD_T_LEFT, WORLD_T_RIGHT)
    head_mode = openxr_to_robot(report, hand_tracking=False)
    body_mode = openxr_to_robot(report, hand_tracking=False, body=body)
    np.testing.assert_allclose(body_mode.pelvis_T_left_wrist, head_mode.pelvis_T_left_wrist, atol=1e-12)
    np.testing.assert_allclose(body_mode.pelvis_T_right_wrist, head_mode.pelvis_T_right_wrist, atol=1e-12)


def test_turning_the_head_moves_head_mode_targets_but_not_body_mode_ones():
    body = BodyReference.calibrate(DEFAULT_WORLD_T_HEAD)
    turned = head_about_neck(DEFAULT_WORLD_T_HEAD, rot_y(0.4) @ np.array(
        [[np.cos(0.6), -np.sin(0.6), 0], [np.sin(0.6), np.cos(0.6), 0], [0, 0, 1]]))  # look down-left
    before = xr(DEFAULT_WORLD_T_HEAD, WORLD_T_LEFT, WORLD_T_RIGHT)
    after = xr(turned, WORLD_T_LEFT, WORLD_T_RIGHT)
    moved = (openxr_to_robot(after, hand_tracking=False).pelvis_T_left_wrist
             - openxr_to_robot(before, hand_tracking=False).pelvis_T_left_wrist)
    assert np.linalg.norm(moved[:3, 3]) > 0.03  # the head-relative targets follow the head
    np.testing.assert_allclose(openxr_to_robot(after, False, body).pelvis_T_left_wrist,
                               openxr_to_robot(before, False, body).pelvis_T_left_wrist, atol=1e-12)


def test_walking_carries_the_body_frame_along():
    body = BodyReference.calibrate(DEFAULT_WORLD_T_HEAD)
    step = pose(np.eye(3), (0.7, -0.3, 0.0))  # the operator walked; hands kept in front of the body
    before = openxr_to_robot(xr(DEFAULT_WORLD_T_HEAD, WORLD_T_LEFT, WORLD_T_RIGHT), False, body)
    after = openxr_to_robot(xr(step @ DEFAULT_WORLD_T_HEAD, step @ WORLD_T_LEFT, step @ WORLD_T_RIGHT), False, body)
    np.testing.assert_allclose(after.pelvis_T_right_wrist, before.pelvis_T_right_wrist, atol=1e-12)


def test_calibrated_heading_makes_the_operators_forward_the_robots_forward():
    yaw = np.pi / 2  # the operator faces the headset world's +y (robot basis) at calibration
    Rz = np.array([[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1]])
    head = pose(Rz, (0.0, 0.0, 1.5))
    body = BodyReference.calibrate(head)
    ahead = pose(Rz, (0.0, 0.4, 1.5 - 0.11))  # a hand 0.4 m in front of the head, at neck-pivot height
    targets = openxr_to_robot(xr(head, ahead, ahead), hand_tracking=False, body=body)
    # Neck pivot = (0, 0, 1.5) − Rz·(0.08, 0, 0.11) = (0, −0.08, 1.39): the hand is 0.48 m ahead of it, in
    # the operator's heading. Plus IK_ORIGIN_IN_HEAD_FRAME − HEAD_IN_NECK = (0.07, 0, 0.34):
    np.testing.assert_allclose(targets.pelvis_T_left_wrist[:3, 3], [0.55, 0.0, 0.34], atol=1e-12)
    np.testing.assert_allclose(targets.pelvis_T_left_wrist[:3, :3], np.eye(3), atol=1e-12)


def test_body_mode_round_trip():
    rng = np.random.default_rng(11)
    head = pose(random_rotation(rng), (0.1, -0.2, 1.6))
    body = BodyReference.calibrate(pose(np.eye(3), (0, 0, 1.5)))
    left, right = pose(random_rotation(rng), (0.3, 0.2, 0.1)), pose(random_rotation(rng), (0.35, -0.2, 0.0))
    for hand_tracking in (True, False):
        back = openxr_to_robot(robot_to_openxr(head, left, right, hand_tracking, body), hand_tracking, body)
        np.testing.assert_allclose(back.pelvis_T_left_wrist, left, atol=1e-9)
        np.testing.assert_allclose(back.pelvis_T_right_wrist, right, atol=1e-9)


def test_body_calibration_needs_a_heading():
    with pytest.raises(ValueError, match="straight up or down"):
        BodyReference.calibrate(pose(rot_y(np.pi / 2), (0, 0, 1.5)))


@pytest.mark.parametrize("wrist_reference", ["head", "body"])
def test_the_landmarks_frame_is_the_wrist_target_turned_by_wrist_r_hand(wrist_reference: str) -> None:
    # xr/*_hand's landmarks put through pelvis_T_wrist_target · WRIST_R_HAND (robot_state's pelvis → xr_*_hand)
    # land where the headset's points are in the pelvis frame: that rotation names the frame the numbers are in.
    rng = np.random.default_rng(3)
    for _ in range(20):
        head, left, right = (pose(random_rotation(rng), rng.uniform(-1, 1, 3)) for _ in range(3))
        head[1, 3] += 1.6
        xr = XrPoses(head, left, right)
        world_T_head = _to_robot_basis(xr.xr_T_head)
        body = BodyReference.calibrate(world_T_head) if wrist_reference == "body" else None
        robot = openxr_to_robot(xr, body=body)
        pelvis_T_world = ik_T_world(world_T_head, body)
        for side, xr_T_wrist, pelvis_T_target in (("left", xr.xr_T_left_wrist, robot.pelvis_T_left_wrist),
                                                  ("right", xr.xr_T_right_wrist, robot.pelvis_T_right_wrist)):
            xr_points = rng.uniform(-1, 1, (25, 3))
            landmarks = hand_points_in_wrist(xr_T_wrist, xr_points)
            pelvis_T_hand = pelvis_T_target.copy()
            pelvis_T_hand[:3, :3] = pelvis_T_target[:3, :3] @ WRIST_R_HAND[side]
            in_pelvis = landmarks @ pelvis_T_hand[:3, :3].T + pelvis_T_hand[:3, 3]
            expected = (xr_points @ ROBOT_R_OPENXR.T) @ pelvis_T_world[:3, :3].T + pelvis_T_world[:3, 3]
            np.testing.assert_allclose(in_pelvis, expected, atol=1e-9, err_msg=side)
            assert np.linalg.det(WRIST_R_HAND[side]) == pytest.approx(1.0)
