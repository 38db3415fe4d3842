"""Whole-body retargeting (GMR's method): the round trip of known G1 motions through the operator body points
that give them (the issue's acceptance: joints p95 ≤ 0.05 rad, tracked bodies p95 ≤ 3 cm), GMR's scale and
offset rules, calibration, the floor, and the joint and speed limits."""

import dataclasses
import math

import numpy as np
import pytest

from g1_teleop.core.body_points import XROBOT_BODY_POINTS
from g1_teleop.core.rotations import matrix_from_wxyz
from g1_teleop.operator.body_stream import BodyStream, load_body_stream, save_body_stream
from g1_teleop.retarget.self_collision import ClearanceMonitor
from g1_teleop.retarget.whole_body import WholeBodyRetargeter, calibrate
from g1_teleop.retarget.whole_body_config import XROBOT_TO_G1
from g1_teleop.retarget.whole_body_motion import DEMO_SEGMENTS, RobotMotion, body_frames, demo_motion


@pytest.fixture(scope="module")
def retargeter(robot, mj_model):
    return WholeBodyRetargeter(robot, mj_model=mj_model)


@pytest.fixture(scope="module")
def motion(retargeter):
    return demo_motion(retargeter, rate_hz=30.0)


def true_link_positions(retargeter, motion, i):
    x = np.concatenate([motion.base_position[i], np.zeros(3), motion.joints[i]])
    return retargeter.problem.link_poses(x, motion.base_wxyz[i])[:, :3, 3]


def run(retargeter, stream):
    retargeter.reset()
    return [retargeter.solve(float(t), p, q) for t, p, q in zip(stream.stamps, stream.positions, stream.quat_wxyz,
                                                                strict=True)]


def test_round_trip_of_known_motions_through_a_body_stream_file(retargeter, motion, robot, mj_model, tmp_path):
    monitor = ClearanceMonitor(robot, mj_model)
    assert min(monitor.clearance(q).distance_m for q in motion.joints) > retargeter.config.min_clearance_m
    moved = motion.joints.max(axis=0) - motion.joints.min(axis=0)
    assert np.all(moved[robot.group("arms")] > 0.25) and np.all(moved[robot.group("waist")] > 0.2)
    assert moved[robot.joint_names.index("left_knee_joint")] > 0.8
    assert np.ptp(motion.base_position[:, 2]) > 0.1  # the squat lowers the pelvis
    save_body_stream(tmp_path / "demo.npz", BodyStream(motion.stamps, *body_frames(retargeter, motion)))
    stream = load_body_stream(tmp_path / "demo.npz")

    frames = run(retargeter, stream)

    joints = np.array([f.joints for f in frames])
    joint_error = np.abs(joints - motion.joints)
    link_error = np.array([np.linalg.norm(f.link_poses[:, :3, 3] - true_link_positions(retargeter, motion, i),
                                          axis=1) for i, f in enumerate(frames)])
    assert np.percentile(joint_error, 95) <= 0.05
    assert np.percentile(link_error, 95) <= 0.03
    assert np.all(joints >= robot.q_lower - 1e-9) and np.all(joints <= robot.q_upper + 1e-9)
    base_error = np.linalg.norm(np.array([f.base_position for f in frames]) - motion.base_position, axis=1)
    assert np.percentile(base_error, 95) <= 0.03
    assert np.array([f.configuration.shape for f in frames]).tolist() == [[36]] * len(frames)


