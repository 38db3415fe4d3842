import numpy as np
import pytest

from g1_teleop.core.pinocchio_model import build_pinocchio_model
from g1_teleop.retarget.arm_ik import DualArmIK
from g1_teleop.retarget.gamepad_ik import GamepadArmTeleop, GamepadMapping, hand_twists

MAP = GamepadMapping(speed_m_s=0.2, deadzone=0.1)


def test_sticks_map_to_hand_velocities():
    axes = [0.0] * 6
    axes[1] = 1.0  # left stick full forward
    axes[3] = -0.55  # right stick half right (past the dead zone: (0.55 - 0.1) / 0.9 = 0.5)
    left, right = hand_twists(MAP, axes, [0] * 8)
    np.testing.assert_allclose(left, [0.2, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(right, [0, -0.1, 0, 0, 0, 0])


def test_shoulder_button_turns_forward_into_up():
    axes = [0.0] * 6
    axes[4] = -1.0  # right stick full back
    buttons = [0] * 8
    buttons[5] = 1
    _, right = hand_twists(MAP, axes, buttons)
    np.testing.assert_allclose(right, [0, 0, -0.2, 0, 0, 0])


def test_dead_zone_short_messages_and_nan_give_no_motion():
    assert not np.any(hand_twists(MAP, [0.05, -0.09, 0, 0, 0.1], [])[0])
    assert not np.any(np.concatenate(hand_twists(MAP, [], [])))
    assert not np.any(hand_twists(MAP, [float("nan")] * 6, [0] * 8)[0])


def test_mapping_is_validated():
    with pytest.raises(ValueError, match="speed_m_s"):
        GamepadMapping(speed_m_s=5.0)
    with pytest.raises(ValueError, match="left_up_button"):
        GamepadMapping(left_up_button=-1)


@pytest.fixture(scope="module")
def ik(robot):
    return DualArmIK(build_pinocchio_model(robot, floating_base=False), robot.joint_names)


def test_differential_step_moves_each_hand_in_the_commanded_direction(robot, ik):
    arms = robot.group("arms")
    q = robot.default_q.copy()
    left0, right0 = ik.end_effector_poses(q)
    for _ in range(10):  # 10 × 20 ms at 0.1 m/s forward (left) and up (right)
        q[arms] = ik.differential_step(q, [0.1, 0, 0, 0, 0, 0], [0, 0, 0.1, 0, 0, 0], dt=0.02, damping=0.001)
    left1, right1 = ik.end_effector_poses(q)
    np.testing.assert_allclose(left1[:3, 3] - left0[:3, 3], [0.02, 0, 0], atol=5e-4)
    np.testing.assert_allclose(right1[:3, 3] - right0[:3, 3], [0, 0, 0.02], atol=5e-4)
    # orientation held (zero angular velocity commanded)
    for before, after in ((left0, left1), (right0, right1)):
        angle = np.arccos(np.clip((np.trace(before[:3, :3].T @ after[:3, :3]) - 1) / 2, -1, 1))
        assert angle < 0.02


def test_differential_step_stays_bounded_at_a_singularity(robot, ik):
    arms = robot.group("arms")
    q = robot.default_q.copy()
    q[arms] = 0.0  # arms straight down: the elbow is singular
    q_next = ik.differential_step(q, [0, 0, -1.0, 0, 0, 0], [0, 0, -1.0, 0, 0, 0], dt=0.02)
    assert np.max(np.abs(q_next - q[arms])) < 0.5  # no joint whips
    assert np.all(q_next >= ik.q_lower) and np.all(q_next <= ik.q_upper)


def test_differential_step_rejects_bad_twists(robot, ik):
    with pytest.raises(ValueError, match="6 finite"):
        ik.differential_step(robot.default_q, [0, 0, float("nan"), 0, 0, 0], np.zeros(6), dt=0.02)


def test_gamepad_teleop_follows_the_sticks_without_drift(robot, ik):
    arms = robot.group("arms")
    teleop = GamepadArmTeleop(ik, MAP)
    q = robot.default_q.copy()
    left0, right0 = ik.end_effector_poses(q)
    axes = [0.0] * 6
    axes[1] = 1.0  # with the left shoulder button: left hand up at 0.2 m/s
    axes[3] = 1.0  # right hand to the left (inwards) at 0.2 m/s
    buttons = [0] * 8
    buttons[4] = 1
    previous = q[arms].copy()
    for k in range(26):  # 25 moving ticks × 20 ms = 0.1 m
        q[arms] = teleop.step(q, axes, buttons, dt=0.02 if k else 0.0)
        assert np.abs(q[arms] - previous).max() <= 2.0 * 0.02 + 1e-12  # max_joint_speed
        previous = q[arms].copy()
    for _ in range(50):  # sticks released: the hands settle on their targets
        q[arms] = teleop.step(q, [0.0] * 6, [0] * 8, dt=0.02)
    left1, right1 = ik.end_effector_poses(q)
    np.testing.assert_allclose(left1[:3, 3] - left0[:3, 3], [0, 0, 0.1], atol=2e-3)
    np.testing.assert_allclose(right1[:3, 3] - right0[:3, 3], [0, 0.1, 0], atol=2e-3)


def test_gamepad_teleop_is_calm_at_the_edge_of_the_workspace(robot, ik):
    arms = robot.group("arms")
    teleop = GamepadArmTeleop(ik, MAP, max_lead_m=0.05)
    q = robot.default_q.copy()
    axes = [0.0] * 6
    axes[1] = 1.0  # left hand forward for 6 s: far beyond its reach at this height
    speeds = []
    for k in range(300):
        before = q[arms].copy()
        q[arms] = teleop.step(q, axes, [0] * 8, dt=0.02 if k else 0.0)
        speeds.append(np.abs(q[arms] - before).max() / 0.02)
    hand = ik.end_effector_poses(q)[0][:3, 3]
    assert np.linalg.norm(teleop.pelvis_T_targets[0][:3, 3] - hand) <= 0.05 + 1e-9  # no wind-up
    assert max(speeds[-100:]) < 0.5  # settled at the boundary, not chattering
