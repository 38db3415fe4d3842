"""The policy's output contract: whatever a controller computes, the command is finite and inside the limits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from g1_teleop.control.command_contract import CommandContract
from g1_teleop.core.robot_description import load_robot

ROBOT = load_robot()
N = len(ROBOT.joint_names)
ANY = st.floats(allow_nan=True, allow_infinity=True)  # every double: huge, tiny, inf, NaN
VECTOR = arrays(np.float64, N, elements=ANY)


def contract() -> CommandContract:
    return CommandContract(ROBOT.q_lower, ROBOT.q_upper, ROBOT.velocity_limit, ROBOT.effort_limit)


@settings(max_examples=300, deadline=None)
@given(q=VECTOR, dq=VECTOR, tau=VECTOR, previous=st.none() | VECTOR)
def test_every_command_is_finite_and_within_the_limits(q, dq, tau, previous):
    c = contract()
    if previous is not None:
        c.bound(previous, np.zeros(N), np.zeros(N), fallback_q=ROBOT.default_q)
    out = c.bound(q, dq, tau, fallback_q=ROBOT.default_q)
    for values in (out.q, out.dq, out.tau_ff):
        assert np.all(np.isfinite(values))
    assert np.all((out.q >= ROBOT.q_lower) & (out.q <= ROBOT.q_upper))
    assert np.all(np.abs(out.dq) <= ROBOT.velocity_limit)
    assert np.all(np.abs(out.tau_ff) <= ROBOT.effort_limit)
    inside = np.isfinite(q) & (q >= ROBOT.q_lower) & (q <= ROBOT.q_upper)
    np.testing.assert_array_equal(out.q[inside], q[inside])  # nothing inside the contract is changed


def test_a_nonfinite_target_keeps_the_previous_command_and_torques_become_zero():
    c = contract()
    first = c.bound(ROBOT.default_q, np.zeros(N), np.ones(N), fallback_q=ROBOT.default_q)
    assert first.corrections == {}
    q = ROBOT.default_q + 0.05
    q[3], tau = np.nan, np.full(N, 2.0)
    tau[5] = np.inf - np.inf  # what the built-in controller's balance made of huge opposite velocities
    out = c.bound(q, np.zeros(N), tau, fallback_q=np.zeros(N))
    assert out.q[3] == ROBOT.default_q[3] and out.q[4] == q[4] and out.tau_ff[5] == 0.0 and out.tau_ff[6] == 2.0
    assert out.corrections == {"nonfinite": 2}


def test_an_arm_feed_forward_beyond_the_effort_limit_is_clipped():
    wrist = ROBOT.joint_names.index("left_wrist_yaw_joint")
    tau = np.zeros(N)
    tau[wrist] = 173.0
    out = contract().bound(ROBOT.default_q, np.zeros(N), tau, fallback_q=ROBOT.default_q)
    assert out.tau_ff[wrist] == ROBOT.effort_limit[wrist] < 10 and out.corrections == {"effort": 1}


def test_the_limits_are_checked():
    with pytest.raises(ValueError, match="differ in length"):
        CommandContract(ROBOT.q_lower, ROBOT.q_upper[:3], ROBOT.velocity_limit, ROBOT.effort_limit)