def test_targets_apply_gmr_scales_then_offsets(retargeter, robot):
    rng = np.random.default_rng(1)
    positions = rng.normal(0.0, 0.5, (24, 3)) + np.array([0.0, 0.0, 1.0])
    quat = rng.normal(size=(24, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    targets = retargeter.targets(positions, quat)
    pelvis = positions[XROBOT_BODY_POINTS.index("Pelvis")]
    shift = None
    for row, target in zip(XROBOT_TO_G1, targets, strict=True):
        point = XROBOT_BODY_POINTS.index(row.point)
        R = matrix_from_wxyz(quat[point]) @ matrix_from_wxyz(row.rotation_offset_wxyz)
        scaled = row.scale * (positions[point] - pelvis) + 0.9 * pelvis
        expected = scaled + R @ np.array(row.position_offset)
        np.testing.assert_allclose(target[:3, :3], R, atol=1e-12)
        np.testing.assert_allclose(target[:2, 3], expected[:2], atol=1e-12)
        shift = target[2, 3] - expected[2] if shift is None else shift
        assert target[2, 3] - expected[2] == pytest.approx(shift, abs=1e-12)  # one vertical shift for all
    feet = [k for k, row in enumerate(XROBOT_TO_G1) if row.point in ("Left_Foot", "Right_Foot")]
    assert targets[feet, 2, 3].min() == pytest.approx(retargeter.floor_toe_height_m, abs=1e-12)
    assert 0.0 < retargeter.floor_toe_height_m < 0.06  # the toe frame a little above the floor


def test_calibration_finds_a_bigger_operators_scales_and_retargets_them(robot, motion):
    retargeter = WholeBodyRetargeter(robot)
    operator_scale = {row.point: 0.75 for row in XROBOT_TO_G1}  # an operator 1/0.75 times the robot's size
    positions, quat = body_frames(retargeter, motion, operator_scale)
    stream = BodyStream(motion.stamps, positions, quat)

    calibration = calibrate(retargeter, stream.window(2.0).positions)

    for point, scale in calibration.scales.items():
        assert scale == pytest.approx(0.75, abs=1e-9), point
    assert calibration.height_ratio == pytest.approx(0.9 / 0.75)
    errors = {}
    for name, solver in (("calibrated", WholeBodyRetargeter(robot, calibration=calibration)),
                         ("gmr_table", retargeter)):  # GMR's fixed table (0.9 / 0.8) on this operator
        frames = run(solver, stream)
        joint_error = np.abs(np.array([f.joints for f in frames]) - motion.joints)
        link_error = [np.linalg.norm(f.link_poses[:, :3, 3] - true_link_positions(retargeter, motion, i), axis=1)
                      for i, f in enumerate(frames)]
        errors[name] = np.percentile(joint_error, 95), np.percentile(link_error, 95)
    assert errors["calibrated"][0] <= 0.05 and errors["calibrated"][1] <= 0.03
    assert errors["gmr_table"][1] > 0.015  # measured 0.028 m (joints 0.062 rad)
    assert errors["calibrated"][1] < errors["gmr_table"][1] / 5


def test_calibration_refuses_an_operator_who_moves(retargeter, motion):
    arm_swing = (motion.stamps >= DEMO_SEGMENTS[0][1]) & (motion.stamps < DEMO_SEGMENTS[0][1] + 2.0)
    swinging = RobotMotion(*(getattr(motion, f.name)[arm_swing] for f in dataclasses.fields(RobotMotion)))
    positions, _ = body_frames(retargeter, swinging)
    with pytest.raises(ValueError, match="stand still"):
        calibrate(retargeter, positions)


def test_joint_speed_and_position_limits(robot, retargeter):
    retargeter.reset()
    standing = retargeter.standing_x()
    reached = robot.default_q.copy()
    knee, shoulder = robot.joint_names.index("left_knee_joint"), robot.joint_names.index("left_shoulder_roll_joint")
    reached[shoulder] = robot.q_upper[shoulder] + 0.5  # beyond the limit: the points are made from it anyway
    positions, quat = retargeter.body_points(standing[:3], [1, 0, 0, 0], reached)
    first = retargeter.solve(0.0, *retargeter.body_points(standing[:3], [1, 0, 0, 0], robot.default_q))
    assert np.abs(first.joints - robot.default_q).max() < 1e-3
    dt = 1.0 / 30.0
    second = retargeter.solve(dt, positions, quat)
    step = np.abs(second.joints - first.joints)
    assert step.max() <= retargeter.config.max_joint_speed * dt + 1e-9
    assert step[shoulder] == pytest.approx(retargeter.config.max_joint_speed * dt, abs=1e-6)  # held at the limit
    later = [retargeter.solve(dt * k, positions, quat) for k in range(3, 40)][-1]
    assert later.joints[shoulder] == pytest.approx(robot.q_upper[shoulder], abs=1e-9)  # never beyond it
    assert abs(later.joints[knee] - robot.default_q[knee]) < 0.05
    assert math.isfinite(later.position_error_m.max())


def test_a_hand_driven_into_the_belly_keeps_its_clearance(robot, mj_model, retargeter):
    """The operator's left hand goes through the robot's trunk (the arm across the body, elbow bent): with the
    collision model the answers keep min_clearance_m (MuJoCo geoms); without it they go into collision."""
    monitor = ClearanceMonitor(robot, mj_model)
    across = robot.default_q.copy()
    across[robot.joint_names.index("left_shoulder_roll_joint")] = -0.3
    across[robot.joint_names.index("left_elbow_joint")] = 1.8
    assert monitor.clearance(across).distance_m < 0.0
    standing = retargeter.standing_x()
    stamps = np.arange(40) / 30.0
    poses = [robot.default_q + min(1.0, t) * (across - robot.default_q) for t in stamps]  # 1 s into it, held
    frames = [retargeter.body_points(standing[:3], [1, 0, 0, 0], q) for q in poses]
    free = WholeBodyRetargeter(robot)
    for solver, clear in ((retargeter, True), (free, False)):
        solver.reset()
        answers = [solver.solve(float(t), *frame) for t, frame in zip(stamps, frames, strict=True)]
        gaps = [monitor.clearance(a.joints).distance_m for a in answers]
        if clear:
            assert min(gaps) >= retargeter.config.min_clearance_m - 1e-3
            assert min(a.clearance_m for a in answers) >= retargeter.config.min_clearance_m - 1e-6
        else:
            assert min(gaps) < 0.0
