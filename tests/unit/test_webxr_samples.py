"""Headset events → operator samples in the robot's frames: through xr_frames' conversion, landmarks in the
Unitree hand frame, validity of missing poses, the Joy reading, stamps. Events are built by the simulated page
and decoded as vuer's server decodes them."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest

from g1_teleop.core.rotations import matrix_from_wxyz, wxyz_from_rpy
from g1_teleop.core.xr_input_contract import JoyButton
from g1_teleop.operator.webxr_client import ControllerInput, camera_move, controller_move, encode, hand_move
from g1_teleop.operator.webxr_client import synthetic_hand as hand
from g1_teleop.operator.webxr_events import parse_event
from g1_teleop.operator.webxr_samples import SampleAssembler
from g1_teleop.operator.xr_frames import (
    HAND_KEYPOINT_CONVENTION,
    ROBOT_R_OPENXR,
    BodyReference,
    XrPoses,
    openxr_to_robot,
    robot_to_openxr,
)
from g1_teleop.operator.xr_joy import XrJoyConfig

FLOAT32 = 1e-6  # poses travel as float32


def pose(x: float, y: float, z: float, roll: float = 0.0, pitch: float = 0.0, yaw: float = 0.0) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = matrix_from_wxyz(wxyz_from_rpy(roll, pitch, yaw))
    T[:3, 3] = (x, y, z)
    return T


HEAD = pose(0.05, 0.0, 1.55, yaw=0.3)
LEFT, RIGHT = pose(0.3, 0.25, 0.1, 0.2, -0.4, 0.1), pose(0.35, -0.2, 0.05, -0.3, 0.1, -0.2)


def wire(event: dict):
    """The event through msgpack as the client encodes it and vuer's server decodes it, then parsed."""
    payload = msgpack.unpackb(encode(event), raw=False)
    return parse_event(payload["etype"], payload["value"], payload.get("ts"))


def test_hand_tracking_sample_matches_the_robot_targets() -> None:
    xr = robot_to_openxr(HEAD, LEFT, RIGHT, hand_tracking=True)
    assembler = SampleAssembler("hands", XrJoyConfig())
    assert assembler.put(wire(camera_move(xr.xr_T_head)), 10.0) is None  # the head alone makes no sample
    sample = assembler.put(wire(hand_move(hand(xr.xr_T_left_wrist), hand(xr.xr_T_right_wrist, 0.01),
                                          1717000000250.0)), 10.02)
    assert sample.valid and sample.seq == 1
    assert (sample.received_s, sample.head_age_s) == (10.02, pytest.approx(0.02))
    assert sample.device_time_s == pytest.approx(1717000000.25)
    np.testing.assert_allclose(sample.poses.world_T_head, HEAD, atol=FLOAT32)
    np.testing.assert_allclose(sample.poses.pelvis_T_left_wrist, LEFT, atol=FLOAT32)
    np.testing.assert_allclose(sample.poses.pelvis_T_right_wrist, RIGHT, atol=FLOAT32)
    assert sample.joy.pressed(JoyButton.RIGHT_TRIGGER) and not sample.joy.pressed(JoyButton.LEFT_TRIGGER)
    frame = sample.frame()
    np.testing.assert_allclose(frame.left_wrist[:3], LEFT[:3, 3], atol=FLOAT32)
    assert frame.joy_buttons == sample.joy.buttons


def test_hand_landmarks_in_the_unitree_hand_frame() -> None:
    """A landmark at offset o in the OpenXR wrist frame is C_hand·R_robot←openxr·o in the Unitree hand frame,
    wherever the hand is."""
    xr = robot_to_openxr(HEAD, LEFT, RIGHT)
    left_joints = hand(xr.xr_T_left_wrist, 0.05)
    offsets = (left_joints[:, :3, 3] - left_joints[0, :3, 3]) @ left_joints[0, :3, :3]
    assembler = SampleAssembler("hands", XrJoyConfig())
    assembler.put(wire(camera_move(xr.xr_T_head)), 0.0)
    sample = assembler.put(wire(hand_move(left_joints, None, 1.0)), 0.0)
    expected = offsets @ (HAND_KEYPOINT_CONVENTION @ ROBOT_R_OPENXR).T
    np.testing.assert_allclose(sample.left_hand_points, expected, atol=1e-6)
    assert sample.left_hand_points.shape == (25, 3)
    assert sample.right_hand_points is None and not sample.poses.right_valid and not sample.valid


