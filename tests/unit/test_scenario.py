"""Scenario files: parsing and validation errors, interpolation, and the default scenario (reachable,
slow, long enough, keyframes equal to the forward kinematics named in its comments)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from g1_teleop.core.paths import config_path
from g1_teleop.core.pinocchio_model import build_pinocchio_model
from g1_teleop.core.robot_description import ARM_INDICES, LEFT_ARM_INDICES, RIGHT_ARM_INDICES, load_robot
from g1_teleop.operator.scenario import Scenario, ScenarioError, minimum_jerk
from g1_teleop.operator.xr_frames import DEFAULT_WORLD_T_HEAD
from g1_teleop.retarget.arm_ik import DualArmIK

DEFAULT = config_path("scenarios", "default.yaml")

TWO_KEYFRAMES = """
keyframes:
  - t: 0.0
    left_wrist: {position: [0.1, 0.2, 0.3], rpy: [0.0, 0.0, 0.0]}
    right_wrist: {position: [0.1, -0.2, 0.3], quat_wxyz: [1.0, 0.0, 0.0, 0.0]}
  - t: 4.0
    left_wrist: {position: [0.5, 0.2, 0.7], rpy: [0.0, 0.0, 1.2]}
"""

FIRST = (
    "  - t: 0.0\n"
    "    left_wrist: {position: [0, 0, 0], rpy: [0, 0, 0]}\n"
    "    right_wrist: {position: [0, 0, 0], rpy: [0, 0, 0]}\n"
)


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def rotation_angle(A: np.ndarray, B: np.ndarray) -> float:
    return float(np.linalg.norm(pin.log3(A.T @ B)))


# --- interpolation ---------------------------------------------------------------------------------


def test_minimum_jerk_profile() -> None:
    assert minimum_jerk(0.0) == 0.0 and minimum_jerk(1.0) == 1.0
    assert minimum_jerk(0.5) == pytest.approx(0.5)
    assert minimum_jerk(0.25) == pytest.approx(10 / 64 - 15 / 256 + 6 / 1024)
    assert minimum_jerk(-1.0) == 0.0 and minimum_jerk(2.0) == 1.0
    h = 1e-4  # zero slope at both ends
    assert minimum_jerk(h) / h < 1e-6 and (1.0 - minimum_jerk(1.0 - h)) / h < 1e-6


def test_samples_follow_the_keyframes(tmp_path: Path) -> None:
    scenario = Scenario.load(write(tmp_path, TWO_KEYFRAMES))
    assert scenario.duration == 4.0
    assert scenario.sample_rate_hz == 60.0  # the default
    start, end = scenario.sample(0.0), scenario.sample(4.0)
    assert start.pelvis_T_left_wrist[:3, 3] == pytest.approx([0.1, 0.2, 0.3])
    assert end.pelvis_T_left_wrist[:3, 3] == pytest.approx([0.5, 0.2, 0.7])
    yaw = 1.2
    assert end.pelvis_T_left_wrist[:3, :3] == pytest.approx(
        np.array([[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0], [0, 0, 1]])
    )
    # minimum-jerk timing in position and rotation
    quarter = scenario.sample(1.0)
    s = minimum_jerk(0.25)
    assert quarter.pelvis_T_left_wrist[:3, 3] == pytest.approx([0.1 + 0.4 * s, 0.2, 0.3 + 0.4 * s])
    assert rotation_angle(np.eye(3), quarter.pelvis_T_left_wrist[:3, :3]) == pytest.approx(1.2 * s)
    middle = scenario.sample(2.0)
    assert rotation_angle(np.eye(3), middle.pelvis_T_left_wrist[:3, :3]) == pytest.approx(0.6)
    # a wrist the second keyframe leaves out holds still
    for t in (0.0, 1.3, 4.0):
        assert scenario.sample(t).pelvis_T_right_wrist == pytest.approx(start.pelvis_T_right_wrist)
    # outside [0, duration] the end values hold
    assert scenario.sample(-1.0).pelvis_T_left_wrist == pytest.approx(start.pelvis_T_left_wrist)
    assert scenario.sample(10.0).pelvis_T_left_wrist == pytest.approx(end.pelvis_T_left_wrist)
    assert scenario.sample(2.0).t == 2.0


def test_rotations_take_the_shorter_arc(tmp_path: Path) -> None:
    text = """
