import math

import numpy as np
import pytest

from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage

NAMES = ("a", "b", "c")


def test_reorders_by_name():
    vec = JointIndex(NAMES).parse(["c", "a", "b"], [3.0, 1.0, 2.0], [], [30.0, 10.0, 20.0])
    np.testing.assert_array_equal(vec.position, [1.0, 2.0, 3.0])
    assert vec.velocity is None
    np.testing.assert_array_equal(vec.effort, [10.0, 20.0, 30.0])


@pytest.mark.parametrize(
    ("names", "position", "velocity", "kind", "fragment"),
    [
        (["a", "b"], [1.0, 2.0], [], "size", "missing ['c']"),
        (["a", "b", "c"], [1.0, 2.0], [], "size", "3 joint names but 2 positions"),
        (["a", "b", "c"], [1.0, 2.0, 3.0], [1.0], "size", "1 velocities"),
        (["a", "b", "x"], [1.0, 2.0, 3.0], [], "names", "unknown joint names ['x']"),
        (["a", "a", "c"], [1.0, 2.0, 3.0], [], "names", "twice"),
        (["a", "b", "c"], [1.0, math.nan, 3.0], [], "nan", "['b']"),
        (["a", "b", "c"], [1.0, 2.0, 3.0], [0.0, math.inf, 0.0], "nan", "['b']"),
    ],
)
def test_rejects_malformed(names, position, velocity, kind, fragment):
    with pytest.raises(MalformedJointMessage) as err:
        JointIndex(NAMES).parse(names, position, velocity)
    assert err.value.kind == kind
    assert fragment in str(err.value)


def test_velocity_can_be_required():
    with pytest.raises(MalformedJointMessage, match="no velocities"):
        JointIndex(NAMES).parse(NAMES, [0.0] * 3, need_velocity=True)


def test_duplicate_index_names_are_refused():
    with pytest.raises(ValueError, match="duplicate"):
        JointIndex(["a", "a"])
