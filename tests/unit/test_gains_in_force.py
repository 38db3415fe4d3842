"""The gains a bridge applies: the configured profile until the controller's first valid gains, then the latest."""

from __future__ import annotations

import numpy as np

from g1_teleop.core.gains_in_force import GainsInForce


def test_the_profile_until_the_controllers_gains_then_the_latest(robot) -> None:
    kp, kd = robot.gains("default")
    gains = GainsInForce("default", kp, kd)
    assert gains.source == "gain profile 'default' (no teleop/gains yet)"
    np.testing.assert_array_equal(gains.kp, kp)
    np.testing.assert_array_equal(gains.kd, kd)

    assert gains.take(2 * kp, 2 * kd, now_s=1.25) is True
    assert gains.take(3 * kp, 3 * kd, now_s=2.0) is False
    np.testing.assert_array_equal(gains.kp, 3 * kp)
    np.testing.assert_array_equal(gains.kd, 3 * kd)
    assert gains.source == "teleop/gains since 1.250 s"  # since the first


def test_refused_gains_are_counted_and_change_nothing(robot) -> None:
    kp, kd = robot.gains("default")
    gains = GainsInForce("default", kp, kd)
    gains.take(2 * kp, 2 * kd, now_s=0.5)
    gains.refuse()
    gains.refuse()
    assert gains.refused == 2
    np.testing.assert_array_equal(gains.kp, 2 * kp)
    assert gains.source == "teleop/gains since 0.500 s"


def test_the_gains_in_force_are_copies(robot) -> None:
    kp, kd = robot.gains("default")
    mine = kp.copy()
    gains = GainsInForce("default", kp, kd)
    gains.take(mine, kd, now_s=0.0)
    mine[:] = 0.0  # the caller's array changes later: the gains in force do not
    np.testing.assert_array_equal(gains.kp, kp)
