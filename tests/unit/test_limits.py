import numpy as np
import pytest

from g1_teleop.core.limits import CommandLimiter, JointCommand, JointLimits, pd_torque, slew_limit

LIMITS = JointLimits(q_lower=np.array([-1.0, -2.0]), q_upper=np.array([1.0, 2.0]),
                     velocity=np.array([10.0, 5.0]), effort=np.array([20.0, 3.0]))


def command(q, dq=(0.0, 0.0), tau=(0.0, 0.0)):
    return JointCommand(q=np.array(q, float), dq=np.array(dq, float), tau_ff=np.array(tau, float),
                        kp=np.array([100.0, 50.0]), kd=np.array([2.0, 1.0]))


def test_slew_limit_moves_at_most_max_step():
    out = slew_limit(np.array([1.0, -1.0, 0.005]), np.zeros(3), 0.01)
    np.testing.assert_allclose(out, [0.01, -0.01, 0.005])


def test_limiter_clamps_position_velocity_and_feedforward():
    limiter = CommandLimiter(LIMITS)
    out = limiter.apply(command([5.0, -5.0], dq=[100.0, -100.0], tau=[50.0, -50.0]), dt=1.0)
    np.testing.assert_array_equal(out.q, [1.0, -2.0])
    np.testing.assert_array_equal(out.dq, [10.0, -5.0])
    np.testing.assert_array_equal(out.tau_ff, [20.0, -3.0])


def test_limiter_slews_from_the_previous_target_at_the_velocity_limit():
    limiter = CommandLimiter(LIMITS)
    limiter.reset(np.zeros(2))
    out = limiter.apply(command([1.0, 2.0]), dt=0.02)
    np.testing.assert_allclose(out.q, [0.2, 0.1])  # 10 rad/s and 5 rad/s for 20 ms
    out = limiter.apply(command([1.0, 2.0]), dt=0.02)
    np.testing.assert_allclose(out.q, [0.4, 0.2])


def test_negative_gains_are_refused_to_zero():
    cmd = command([0.0, 0.0])
    cmd.kp[:] = -1.0
    assert np.all(CommandLimiter(LIMITS).apply(cmd, 0.02).kp == 0.0)


def test_pd_torque_law_and_clip():
    cmd = command([0.5, 0.0], dq=[1.0, 0.0], tau=[1.0, 0.0])
    tau = pd_torque(cmd, q=np.array([0.4, 1.0]), dq=np.array([0.0, 0.0]), effort=LIMITS.effort)
    # 100·0.1 + 2·1 + 1 = 13; 50·(−1) = −50 → clipped to −3
    np.testing.assert_allclose(tau, [13.0, -3.0])


def test_damping_command_has_no_stiffness():
    cmd = JointCommand.damping(3, 8.0)
    assert np.all(cmd.kp == 0) and np.all(cmd.kd == 8.0)
    tau = pd_torque(cmd, q=np.ones(3), dq=np.array([1.0, 0.0, -1.0]), effort=np.full(3, 100.0))
    np.testing.assert_allclose(tau, [-8.0, 0.0, 8.0])


def test_limits_are_validated():
    with pytest.raises(ValueError, match="lower position limit"):
        JointLimits(np.array([1.0]), np.array([0.0]), np.array([1.0]), np.array([1.0]))
    with pytest.raises(ValueError, match="entries"):
        JointLimits(np.zeros(2), np.ones(1), np.ones(2), np.ones(2))
