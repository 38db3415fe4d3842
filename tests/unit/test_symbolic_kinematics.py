"""CasADi kinematics against Pinocchio, log3 against pin.log3, and the compiled function against CasADi's
interpreter (and its fallback without a compiler)."""

import logging

import casadi as ca
import numpy as np
import pinocchio as pin
import pytest

from g1_teleop.core.compiled_function import CompiledFunction
from g1_teleop.core.pinocchio_model import build_pinocchio_model
from g1_teleop.core.symbolic_kinematics import joint_placements, log3, point_jacobian


@pytest.fixture(scope="module")
def pin_model(robot):
    return build_pinocchio_model(robot, floating_base=False)


def random_q(model, rng):
    return rng.uniform(model.lowerPositionLimit, model.upperPositionLimit)


def test_joint_placements_match_pinocchio(pin_model):
    q = ca.SX.sym("q", pin_model.nq)
    joints = list(range(1, pin_model.njoints))
    placements = joint_placements(pin_model, q, joints)
    function = ca.Function("fk", [q], [ca.vertcat(*[ca.vertcat(ca.vec(placements[j].world_R), placements[j].world_p)
                                                    for j in joints])])
    data = pin_model.createData()
    rng = np.random.default_rng(1)
    for _ in range(20):
        q_value = random_q(pin_model, rng)
        pin.forwardKinematics(pin_model, data, q_value)
        expected = np.concatenate([np.r_[data.oMi[j].rotation.ravel(order="F"), data.oMi[j].translation]
                                   for j in joints])
        np.testing.assert_allclose(np.asarray(function(q_value)).ravel(), expected, atol=1e-12)


def test_joint_placements_from_a_floating_base_are_in_the_base_frame(robot):
    """From the root joint of the floating-base model: the pelvis-frame placements, whatever the base's own pose;
    a joint not below the base is refused."""
    model = build_pinocchio_model(robot, floating_base=True)
    base, knee = model.getJointId("floating_base_joint"), model.getJointId("left_knee_joint")
    q = ca.SX.sym("q", model.nq)
    knee_placement = joint_placements(model, q, [knee], base=base)[knee]
    function = ca.Function("fk", [q], [ca.vec(knee_placement.world_R), knee_placement.world_p])
    data = model.createData()
    config = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))  # the base anywhere
    pin.forwardKinematics(model, data, config)
    base_T_knee = data.oMi[base].actInv(data.oMi[knee])
    rotation, translation = (np.asarray(v).ravel(order="F") for v in function(config))
    np.testing.assert_allclose(rotation, base_T_knee.rotation.ravel(order="F"), atol=1e-12)
    np.testing.assert_allclose(translation, base_T_knee.translation, atol=1e-12)
    with pytest.raises(ValueError, match="not below 'left_knee_joint'"):
        joint_placements(model, q, [model.getJointId("right_knee_joint")], base=knee)


def test_point_jacobian_matches_automatic_differentiation(pin_model):
    q = ca.SX.sym("q", pin_model.nq)
    wrist = pin_model.getJointId("left_wrist_yaw_joint")
    placements = joint_placements(pin_model, q, [wrist])
    point = placements[wrist].point(np.array([0.05, -0.01, 0.02]))
    joints = list(range(1, pin_model.njoints))
    analytic = point_jacobian(pin_model, placements, joints, wrist, point)
    function = ca.Function("jacobians", [q], [analytic, ca.jacobian(point, q)])
    rng = np.random.default_rng(2)
    for _ in range(10):
        ours, automatic = (np.asarray(v) for v in function(random_q(pin_model, rng)))
        np.testing.assert_allclose(ours, automatic, atol=1e-12)
        assert np.count_nonzero(np.abs(ours).sum(axis=0)) == 10  # 3 waist joints + 7 arm joints


@pytest.mark.parametrize("angle", [0.0, 1e-9, 1e-4, 0.5, 2.0, np.pi - 1e-6])
def test_log3_matches_pinocchio_and_has_finite_derivatives(angle):
    R = ca.SX.sym("R", 3, 3)
    function = ca.Function("log3", [R], [log3(R), ca.jacobian(log3(R), ca.vec(R))])
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    rotation = pin.exp3(angle * axis)
    value, derivative = (np.asarray(v) for v in function(rotation))
    np.testing.assert_allclose(value.ravel(), pin.log3(rotation), atol=1e-9)
    assert np.all(np.isfinite(derivative))


def small_function():
    x, p = ca.SX.sym("x", 3), ca.SX.sym("p", 2, 2)
    return ca.Function("g1_test_small", [x, p], [ca.sin(x) * p[0, 1], ca.densify(ca.jacobian(ca.sin(x) * p[1, 0], x))])


def test_compiled_function_matches_the_interpreter(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    function = small_function()
    compiled = CompiledFunction(function)
    assert compiled.compiled and len(list((tmp_path / "g1_teleop" / "casadi").glob("g1_test_small-*.so"))) == 1
    x, p = np.array([0.1, 0.2, 0.3]), np.array([[1.0, 2.0], [3.0, 4.0]])
    expected = [np.asarray(v).ravel(order="F") for v in function(x, p)]
    for ours, theirs in zip(compiled(x, p), expected, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-15)
    again = CompiledFunction(function)  # from the cache: nothing compiled, same answers
    np.testing.assert_allclose(again(x, p)[1], expected[1])


def test_without_a_compiler_the_interpreter_answers_after_a_warning(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    with caplog.at_level(logging.WARNING):
        interpreted = CompiledFunction(small_function())
    assert not interpreted.compiled and "interpreter" in caplog.text
    x, p = np.array([0.1, 0.2, 0.3]), np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(interpreted(x, p)[0], np.sin(x) * 2.0)


def test_sparse_outputs_are_refused():
    x = ca.SX.sym("x", 3)
    with pytest.raises(ValueError, match="densify"):
        CompiledFunction(ca.Function("g1_test_sparse", [x], [ca.jacobian(ca.sin(x), x)]))
