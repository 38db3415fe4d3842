"""The package's rotation conventions: (w, x, y, z) quaternions, R = Rz(yaw)·Ry(pitch)·Rx(roll)."""

import math

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation, Slerp

from g1_teleop.core import rotations as rot

RNG = np.random.default_rng(7)


def scipy_rotation(q_wxyz) -> Rotation:
    """The reference: scipy's Rotation of (w, x, y, z) quaternions."""
    return Rotation.from_quat(np.asarray(q_wxyz, dtype=float), scalar_first=True)


def _random_wxyz(n: int) -> np.ndarray:
    q = RNG.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def _Rx(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _Ry(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _Rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def test_the_order_is_w_first_as_pinocchio_and_scipy_build_it() -> None:
    qs = _random_wxyz(200)
    for q in qs[:20]:
        np.testing.assert_allclose(rot.matrix_from_wxyz(q), pin.Quaternion(*q).matrix(), atol=1e-12)
        np.testing.assert_allclose(rot.matrix_from_wxyz(3.0 * q), scipy_rotation(q).as_matrix(), atol=1e-12)
    np.testing.assert_allclose(rot.matrix_from_wxyz(qs), scipy_rotation(qs).as_matrix(), atol=1e-12)
    np.testing.assert_allclose(rot.gravity_in_body(qs), scipy_rotation(qs).inv().apply([0.0, 0.0, -1.0]), atol=1e-12)


def test_rpy_is_z_y_x_about_fixed_axes_and_round_trips() -> None:
    for roll, pitch, yaw in RNG.uniform(-1.4, 1.4, size=(20, 3)):
        q = rot.wxyz_from_rpy(roll, pitch, yaw)
        np.testing.assert_allclose(rot.matrix_from_wxyz(q), _Rz(yaw) @ _Ry(pitch) @ _Rx(roll), atol=1e-12)
        np.testing.assert_allclose(rot.rpy_from_wxyz(q), [roll, pitch, yaw], atol=1e-12)
        assert rot.yaw_from_wxyz(q) == pytest.approx(yaw)
    for q in _random_wxyz(50):  # every orientation, against scipy's extrinsic x-y-z angles (same ranges)
        np.testing.assert_allclose(rot.rpy_from_wxyz(2.0 * q), scipy_rotation(q).as_euler("xyz"), atol=1e-9)
        np.testing.assert_allclose(rot.wxyz_from_rpy(*scipy_rotation(q).as_euler("xyz")),
                                   scipy_rotation(q).as_quat(canonical=True, scalar_first=True), atol=1e-12)


def test_rotation_vectors_agree_with_scipy() -> None:
    for q in _random_wxyz(50):
        R = scipy_rotation(q).as_matrix()
        np.testing.assert_allclose(rot.rotvec_from_matrix(R), scipy_rotation(q).as_rotvec(), atol=1e-9)
        np.testing.assert_allclose(rot.matrix_from_rotvec(scipy_rotation(q).as_rotvec()), R, atol=1e-12)
    np.testing.assert_allclose(rot.rotvec_from_matrix(np.eye(3)), np.zeros(3), atol=1e-15)


def test_ros_order_round_trip() -> None:
    q = _random_wxyz(1)[0]
    assert list(rot.xyzw_from_wxyz(q)) == [q[1], q[2], q[3], q[0]]
    np.testing.assert_array_equal(rot.wxyz_from_xyzw(rot.xyzw_from_wxyz(q)), q)


def test_gravity_and_tilt() -> None:
    np.testing.assert_allclose(rot.gravity_in_body(rot.IDENTITY_WXYZ), [0, 0, -1], atol=1e-15)
    q = rot.wxyz_from_rpy(0.0, 0.3, 1.0)  # pitched forward by 0.3 rad, any heading
    g = rot.gravity_in_body(q)
    np.testing.assert_allclose(g, [math.sin(0.3), 0.0, -math.cos(0.3)], atol=1e-12)
    assert rot.tilt(q) == pytest.approx(0.3)
    assert rot.tilt(rot.wxyz_from_rpy(0.2, 0.0, -2.0)) == pytest.approx(0.2)
    assert rot.tilt(2.0 * q) == pytest.approx(0.3)  # not normalised
    np.testing.assert_allclose(rot.tilt(np.stack([q, rot.IDENTITY_WXYZ])), [0.3, 0.0], atol=1e-12)


def test_slerp_takes_the_shorter_arc() -> None:
    a, b = rot.wxyz_from_rpy(0, 0, 0.1), rot.wxyz_from_rpy(0, 0, 0.5)
    assert rot.yaw_from_wxyz(rot.slerp_wxyz(a, -b, 0.5)) == pytest.approx(0.3)
    np.testing.assert_allclose(rot.slerp_wxyz(a, b, 0.0), a, atol=1e-12)
    np.testing.assert_allclose(abs(rot.slerp_wxyz(a, b, 1.0) @ b), 1.0, atol=1e-12)


def test_matrix_to_quaternion_and_slerp_agree_with_scipy() -> None:
    qs = _random_wxyz(50)
    R = scipy_rotation(qs).as_matrix()
    expected = scipy_rotation(qs).as_quat(canonical=True, scalar_first=True)
    np.testing.assert_allclose(rot.wxyz_from_matrix(R), expected, atol=1e-12)
    np.testing.assert_allclose(rot.wxyz_from_matrix(R[3]), expected[3], atol=1e-12)
    assert rot.wxyz_from_matrix(R.reshape(5, 10, 3, 3)).shape == (5, 10, 4)
    for q0, q1, s in zip(qs[:25], qs[25:], RNG.uniform(0.0, 1.0, 25), strict=True):
        scipy_slerp = Slerp([0.0, 1.0], scipy_rotation(np.stack([q0, q1])))(s)
        scipy_slerp = scipy_slerp.as_quat(canonical=True, scalar_first=True)
        np.testing.assert_allclose(rot.slerp_wxyz(q0, q1, s), scipy_slerp, atol=1e-9)


def test_transform_round_trip() -> None:
    q, p = _random_wxyz(1)[0], RNG.normal(size=3)
    T = rot.transform(p, q)
    p2, q2 = rot.position_wxyz(T)
    np.testing.assert_allclose(p2, p)
    assert abs(q2 @ q) == pytest.approx(1.0)
    assert q2[0] >= 0.0


def test_a_zero_or_non_finite_quaternion_is_refused() -> None:
    for q in ([0.0, 0.0, 0.0, 0.0], [math.nan, 0.0, 0.0, 1.0], [math.inf, 0.0, 0.0, 0.0]):
        with pytest.raises(ValueError):
            rot.rpy_from_wxyz(q)
        with pytest.raises(ValueError):
            rot.matrix_from_wxyz(np.array([q, [1.0, 0.0, 0.0, 0.0]]))
