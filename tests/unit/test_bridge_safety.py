import re

import numpy as np
import pytest

from g1_teleop.core.limits import JointCommand
from g1_teleop.hardware.bridge_safety import (
    ActionRefused,
    BridgeSafety,
    BridgeSafetyConfig,
    CommandLate,
    CommandRejected,
    CommandSample,
    OperatorAction,
    OperatorEvent,
    SafetyState,
    StateSample,
    WritingResumed,
    WritingStopped,
)

S = SafetyState
UPRIGHT = np.array([1.0, 0.0, 0.0, 0.0])
TICK = 0.002  # 500 Hz
START = OperatorEvent(OperatorAction.START, "remote")
ACTIVATE = OperatorEvent(OperatorAction.ACTIVATE, "remote")
ESTOP = OperatorEvent(OperatorAction.ESTOP, "joy")


def about(axis, angle):
    """(w, x, y, z) quaternion of a rotation by ``angle`` about a unit ``axis``."""
    return np.array([np.cos(angle / 2), *(np.sin(angle / 2) * np.asarray(axis, float))])


class Bench:
    """Drives the state machine like the bridge does: a clock, the latest LowState and joint_command."""

    def __init__(self, robot, **config):
        self.robot = robot
        config.setdefault("activate_blend_s", 0.0)  # the policy's commands at once, unless a test blends
        self.safety = BridgeSafety(robot, BridgeSafetyConfig(**config))
        self.t = 100.0
        self.q = robot.default_q + 0.1  # measured pose: 0.1 rad from the default on every joint
        self.dq = np.zeros(29)
        self.quat = UPRIGHT
        self.state = None
        self.command = None

    def tick(self, *events, dt=TICK, fresh=True, source_gone=False):
        self.t += dt
        if fresh:
            self.state = StateSample(self.t, self.q, self.dq, self.quat)
        return self.safety.step(self.t, self.state, self.command, events, source_gone)

    def send(self, command):
        self.command = CommandSample(self.t, command)

    def policy_command(self, offset=0.01):
        kp, kd = self.robot.gains("default")
        return JointCommand(q=self.robot.default_q + offset, dq=np.full(29, 0.1), tau_ff=np.full(29, 0.5),
                            kp=kp.copy(), kd=kd.copy())

    def to_hold(self):
        self.tick()
        self.tick(START)
        out = self.tick(dt=self.safety.config.ramp_duration_s + TICK)
        assert self.safety.state is S.HOLD, out
        return out

    def to_active(self):
        self.to_hold()
        self.send(self.policy_command())
        out = self.tick(ACTIVATE)
        assert self.safety.state is S.ACTIVE, out
        return out


def only_transition(out):
    assert len(out.transitions) == 1, out.transitions
    return out.transitions[0]


@pytest.mark.parametrize(("field", "value", "problem"), [
    ("ramp_duration_s", 0.0, "must be > 0, got 0.0"), ("command_timeout_s", -0.05, "must be > 0"),
    ("state_timeout_s", float("nan"), "must be finite"), ("max_tilt_rad", 3.5, "must be > 0; <= 3.14159"),
    ("pd_torque_scale", True, "must be a number, got True"), ("hold_gain_profile", "", "must name a gain profile"),
    ("activate_blend_s", -0.1, "must be >= 0"), ("velocity_fault_scale", float("inf"), "must be finite")])
def test_config_is_validated_at_load(field, value, problem):
    with pytest.raises(ValueError, match=re.escape(f"bridge safety: {field} {problem}")):
        BridgeSafetyConfig(**{field: value})


def test_damping_profile_must_have_no_stiffness(robot):
    with pytest.raises(ValueError, match="kp ≠ 0"):
        BridgeSafety(robot, BridgeSafetyConfig(damping_gain_profile="default"))
    with pytest.raises(KeyError, match="unknown gain profile"):
        BridgeSafety(robot, BridgeSafetyConfig(hold_gain_profile="stiff"))


