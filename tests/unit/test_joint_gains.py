"""JointGains: checked at construction, read-only, compared by value, interpolated joint by joint."""

from __future__ import annotations

import numpy as np
import pytest

from g1_teleop.control.gains import JointGains


def test_interpolation_goes_from_one_set_to_the_other_joint_by_joint():
    start, end = JointGains([100.0, 300.0], [2.0, 3.0]), JointGains([100.0, 900.0], [2.0, 9.0])
    assert start.interpolate(end, 0.0) == start and start.interpolate(end, 1.0) == end
    quarter = start.interpolate(end, 0.25)
    np.testing.assert_allclose(quarter.kp, [100.0, 450.0])
    np.testing.assert_allclose(quarter.kd, [2.0, 4.5])
    assert end.interpolate(start, 0.25) == JointGains([100.0, 750.0], [2.0, 7.5])


def test_gains_compare_by_value_and_cannot_be_changed():
    gains = JointGains([1.0, 2.0], [0.1, 0.2])
    assert gains == JointGains(np.array([1.0, 2.0]), (0.1, 0.2))
    assert gains != JointGains([1.0, 2.0], [0.1, 0.3]) and gains != "gains"
    with pytest.raises(ValueError, match="read-only"):
        gains.kp[0] = 5.0
    source = np.array([1.0, 2.0])
    copied = JointGains(source, source)
    source[0] = 7.0  # the caller's array is not shared
    assert copied.kp[0] == 1.0


def test_joints_above_limits_are_named_by_index(robot):
    default = JointGains.profile(robot)
    kp_max, kd_max = robot.gain_limits
    assert default.above(kp_max, kd_max) == []
    np.testing.assert_array_equal(default.kp, robot.gains("default")[0])
    too_stiff = JointGains(np.where(np.arange(29) == 13, 1200.0, default.kp), np.where(np.arange(29) == 20, 60.0,
                                                                                           default.kd))
    assert too_stiff.above(kp_max, kd_max) == [13, 20]


@pytest.mark.parametrize(("kp", "kd", "message"), [
    ([1.0, 2.0], [1.0], "kp and kd must be vectors of one length"),
    ([[1.0]], [[1.0]], "kp and kd must be vectors of one length"),
    ([1.0, -2.0], [1.0, 1.0], "gains must be finite and >= 0"),
    ([1.0, 2.0], [np.nan, 1.0], "gains must be finite and >= 0"),
])
def test_malformed_gains_are_refused(kp, kd, message):
    with pytest.raises(ValueError, match=message):
        JointGains(kp, kd)
