"""The fall-back when commands go stale (core.input_watchdog): freshness by age, and the command it leaves."""

import numpy as np
import pytest

from g1_teleop.core.input_watchdog import Freshness, InputWatchdog, WatchdogTimeouts, fallback_command
from g1_teleop.core.limits import JointCommand


def test_freshness_sequence():
    dog = InputWatchdog(WatchdogTimeouts(hold_after_s=0.1, damp_after_s=1.0))
    assert dog.freshness(0.0) is Freshness.WAITING
    dog.feed(10.0)
    assert dog.freshness(10.05) is Freshness.FRESH
    assert dog.freshness(10.2) is Freshness.HOLD
    assert dog.freshness(11.5) is Freshness.DAMP
    dog.feed(11.6)
    assert dog.freshness(11.65) is Freshness.FRESH


def test_timeouts_are_validated():
    with pytest.raises(ValueError, match="hold_after_s"):
        WatchdogTimeouts(hold_after_s=2.0, damp_after_s=1.0)
    with pytest.raises(ValueError, match="hold_after_s must be > 0"):
        WatchdogTimeouts(hold_after_s=0.0)


def test_the_fallback_holds_the_last_target_at_rest_then_damps():
    last = JointCommand(q=np.array([0.1, 0.2]), dq=np.array([1.0, -1.0]), tau_ff=np.array([3.0, 4.0]),
                        kp=np.array([50.0, 60.0]), kd=np.array([1.0, 2.0]))
    damping = JointCommand.damping(2, 3.0)
    for freshness in (Freshness.WAITING, Freshness.FRESH):
        assert fallback_command(freshness, last, damping) is last
    held = fallback_command(Freshness.HOLD, last, damping)
    np.testing.assert_array_equal(held.dq, [0.0, 0.0])
    for name in ("q", "tau_ff", "kp", "kd"):
        np.testing.assert_array_equal(getattr(held, name), getattr(last, name))
    assert fallback_command(Freshness.DAMP, last, damping) is damping