def test_without_a_fresh_lowstate_nothing_is_written(robot):
    bench = Bench(robot)
    assert bench.safety.step(bench.t, None, None) == bench.safety.step(bench.t + 1.0, None, None)
    out = bench.safety.step(bench.t, None, None)
    assert out.command is None and out.transitions == () and out.notices == ()
    old = StateSample(bench.t - 0.2, bench.q, bench.dq, UPRIGHT)
    assert bench.safety.step(bench.t, old, None).command is None
    assert bench.safety.state is S.WAIT_FOR_STATE


def test_first_fresh_lowstate_enters_zero_torque_once(robot):
    bench = Bench(robot)
    out = bench.tick()
    t = only_transition(out)
    assert (t.previous, t.current, t.reason) == (S.WAIT_FOR_STATE, S.ZERO_TORQUE, "LowState received")
    np.testing.assert_array_equal(out.command.kp, 0.0)
    np.testing.assert_array_equal(out.command.kd, 0.0)
    np.testing.assert_array_equal(out.command.tau_ff, 0.0)
    assert bench.tick().transitions == ()


def test_start_ramps_linearly_from_the_measured_to_the_default_pose(robot):
    bench = Bench(robot)  # 2 s ramp
    bench.tick()
    out = bench.tick(START)
    assert only_transition(out).current is S.RAMP
    np.testing.assert_allclose(out.command.q, robot.default_q + 0.1)
    out = bench.tick(dt=1.0)
    assert out.transitions == ()
    np.testing.assert_allclose(out.command.q, robot.default_q + 0.05, atol=1e-12)
    kp, kd = robot.gains("default")
    np.testing.assert_array_equal(out.command.kp, kp)
    np.testing.assert_array_equal(out.command.kd, kd)
    out = bench.tick(dt=0.999)
    assert bench.safety.state is S.RAMP
    out = bench.tick(dt=0.002)
    t = only_transition(out)
    assert (t.previous, t.current, t.reason) == (S.RAMP, S.HOLD, "ramp complete")
    np.testing.assert_allclose(out.command.q, robot.default_q)
    assert bench.tick().transitions == ()


def test_activate_needs_hold_and_a_fresh_command(robot):
    bench = Bench(robot, ramp_duration_s=0.1)
    bench.tick()
    out = bench.tick(ACTIVATE)
    assert bench.safety.state is S.ZERO_TORQUE
    assert out.notices == (ActionRefused(ACTIVATE, "only from HOLD (now ZERO_TORQUE)"),)
    assert str(out.notices[0]) == "activate from remote refused: only from HOLD (now ZERO_TORQUE)"
    bench.to_hold()
    out = bench.tick(ACTIVATE)
    assert bench.safety.state is S.HOLD and "no valid joint_command" in out.notices[0].reason
    command = bench.policy_command()
    bench.send(command)
    out = bench.tick(ACTIVATE)
    assert only_transition(out).reason == "operator activate (remote)"
    np.testing.assert_allclose(out.command.q, command.q)
    np.testing.assert_array_equal(out.command.dq, command.dq)
    np.testing.assert_array_equal(out.command.tau_ff, command.tau_ff)


def test_start_is_refused_outside_zero_torque_and_damp(robot):
    bench = Bench(robot, ramp_duration_s=0.1)
    bench.to_hold()
    out = bench.tick(START)
    assert bench.safety.state is S.HOLD
    assert out.notices == (ActionRefused(START, "only from ZERO_TORQUE or DAMP (now HOLD)"),)