keyframes:
  - t: 0.0
    left_wrist: {position: [0, 0, 0], quat_wxyz: [1, 0, 0, 0]}
    right_wrist: {position: [0, 0, 0], quat_wxyz: [1, 0, 0, 0]}
  - t: 1.0
    left_wrist: {position: [0, 0, 0], quat_wxyz: [-0.9800666, 0, 0, -0.1986693]}
"""
    # −q is the same 0.4 rad turn about z as q: the middle is 0.2 rad, not π − 0.2
    middle = Scenario.load(write(tmp_path, text)).sample(0.5).pelvis_T_left_wrist[:3, :3]
    assert rotation_angle(np.eye(3), middle) == pytest.approx(0.2, abs=1e-6)


def test_rpy_is_roll_about_x_then_pitch_about_y_then_yaw_about_z(tmp_path: Path) -> None:
    text = """
keyframes:
  - t: 0.0
    left_wrist: {position: [0, 0, 0], rpy: [0.3, -0.5, 1.1]}
    right_wrist: {position: [0, 0, 0], quat_wxyz: [1, 0, 0, 0]}
"""
    left = Scenario.load(write(tmp_path, text)).sample(0.0).pelvis_T_left_wrist[:3, :3]
    Rz = pin.AngleAxis(1.1, np.array([0.0, 0.0, 1.0])).matrix()
    Ry = pin.AngleAxis(-0.5, np.array([0.0, 1.0, 0.0])).matrix()
    Rx = pin.AngleAxis(0.3, np.array([1.0, 0.0, 0.0])).matrix()
    assert left == pytest.approx(Rz @ Ry @ Rx)
    assert left == pytest.approx(pin.rpy.rpyToMatrix(0.3, -0.5, 1.1))  # the convention of pinocchio.rpy


def test_head_defaults_and_joystick_holds(tmp_path: Path) -> None:
    text = """
sample_rate_hz: 90
keyframes:
  - t: 0.0
    left_wrist: {position: [0, 0, 0], rpy: [0, 0, 0]}
    right_wrist: {position: [0, 0, 0], rpy: [0, 0, 0]}
  - t: 1.0
    joy: {axes: [0.5, -1.0], buttons: [0, 1]}
  - t: 2.0
    head: {position: [0.2, 0.0, 1.7], rpy: [0, 0, 0]}
    joy: {axes: [0.0, 0.0]}