def test_controller_sample_takes_poses_without_the_wrist_convention() -> None:
    xr = robot_to_openxr(HEAD, LEFT, RIGHT, hand_tracking=False)
    assembler = SampleAssembler("controllers", XrJoyConfig())
    assembler.put(wire(camera_move(xr.xr_T_head)), 0.0)
    event = controller_move(ControllerInput(xr.xr_T_left_wrist, thumbstick=(0.0, -1.0)),
                            ControllerInput(xr.xr_T_right_wrist, a=True), 1717000000000.0)
    sample = assembler.put(wire(event), 0.01)
    assert sample.valid
    np.testing.assert_allclose(sample.poses.pelvis_T_left_wrist, LEFT, atol=FLOAT32)
    np.testing.assert_allclose(sample.poses.pelvis_T_right_wrist, RIGHT, atol=FLOAT32)
    assert sample.joy.pressed(JoyButton.A) and sample.joy.axes[1] == 1.0  # stick forward
    assert sample.left_hand_points is None and sample.right_hand_points is None


def test_without_a_head_pose_the_sample_is_not_valid() -> None:
    xr = robot_to_openxr(HEAD, LEFT, RIGHT)
    sample = SampleAssembler("hands", XrJoyConfig()).put(
        wire(hand_move(hand(xr.xr_T_left_wrist), hand(xr.xr_T_right_wrist), 1.0)), 0.0)
    assert not sample.poses.head_valid and not sample.valid and sample.head_age_s is None


def test_events_of_the_other_input_make_no_sample() -> None:
    xr = robot_to_openxr(HEAD, LEFT, RIGHT)
    hands_event = wire(hand_move(hand(xr.xr_T_left_wrist), hand(xr.xr_T_right_wrist), 1.0))
    controllers_event = wire(controller_move(ControllerInput(np.eye(4)), None, 1.0))
    assert SampleAssembler("controllers", XrJoyConfig()).put(hands_event, 0.0) is None
    assert SampleAssembler("hands", XrJoyConfig()).put(controllers_event, 0.0) is None
    with pytest.raises(ValueError, match="input must be hands or controllers"):
        SampleAssembler("gloves", XrJoyConfig())


def test_body_reference_is_calibrated_on_the_first_head() -> None:
    """wrist_reference body: the heading comes from the first head pose and stays; later samples are relative to
    the neck pivot under the head, not to the head position."""
    xr = robot_to_openxr(HEAD, LEFT, RIGHT)
    assembler = SampleAssembler("hands", XrJoyConfig(), wrist_reference="body")
    assembler.put(wire(camera_move(xr.xr_T_head)), 0.0)
    assembler.put(wire(hand_move(hand(xr.xr_T_left_wrist), hand(xr.xr_T_right_wrist), 1.0)), 0.0)
    np.testing.assert_allclose(assembler.body.world_R_heading, matrix_from_wxyz(wxyz_from_rpy(0.0, 0.0, 0.3)),
                               atol=FLOAT32)
    turned = HEAD @ pose(0.0, 0.0, 0.0, yaw=0.5)
    xr_turned = XrPoses(robot_to_openxr(turned, LEFT, RIGHT).xr_T_head, xr.xr_T_left_wrist, xr.xr_T_right_wrist)
    assembler.put(wire(camera_move(xr_turned.xr_T_head)), 0.1)
    second = assembler.put(wire(hand_move(hand(xr.xr_T_left_wrist), hand(xr.xr_T_right_wrist), 2.0)), 0.1)
    body = openxr_to_robot(xr_turned, body=BodyReference.calibrate(HEAD)).pelvis_T_left_wrist
    head_relative = openxr_to_robot(xr_turned).pelvis_T_left_wrist
    np.testing.assert_allclose(second.poses.pelvis_T_left_wrist, body, atol=FLOAT32)
    assert np.linalg.norm(body[:3, 3] - head_relative[:3, 3]) > 0.01