def test_a_late_command_is_held_for_the_grace_then_damps(robot):
    bench = Bench(robot, ramp_duration_s=0.1)
    held = bench.to_active().command
    sent = bench.command.received_s
    timeout, grace = bench.safety.config.command_timeout_s, bench.safety.config.command_grace_s
    assert (timeout, grace) == (0.045, 0.5)  # the defaults
    assert bench.tick(dt=timeout - 0.002 - TICK).notices == ()
    out = bench.tick(dt=0.004)  # late: reported once, the last command held
    assert bench.safety.state is S.ACTIVE and out.transitions == ()
    assert out.notices == (CommandLate(pytest.approx(0.047), grace),) and "holding the last one" in str(out.notices[0])
    np.testing.assert_allclose(out.command.q, held.q)
    np.testing.assert_array_equal(out.command.kp, held.kp)
    out = bench.tick(dt=grace - 0.047 - 0.002)
    assert bench.safety.state is S.ACTIVE and out.notices == ()
    out = bench.tick(dt=0.004)
    t = only_transition(out)
    assert (t.previous, t.current) == (S.ACTIVE, S.DAMP) and "no valid joint_command for 0.502 s (grace 0.500 s)" \
        in t.reason
    assert t.time_s == bench.t and bench.t - sent > grace
    np.testing.assert_array_equal(out.command.kp, 0.0)
    np.testing.assert_array_equal(out.command.kd, robot.gains("damping")[1])
    np.testing.assert_array_equal(out.command.dq, 0.0)
    np.testing.assert_array_equal(out.command.tau_ff, 0.0)


def test_a_command_source_gone_damps_at_the_timeout(robot):
    bench = Bench(robot, ramp_duration_s=0.1)
    bench.to_active()
    timeout = bench.safety.config.command_timeout_s
    assert bench.tick(dt=timeout - 0.002 - TICK, source_gone=True).transitions == ()  # not late yet
    t = only_transition(bench.tick(dt=0.004, source_gone=True))
    assert t.current is S.DAMP and "no publisher left on joint_command" in t.reason


def test_commands_arriving_again_within_the_grace_keep_active(robot):
    bench = Bench(robot, ramp_duration_s=0.1)
    bench.to_active()
    for _ in range(3):
        assert len(bench.tick(dt=0.3).notices) == 1  # late, held
        bench.send(bench.policy_command(offset=0.02))
        assert bench.tick().notices == () and bench.safety.state is S.ACTIVE


def test_stale_lowstate_damps_and_stops_writing_until_fresh(robot):
    bench = Bench(robot, ramp_duration_s=0.1)
    bench.to_hold()
    assert bench.tick(dt=0.098, fresh=False).command is not None
    out = bench.tick(dt=0.004, fresh=False)
    assert out.command is None
    assert only_transition(out).reason == "LowState 0.102 s old (limit 0.100 s)"
    assert out.notices == (WritingStopped("LowState 0.102 s old (limit 0.100 s)"),)
    assert str(out.notices[0]) == "LowCmd writing stopped: LowState 0.102 s old (limit 0.100 s)"
    out = bench.tick(fresh=False)
    assert out.command is None and out.transitions == () and out.notices == ()
    out = bench.tick()
    assert bench.safety.state is S.DAMP and out.transitions == ()
    assert out.notices == (WritingResumed(),)
    np.testing.assert_array_equal(out.command.kd, robot.gains("damping")[1])


def test_joint_velocity_beyond_its_limit_damps(robot):
    bench = Bench(robot, ramp_duration_s=0.1)
    bench.to_hold()
    bench.dq = np.zeros(29)
    bench.dq[3] = -19.9  # left knee, limit 20 rad/s
    assert bench.tick().transitions == ()
    bench.dq[3] = -20.5
    t = only_transition(bench.tick())
    assert t.current is S.DAMP
    assert t.reason == "left_knee_joint velocity -20.50 rad/s beyond its limit 20.00 rad/s"


def test_a_fall_damps(robot):
    bench = Bench(robot, ramp_duration_s=0.1)
    bench.to_active()
    bench.send(bench.policy_command())
    bench.quat = about([1, 0, 0], 0.75)
    assert bench.tick().transitions == ()
    bench.quat = about([1, 0, 0], 0.85)
    t = only_transition(bench.tick())
    assert (t.previous, t.current, t.reason) == (S.ACTIVE, S.DAMP, "pelvis tilt 0.85 rad beyond 0.80 rad (fall)")


def test_invalid_lowstate_values_damp(robot):
    bench = Bench(robot, ramp_duration_s=0.1)
    bench.to_hold()
    bench.dq = np.full(29, np.nan)
    assert only_transition(bench.tick()).reason == "LowState has invalid values in dq"


