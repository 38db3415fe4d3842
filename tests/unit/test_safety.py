import pytest

from g1_teleop.core.input_watchdog import Freshness, InputWatchdog, WatchdogConfig


def test_freshness_sequence():
    dog = InputWatchdog(WatchdogConfig(hold_after_s=0.1, damp_after_s=1.0))
    assert dog.state(0.0) is Freshness.WAITING
    dog.feed(10.0)
    assert dog.state(10.05) is Freshness.FRESH
    assert dog.state(10.2) is Freshness.HOLD
    assert dog.state(11.5) is Freshness.DAMP
    dog.feed(11.6)
    assert dog.state(11.65) is Freshness.FRESH


def test_config_is_validated():
    with pytest.raises(ValueError, match="hold_after_s"):
        WatchdogConfig(hold_after_s=2.0, damp_after_s=1.0)