"""
    scenario = Scenario.load(write(tmp_path, text))
    assert scenario.sample_rate_hz == 90.0
    assert scenario.sample(0.5).world_T_head == pytest.approx(DEFAULT_WORLD_T_HEAD)
    assert scenario.sample(1.5).world_T_head[:3, 3] == pytest.approx([0.2, 0.0, 1.5 + 0.2 * minimum_jerk(0.5)])
    assert scenario.sample(0.99).joy_axes == () and scenario.sample(0.99).joy_buttons == ()
    assert scenario.sample(1.0).joy_axes == (0.5, -1.0)
    assert scenario.sample(1.99).joy_buttons == (0, 1)
    assert scenario.sample(2.5).joy_axes == (0.0, 0.0)
    assert scenario.sample(2.5).joy_buttons == (0, 1)  # carried over


def test_device_sample_times(tmp_path: Path) -> None:
    scenario = Scenario.load(write(tmp_path, "sample_rate_hz: 60\nkeyframes:\n" + FIRST))
    # a 200 Hz simulation clock: the device's samples stay at 60 Hz
    ticks = [k * 0.005 for k in range(201)]
    times = sorted({scenario.device_sample_time(t) for t in ticks})
    assert times == pytest.approx([k / 60 for k in range(61)])
    assert scenario.device_sample_time(0.5) == pytest.approx(0.5)  # exactly on a sample (30/60)
    assert scenario.device_sample_time(0.0249) == pytest.approx(1 / 60)


def test_time_must_be_finite(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="time must be finite"):
        Scenario.load(write(tmp_path, TWO_KEYFRAMES)).sample(float("nan"))


# --- tracking imperfections ------------------------------------------------------------------------

TRACKED = "tracking: {jitter_m: 0.005, dropout_every_s: 1.0, dropout_s: 0.2, seed: 3}\n" + TWO_KEYFRAMES


def test_jitter_has_the_stated_rms_and_is_a_function_of_the_device_sample(tmp_path: Path) -> None:
    noisy = Scenario.load(write(tmp_path, TRACKED))
    clean = noisy.clean()
    assert clean.tracking is None
    offsets = []
    for k in range(1200):  # device samples outside the dropouts (the first second has none)
        t = 10.0 + k / 60.0  # after the last keyframe: the true pose holds, the jitter does not
        if noisy.tracking.dropout_start(t) is None:
            for side in ("pelvis_T_left_wrist", "pelvis_T_right_wrist"):
                offsets.append(getattr(noisy.sample(t), side)[:3, 3] - getattr(clean.sample(t), side)[:3, 3])
    offsets = np.array(offsets)
    assert np.sqrt((offsets**2).sum(axis=1).mean()) == pytest.approx(0.005, rel=0.05)
    assert np.abs(offsets.mean(axis=0)).max() < 3e-4  # no bias
    assert np.corrcoef(offsets[:-2:2, 0], offsets[2::2, 0])[0, 1] == pytest.approx(0.0, abs=0.06)  # white
    # the same device sample gives the same noise (lockstep re-publication repeats it exactly)
    assert np.array_equal(noisy.sample(5.51).pelvis_T_left_wrist, noisy.sample(5.51 + 0.001).pelvis_T_left_wrist)
    # orientations and the head are the tracker's truth
    for t in (0.3, 2.5):
        assert noisy.sample(t).pelvis_T_left_wrist[:3, :3] == pytest.approx(clean.sample(t).pelvis_T_left_wrist[:3, :3])
        assert np.array_equal(noisy.sample(t).world_T_head, clean.sample(t).world_T_head)


def test_dropouts_hold_the_last_sample_then_jump_back(tmp_path: Path) -> None:
    noisy = Scenario.load(write(tmp_path, TRACKED.replace("jitter_m: 0.005", "jitter_m: 0.0")))
    clean = noisy.clean()
    before = clean.sample(2.0 - 1 / 60).pelvis_T_left_wrist  # the last sample before the dropout at 2 s
    for t in (2.0, 2.1, 2.199):
        assert np.array_equal(noisy.sample(t).pelvis_T_left_wrist, before)
    for t in (1.99, 2.2, 2.5, 0.5):  # tracked: the true pose
        assert np.array_equal(noisy.sample(t).pelvis_T_left_wrist, clean.sample(t).pelvis_T_left_wrist)
    assert np.linalg.norm(noisy.sample(2.2).pelvis_T_left_wrist[:3, 3] - before[:3, 3]) > 0.02  # the jump


# --- validation ------------------------------------------------------------------------------------



@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        ("- 1\n- 2\n", "", "expected a mapping, got list"),
        ("sample_rate_hz: 60\n", "", "missing key(s): keyframes"),
        ("keyframe: []\nkeyframes: []\n", "", "unknown key(s): keyframe (allowed: description, keyframes"),
        ("keyframes: []\n", "keyframes", "expected a non-empty list of keyframes"),
        ("sample_rate_hz: 0\nkeyframes:\n" + FIRST, "sample_rate_hz", "must be > 0, got 0.0"),
        ("sample_rate_hz: fast\nkeyframes:\n" + FIRST, "sample_rate_hz", "expected a finite number, got 'fast'"),
        ("description: 3\nkeyframes:\n" + FIRST, "description", "expected text, got int"),
        ("keyframes:\n" + FIRST.replace("t: 0.0", "t: 1.0"), "keyframes[0].t", "the first keyframe must be at t = 0"),
        ("keyframes:\n" + FIRST + "  - t: 0.0\n", "keyframes[1].t", "times must strictly increase: 0.0 follows 0.0"),
        ("keyframes:\n" + FIRST + "  - t: .nan\n", "keyframes[1].t", "expected a finite number, got nan"),
        ("keyframes:\n" + FIRST + "  - t: true\n", "keyframes[1].t", "expected a finite number, got True"),
        ("keyframes:\n  - t: 0\n    left_wrist: {position: [0, 0, 0], rpy: [0, 0, 0]}\n", "keyframes[0]",
         "missing key(s): right_wrist"),
        ("keyframes:\n" + FIRST + "  - t: 1\n    left_hand: {}\n", "keyframes[1]", "unknown key(s): left_hand"),
        ("keyframes:\n" + FIRST.replace("position: [0, 0, 0], rpy", "position: [0, 0], rpy", 1),
         "keyframes[0].left_wrist.position", "expected a list of 3 numbers, got [0, 0]"),
        ("keyframes:\n" + FIRST.replace("rpy: [0, 0, 0]}", "rpy: [0, 0, 0], quat_wxyz: [1, 0, 0, 0]}", 1),
         "keyframes[0].left_wrist", "give the orientation as exactly one of rpy or quat_wxyz"),
        ("keyframes:\n" + FIRST.replace("rpy: [0, 0, 0]}", "quat_wxyz: [1, 1, 0, 0]}", 1),
         "keyframes[0].left_wrist.quat_wxyz", "expected a unit quaternion, got norm 1.41421"),
        ("keyframes:\n" + FIRST.replace("rpy: [0, 0, 0]}", "rpy: [0, x, 0]}", 1),
         "keyframes[0].left_wrist.rpy[1]", "expected a finite number, got 'x'"),
        ("keyframes:\n" + FIRST + "  - t: 1\n    head: {position: [0, 0, 1]}\n", "keyframes[1].head",
         "give the orientation as exactly one of rpy or quat_wxyz"),
        ("keyframes:\n" + FIRST + "  - t: 1\n    joy: {axes: [1.5]}\n", "keyframes[1].joy.axes[0]",
         "must be within [-1, 1], got 1.5"),
        ("keyframes:\n" + FIRST + "  - t: 1\n    joy: {buttons: [0, 2]}\n", "keyframes[1].joy.buttons[1]",
         "expected 0 or 1, got 2"),
        ("keyframes:\n" + FIRST + "  - t: 1\n    joy: {axes: [0, 0]}\n  - t: 2\n    joy: {axes: [0]}\n",
         "keyframes[2].joy.axes", "expected 2 values like the earlier keyframes, got 1"),
        ("keyframes:\n" + FIRST + "  - t: 1\n    joy: {sticks: [0]}\n", "keyframes[1].joy",
         "unknown key(s): sticks"),
        ("tracking: {jitter_m: -0.1}\nkeyframes:\n" + FIRST, "tracking.jitter_m", "must be >= 0, got -0.1"),
        ("tracking: {seed: 1.5}\nkeyframes:\n" + FIRST, "tracking.seed", "expected an integer >= 0, got 1.5"),
        ("tracking: {dropout_s: 0.2, dropout_every_s: 0.1}\nkeyframes:\n" + FIRST, "tracking.dropout_every_s",
         "must exceed dropout_s (0.2 s), got 0.1"),
        ("tracking: {noise: 1}\nkeyframes:\n" + FIRST, "tracking", "unknown key(s): noise"),
    ],
)
def test_validation_errors_name_file_and_key(tmp_path: Path, text: str, key: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as error:
        Scenario.load(path)
    where = f"{path}:{key}: " if key else f"{path}: "
    assert str(error.value).startswith(where), str(error.value)
    assert message in str(error.value)


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"missing\.yaml: cannot read"):
        Scenario.load(tmp_path / "missing.yaml")
    with pytest.raises(ScenarioError, match=r"bad\.yaml: not valid YAML"):
        Scenario.load(write(tmp_path, "keyframes: [\n", "bad.yaml"))


# --- the default scenario --------------------------------------------------------------------------

# The arm angles the comments of default.yaml name for each keyframe that sets wrists (left, right).
START = ([0, 0.3, 0, 1.0, 0, 0, 0], [0, -0.3, 0, 1.0, 0, 0, 0])
VIA = ([-0.45, 0.225, 0, 0.75, 0, 0, 0], [-0.45, -0.225, 0, 0.75, 0, 0, 0])
REACH = ([-0.9, 0.15, 0, 0.5, 0, 0, 0], [-0.9, -0.15, 0, 0.5, 0, 0, 0])
MOVE = ([-1.3, 0.3, 0, 0.4, 0, 0, 0], [-0.9, -0.6, 0, 0.5, 0, 0, 0])
DEFAULT_KEYFRAME_ARMS = {0.0: START, 7.0: VIA, 11.0: REACH, 19.0: MOVE, 27.0: REACH, 31.0: VIA, 36.0: START}


@pytest.fixture(scope="module")
def ik() -> DualArmIK:
    robot = load_robot()
    return DualArmIK(build_pinocchio_model(robot), robot.joint_names)


@pytest.fixture(scope="module")
def default_scenario() -> Scenario:
    return Scenario.load(DEFAULT)


def test_default_scenario_shape(default_scenario: Scenario) -> None:
    assert default_scenario.duration >= 20.0
    assert default_scenario.sample_rate_hz == 60.0
    assert default_scenario.description


def test_default_keyframes_are_the_named_forward_kinematics(default_scenario: Scenario, ik: DualArmIK) -> None:
    robot = load_robot()
    assert robot.default_q[LEFT_ARM_INDICES] == pytest.approx(START[0])
    assert robot.default_q[RIGHT_ARM_INDICES] == pytest.approx(START[1])
    for t, (left_arm, right_arm) in DEFAULT_KEYFRAME_ARMS.items():
        q = np.zeros(len(robot.joint_names))
        q[LEFT_ARM_INDICES], q[RIGHT_ARM_INDICES] = left_arm, right_arm
        sample = default_scenario.sample(t)
        for fk, target in zip(ik.end_effector_poses(q), (sample.pelvis_T_left_wrist, sample.pelvis_T_right_wrist),
                              strict=True):
            assert np.abs(fk[:3, 3] - target[:3, 3]).max() < 1e-4  # rounded to 0.1 mm
            assert rotation_angle(fk[:3, :3], target[:3, :3]) < 3e-4  # rpy rounded to 1e-4 rad


def test_default_scenario_is_reachable_and_slow(default_scenario: Scenario, ik: DualArmIK) -> None:
    """The IK follows the scenario at the policy rate (50 Hz) with perfect tracking: every solve succeeds,
    every held target is reached, and no arm joint needs more than 0.4 rad/s."""
    robot = load_robot()
    ik.reset()
    q = robot.default_q.copy()
    dt = 0.02
    hold_ends = {round(t / dt) for t in (2.0, 14.0, 22.0, default_scenario.duration)}
    worst_speed = worst_error = 0.0
    for tick in range(round(default_scenario.duration / dt) + 1):
        sample = default_scenario.sample(tick * dt)
        result = ik.solve(sample.pelvis_T_left_wrist, sample.pelvis_T_right_wrist, q)
        assert result.ok
        worst_speed = max(worst_speed, np.abs(result.q_arm - q[ARM_INDICES]).max() / dt)
        q[ARM_INDICES] = result.q_arm
        if tick in hold_ends:
            worst_error = max(worst_error, result.pos_err_m.max())
    assert worst_speed < 0.4
    assert worst_error < 1e-3