@pytest.mark.parametrize("before", [S.WAIT_FOR_STATE, S.ZERO_TORQUE, S.RAMP, S.HOLD, S.ACTIVE])
def test_operator_estop_damps_from_every_state(robot, before):
    bench = Bench(robot, ramp_duration_s=0.1)
    if before is S.ZERO_TORQUE:
        bench.tick()
    elif before is S.RAMP:
        bench.tick()
        bench.tick(START)
    elif before is S.HOLD:
        bench.to_hold()
    elif before is S.ACTIVE:
        bench.to_active()
    assert bench.safety.state is before
    out = bench.tick(ESTOP, fresh=before is not S.WAIT_FOR_STATE)
    t = only_transition(out)
    assert (t.previous, t.current, t.reason) == (before, S.DAMP, "operator e-stop (joy)")
    if before is S.WAIT_FOR_STATE:
        assert out.command is None  # no LowState: still nothing to write
    else:
        np.testing.assert_array_equal(out.command.kp, 0.0)


def test_leaving_damp_needs_an_operator_start_without_a_fault(robot):
    bench = Bench(robot, ramp_duration_s=0.1)
    bench.to_active()
    bench.tick(ESTOP)
    bench.send(bench.policy_command())
    for _ in range(10):
        assert bench.tick().transitions == ()
    bench.quat = about([0, 1, 0], 1.0)
    out = bench.tick(START)
    assert bench.safety.state is S.DAMP
    assert out.notices == (ActionRefused(START, "pelvis tilt 1.00 rad beyond 0.80 rad (fall)"),)
    bench.quat = UPRIGHT
    bench.q = robot.default_q - 0.05  # the robot sagged while damped: the ramp starts from here
    out = bench.tick(START)
    assert only_transition(out).reason == "operator start (remote)"
    np.testing.assert_allclose(out.command.q, bench.q)


def test_estop_wins_over_start_in_the_same_tick(robot):
    bench = Bench(robot)
    bench.tick()
    out = bench.tick(START, ESTOP)
    assert bench.safety.state is S.DAMP
    assert out.notices == (ActionRefused(START, "an e-stop arrived in the same tick"),)


def test_activation_blends_from_the_hold_command_to_the_policys(robot):
    bench = Bench(robot, ramp_duration_s=0.1, activate_blend_s=0.5)
    bench.to_hold()
    hold_kp, hold_kd = robot.gains("default")
    command = bench.policy_command(offset=0.02)
    command.kp, command.kd = 2.0 * hold_kp, 3.0 * hold_kd
    bench.send(command)
    at_activation = bench.tick(ACTIVATE).command
    np.testing.assert_allclose(at_activation.q, robot.default_q)
    np.testing.assert_allclose(at_activation.kp, hold_kp)
    np.testing.assert_allclose(at_activation.tau_ff, 0.0)
    for _ in range(125):  # 0.25 s after activation: half way
        bench.send(command)
        halfway = bench.tick().command
    np.testing.assert_allclose(halfway.q, robot.default_q + 0.01)
    np.testing.assert_allclose(halfway.kp, 1.5 * hold_kp)
    np.testing.assert_allclose(halfway.kd, 2.0 * hold_kd)
    np.testing.assert_allclose(halfway.dq, 0.05)
    np.testing.assert_allclose(halfway.tau_ff, 0.25)
    for _ in range(125):
        bench.send(command)
        done = bench.tick().command
    np.testing.assert_allclose(done.q, command.q)
    np.testing.assert_allclose(done.kp, command.kp)
    np.testing.assert_allclose(done.tau_ff, command.tau_ff)


def test_a_policy_far_from_the_held_pose_is_reached_gently(robot):
    bench = Bench(robot, ramp_duration_s=0.1, activate_blend_s=1.0, pd_torque_scale=1000.0)
    bench.to_hold()
    far = bench.policy_command(offset=0.3)
    far.q = np.clip(far.q, robot.q_lower, robot.q_upper)
    bench.send(far)
    targets = [bench.tick(ACTIVATE).command.q]
    for _ in range(600):
        bench.send(far)
        targets.append(bench.tick().command.q)
    steps = np.abs(np.diff(targets, axis=0))
    assert steps.max() <= 0.3 * TICK / 1.0 + 1e-12  # 0.3 rad over 1 s, not 0.3 rad at once
    np.testing.assert_allclose(targets[-1], far.q)


