"""The body → waist and arms path without ROS: the calibration window (standing still), the hold before it, then
the known motion's waist and arm joints back from its body points; xr/body messages."""

from __future__ import annotations

import numpy as np
import pytest
from builtin_interfaces.msg import Time

from g1_teleop.retarget.body_follower import BodyFollower
from g1_teleop.retarget.whole_body import WholeBodyRetargeter
from g1_teleop.retarget.whole_body_motion import body_frames, demo_motion
from g1_teleop.ros.operator_messages import BODY_FRAME, body_from_msg, body_msg


@pytest.fixture(scope="module")
def retargeter(robot, mj_model):
    return WholeBodyRetargeter(robot, mj_model=mj_model)


@pytest.fixture(scope="module")
def stream(retargeter):
    motion = demo_motion(retargeter, rate_hz=15.0)
    keep = motion.stamps < 10.0  # standing 2 s, arm swings, waist turns
    positions, quat = body_frames(retargeter, motion)
    return motion.stamps[keep], positions[keep], quat[keep], motion.joints[keep]


def test_calibrated_after_two_still_seconds_then_the_waist_and_arms_follow(robot, retargeter, stream):
    follower = BodyFollower(robot, retargeter, lambda q: np.full(14, 0.5))
    arms, waist = robot.group("arms"), robot.group("waist")
    measured = robot.default_q.copy()
    measured[arms] += 0.1
    errors, heights = [], []
    for t, p, q, joints in zip(*stream, strict=True):
        target = follower.put(float(t), p, q, measured)
        if t < 2.0 - 1e-9:
            assert not target.calibrated and target.waist_q is None
            np.testing.assert_allclose(target.arm_q, measured[arms])  # held where first measured
        elif target.calibrated:
            errors.append(np.abs(np.concatenate([target.arm_q - joints[arms], target.waist_q - joints[waist]])))
            heights.append(target.pelvis_height_m)
        np.testing.assert_allclose(target.arm_tau_ff, 0.5)
    assert follower.calibrated and follower.problem is None
    assert len(errors) >= 0.75 * 15 * 8
    assert np.percentile(np.concatenate(errors), 95) < 0.05  # rad (the round-trip bound)
    # the operator stands (the stream's known motion keeps the pelvis at the robot's standing height): the
    # retargeted pelvis height, the squat height body_retarget publishes, is the robot's own standing height
    np.testing.assert_allclose(heights, robot.spawn_height, atol=0.01)


def test_a_moving_operator_is_asked_to_stand_still_and_calibrated_later(robot, retargeter, stream):
    follower = BodyFollower(robot, retargeter, lambda q: np.zeros(14))
    stamps, positions, quat, _ = stream
    swinging = (stamps >= 2.0) & (stamps < 5.0)
    for t, p, q in zip(stamps[swinging], positions[swinging], quat[swinging], strict=True):
        follower.put(float(t - 2.0), p, q, robot.default_q)
    assert not follower.calibrated and "stand still" in follower.problem
    for t, p, q in zip(stamps[stamps < 2.1], positions[stamps < 2.1], quat[stamps < 2.1], strict=True):
        follower.put(float(t + 10.0), p, q, robot.default_q)
    assert follower.calibrated


def test_body_messages_round_trip_and_bad_ones_are_refused(stream):
    _, positions, quat, _ = stream
    body = np.concatenate([positions[0], quat[0]], axis=1)
    msg = body_msg(body, Time(sec=1))
    assert msg.header.frame_id == BODY_FRAME and len(msg.poses) == 24
    p, q = body_from_msg(msg)
    np.testing.assert_allclose(p, positions[0])
    np.testing.assert_allclose(q, quat[0])
    msg.poses.pop()
    with pytest.raises(ValueError, match="23 poses"):
        body_from_msg(msg)
    bad = body.copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        body_from_msg(body_msg(bad, Time()))
    bad = body.copy()
    bad[3, 3:] *= 2.0
    with pytest.raises(ValueError, match="unit quaternions"):
        body_from_msg(body_msg(bad, Time()))
