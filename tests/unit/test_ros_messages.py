"""Conversions between the topic contract's messages and the core's types (rclpy's message classes, no graph)."""

import numpy as np
import pytest

from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.rotations import transform, wxyz_from_rpy
from g1_teleop.ros.messages import (
    gains_from_msg,
    gains_msg,
    pose_stamped_msg,
    stamp_ns,
    to_stamp,
    transform_from_pose_msg,
)


def test_stamps_round_trip() -> None:
    assert stamp_ns(to_stamp(12_345_678_901)) == 12_345_678_901


def test_poses_round_trip_and_bad_poses_are_refused() -> None:
    T = transform([0.3, -0.2, 0.1], wxyz_from_rpy(0.1, -0.4, 2.0))
    msg = pose_stamped_msg(T, to_stamp(5), "pelvis")
    assert msg.header.frame_id == "pelvis"
    np.testing.assert_allclose(transform_from_pose_msg(msg), T, atol=1e-12)
    msg.pose.orientation.w *= 1.1
    with pytest.raises(ValueError, match="norm"):
        transform_from_pose_msg(msg)
    msg.pose.position.x = float("nan")
    with pytest.raises(ValueError, match="non-finite"):
        transform_from_pose_msg(msg)


def test_gains_within_their_limits_only(robot) -> None:
    index = JointIndex(robot.joint_names)
    kp, kd = robot.gains("default")
    msg = gains_msg(list(reversed(robot.joint_names)), to_stamp(0), kp[::-1], kd[::-1])
    got_kp, got_kd = gains_from_msg(msg, index, *robot.gain_limits)
    np.testing.assert_array_equal(got_kp, kp)
    np.testing.assert_array_equal(got_kd, kd)
    for field, value in (("position", 1e4), ("velocity", -1.0)):
        bad = gains_msg(robot.joint_names, to_stamp(0), kp, kd)
        getattr(bad, field)[3] = value
        with pytest.raises(MalformedJointMessage, match=robot.joint_names[3]):
            gains_from_msg(bad, index, *robot.gain_limits)
    no_kd = gains_msg(robot.joint_names, to_stamp(0), kp, kd)
    no_kd.velocity = []
    with pytest.raises(MalformedJointMessage, match="no velocities"):
        gains_from_msg(no_kd, index, *robot.gain_limits)