def test_every_activation_blends_again(robot):
    bench = Bench(robot, ramp_duration_s=0.1, activate_blend_s=0.5)
    bench.to_active()
    bench.tick(ESTOP)
    bench.send(bench.policy_command(offset=0.2))
    bench.tick(START)
    bench.tick(dt=0.1 + TICK)
    assert bench.safety.state is S.HOLD
    bench.send(bench.policy_command(offset=0.2))
    np.testing.assert_allclose(bench.tick(ACTIVATE).command.q, robot.default_q)


def test_bad_commands_are_rejected_and_do_not_feed_the_watchdog(robot):
    bench = Bench(robot, ramp_duration_s=0.1)
    good = bench.to_active().command
    nan = bench.policy_command(offset=0.02)
    nan.q[5] = np.nan
    nan.kp[0] = np.inf
    bench.send(nan)
    out = bench.tick()
    assert out.notices == (CommandRejected("non-finite values in q, kp"),)
    assert str(out.notices[0]) == "joint_command rejected: non-finite values in q, kp"
    np.testing.assert_allclose(out.command.q, good.q)
    assert bench.tick().notices == ()  # each command is judged once
    short = bench.policy_command()
    short.dq = np.zeros(28)
    bench.send(short)
    out = bench.tick()
    assert out.notices == (CommandRejected("dq has shape (28,) (expected (29,))"),)
    assert np.all(np.isfinite(out.command.q))
    out = bench.tick(dt=0.05)
    assert out.transitions == () and isinstance(out.notices[0], CommandLate)
    out = bench.tick(dt=0.5)
    assert only_transition(out).current is S.DAMP


def test_active_targets_are_slew_limited_per_tick(robot):
    bench = Bench(robot, ramp_duration_s=0.1)
    bench.to_hold()  # the last target is the default pose
    bench.send(bench.policy_command(offset=0.5))
    out = bench.tick(ACTIVATE)
    np.testing.assert_allclose(out.command.q - robot.default_q, robot.velocity_limit * TICK)


def test_active_targets_stay_inside_the_position_limits(robot):
    bench = Bench(robot, ramp_duration_s=0.1, pd_torque_scale=1000.0)
    bench.to_active()
    for _ in range(100):
        bench.send(bench.policy_command(offset=10.0))
        out = bench.tick()
    np.testing.assert_allclose(out.command.q, robot.q_upper)


def test_stiffness_torque_is_bounded_by_the_effort_limit(robot):
    bench = Bench(robot, ramp_duration_s=0.1)
    bench.to_active()
    for _ in range(100):
        bench.send(bench.policy_command(offset=-2.0))
        out = bench.tick()
    kp = robot.gains("default")[0]
    stiffness_torque = kp * (out.command.q - bench.q)
    expected = np.maximum(robot.q_lower, bench.q - robot.effort_limit / kp)  # the bound, unless the limit is nearer
    np.testing.assert_allclose(out.command.q, expected)
    assert np.all(np.abs(stiffness_torque) <= robot.effort_limit + 1e-9)
    assert np.any(np.isclose(np.abs(stiffness_torque), robot.effort_limit))  # the bound was active


def test_slew_continues_from_the_target_actually_sent(robot):
    bench = Bench(robot, ramp_duration_s=0.1)
    bench.to_active()
    for _ in range(100):
        bench.send(bench.policy_command(offset=-2.0))
        sent = bench.tick().command.q
    bench.q = bench.q - 0.2  # the robot gives way: the torque bound no longer holds the target back
    bench.send(bench.policy_command(offset=-2.0))
    out = bench.tick()
    step = robot.velocity_limit * TICK
    free = sent - robot.q_lower > step  # joints held back by the torque bound, not by their lower limit
    assert free.sum() >= 20
    np.testing.assert_allclose((sent - out.command.q)[free], step[free])
