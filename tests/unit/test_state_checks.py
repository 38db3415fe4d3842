"""Plausibility of the state the policy takes: a sample that cannot be the robot's is refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from g1_teleop.control.state_checks import ImplausibleState, PlausibilityLimits, StateChecks
from g1_teleop.core.robot_description import load_robot

ROBOT = load_robot()
N = len(ROBOT.joint_names)
UPRIGHT = np.array([1.0, 0.0, 0.0, 0.0])


def checks() -> StateChecks:
    return StateChecks(ROBOT.q_lower, ROBOT.q_upper, ROBOT.velocity_limit)


def refused(call, *args) -> str | None:
    try:
        call(*args)
    except ImplausibleState as exc:
        return exc.kind
    return None


def test_each_check_refuses_its_kind_and_keeps_the_last_taken_sample():
    c = checks()
    q, dq = ROBOT.default_q.copy(), np.zeros(N)
    assert refused(c.take_joints, q, dq, 0.0) is None
    beyond = q.copy()
    beyond[0] = ROBOT.q_upper[0] + 0.3
    huge = dq.copy()
    huge[[0, 1]] = 1.7e308, -1.7e308  # finite, and inf − inf downstream
    nan = q.copy()
    nan[4] = np.nan
    assert [refused(c.take_joints, *args) for args in ((beyond, dq, 0.02), (q, huge, 0.02), (nan, dq, 0.02))] == [
        "joint_range", "joint_velocity", "nan"]
    spoof = np.clip(q + np.random.default_rng(0).uniform(-0.5, 0.5, N), ROBOT.q_lower, ROBOT.q_upper)  # plausible
    assert refused(c.take_joints, spoof, dq, 0.005) == "joint_jump"
    big_step = q.copy()
    big_step[20] += 1.5 * ROBOT.velocity_limit[20] * 0.01 + 0.06
    assert refused(c.take_joints, big_step, dq, 0.01) == "joint_jump"
    assert refused(c.take_joints, big_step, dq, 10.0) is None  # after long enough it could have got there
    assert refused(c.take_joints, q, dq, 10.01, 5_000_000_000, 1_000_000_000) == "stamp"  # 4 s off the clock


def test_imu_checks():
    c = checks()
    assert refused(c.take_imu, UPRIGHT, np.zeros(3), 0.0) is None
    assert refused(c.take_imu, np.zeros(4), np.zeros(3), 0.02) == "imu_quaternion"
    assert refused(c.take_imu, UPRIGHT * 2, np.zeros(3), 0.02) == "imu_quaternion"
    assert refused(c.take_imu, UPRIGHT, np.array([1e300, -1e300, 0]), 0.02) == "imu_gyro"
    assert refused(c.take_imu, UPRIGHT, np.array([np.nan, 0, 0]), 0.02) == "nan"
    flipped = np.array([0.0, 1.0, 0.0, 0.0])  # upside down 20 ms later
    assert refused(c.take_imu, flipped, np.zeros(3), 0.02) == "imu_jump"
    tilted = np.array([np.cos(0.05), np.sin(0.05), 0.0, 0.0])  # 0.1 rad in 20 ms: 5 rad/s
    assert refused(c.take_imu, tilted, np.zeros(3), 0.02) is None
    assert refused(c.take_imu, tilted, np.array([0.0, 4.0, 0.0]), 0.025) == "imu_gyro_jump"  # 800 rad/s² for 5 ms
    assert refused(c.take_imu, tilted, np.array([0.0, 2.0, 0.0]), 0.025) is None  # 400 rad/s²


@settings(max_examples=300, deadline=None)
@given(q=arrays(np.float64, N, elements=st.floats(allow_nan=True, allow_infinity=True)),
       dq=arrays(np.float64, N, elements=st.floats(allow_nan=True, allow_infinity=True)))
def test_whatever_is_taken_is_finite_and_within_the_margins(q, dq):
    c = checks()
    if refused(c.take_joints, q, dq, 0.0) is None:
        lim = PlausibilityLimits()
        assert np.all(np.isfinite(q)) and np.all(np.isfinite(dq))
        margin = lim.position_margin_rad
        assert np.all(q >= ROBOT.q_lower - margin) and np.all(q <= ROBOT.q_upper + margin)
        assert np.all(np.abs(dq) <= lim.velocity_factor * ROBOT.velocity_limit)


def test_the_limits_are_checked():
    with pytest.raises(ValueError, match="velocity_factor must be a finite value > 0"):
        PlausibilityLimits(velocity_factor=0.0)
