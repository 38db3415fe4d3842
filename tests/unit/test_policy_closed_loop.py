"""OpenWBT's policies in closed loop with the MuJoCo simulator (no ROS, no gantry), against reference
figures of these policies in MuJoCo: control 0.02 s, physics 0.005 s, joint PD from the policy's kps/kds.

The observation reads the simulator's state as the bridges publish it (IMU orientation and gyro of the
current step: with one step of lag the locomotion policy falls, so this test also guards that).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from g1_teleop.control.learned.gait_clock import BipedalGaitClock, gait_clock_for
from g1_teleop.control.learned.inference import PolicyInference
from g1_teleop.control.learned.observations import build_observation
from g1_teleop.control.learned.policy_config import LearnedPolicyConfig, load_policy_config
from g1_teleop.core.limits import JointCommand
from g1_teleop.sim.simulator import SimConfig, Simulator

SHARED_POLICIES = Path(__file__).resolve().parents[3] / "shared" / "policies" / "openwbt"
STAND = np.array([0.75, 0.0])  # squat command at the top clamp: height (m), pitch (rad)
FALLEN_Z = 0.7  # m: pelvis below this while standing or walking is a fall


@pytest.fixture(scope="module")
def configs() -> tuple[LearnedPolicyConfig, LearnedPolicyConfig]:
    if not (SHARED_POLICIES / "squat.onnx").is_file():
        pytest.skip(f"OpenWBT policies not found at {SHARED_POLICIES}: the reference data is not beside the repo")
    return (load_policy_config(SHARED_POLICIES / "g1_squat.yaml", SHARED_POLICIES),
            load_policy_config(SHARED_POLICIES / "g1_loco.yaml", SHARED_POLICIES))


class ClosedLoop:
    """One control tick = observation → policy → 29-joint target → 4 physics steps of joint PD."""

    def __init__(self, robot, mj_model, squat: LearnedPolicyConfig, loco: LearnedPolicyConfig) -> None:
        self.sim = Simulator(robot, mj_model, SimConfig(physics_dt=0.005, control_dt=0.02, gantry=False))
        self.squat, self.loco = squat, loco
        self.squat_policy, self.loco_policy = PolicyInference(squat), PolicyInference(loco)
        self.clock = gait_clock_for(loco)
        assert isinstance(self.clock, BipedalGaitClock)
        self.target = np.array(squat.default_angles)  # arms at the squat default pose
        self.pelvis: list[np.ndarray] = []

    def squat_tick(self, command: np.ndarray) -> None:
        obs = build_observation(self.squat, self.sim.state(), command, self.squat_policy.last_action)
        self.target = self.squat_policy.joint_targets(self.squat_policy.act(obs), self.target)
        self._apply(self.squat)

    def loco_tick(self, command: np.ndarray, stopped: bool = False) -> None:
        obs = build_observation(self.loco, self.sim.state(), command, self.loco_policy.last_action,
                                self.clock.step(stopped))
        self.target = self.loco_policy.joint_targets(self.loco_policy.act(obs), self.target)
        self._apply(self.loco)

    def _apply(self, config: LearnedPolicyConfig) -> None:
        self.sim.step_control_period(JointCommand.hold(self.target, config.kps, config.kds))
        self.pelvis.append(self.sim.data.qpos[:3].copy())

    def z(self, last: int) -> np.ndarray:
        return np.array([p[2] for p in self.pelvis[-last:]])


def test_squat_policy_stands_and_squats(robot, mj_model, configs) -> None:
    loop = ClosedLoop(robot, mj_model, *configs)
    start_xy = loop.sim.data.qpos[:2].copy()
    for _ in range(500):  # 10 s
        loop.squat_tick(STAND)
    assert loop.z(500).min() > FALLEN_Z
    standing = loop.z(250)  # last 5 s; reference: 0.776–0.779
    assert standing.min() > 0.771 and standing.max() < 0.784, (standing.min(), standing.max())
    assert np.linalg.norm(loop.sim.data.qpos[:2] - start_xy) < 0.05

    command, rate = STAND.copy(), loop.squat.max_cmd[0] / 250.0  # full stick: 0.0016 m per tick
    ramp_ticks = 0
    while command[0] > 0.5:
        command[0] = max(0.5, command[0] - rate)
        loop.squat_tick(command)
        ramp_ticks += 1
    assert ramp_ticks == 157  # 0.25 m at 0.08 m/s: 3.125 s
    for _ in range(100):
        loop.squat_tick(command)
    squatting = loop.z(50)  # reference: holds 0.502
    assert abs(squatting.mean() - 0.50) < 0.03 and np.ptp(squatting) < 0.01, squatting.mean()

    while command[0] < 0.75:
        command[0] = min(0.75, command[0] + rate)
        loop.squat_tick(command)
    for _ in range(100):
        loop.squat_tick(command)
    assert loop.z(50).min() > 0.771  # reference: back to 0.779
    arms = robot.group("arms")
    assert np.abs(loop.target[arms] - loop.squat.default_angles[arms]).max() == 0.0


def test_loco_policy_walks_forward(robot, mj_model, configs) -> None:
    loop = ClosedLoop(robot, mj_model, *configs)
    for _ in range(100):
        loop.squat_tick(STAND)
    # OpenWBT's squat→loco transition: the squat policy keeps the legs while the arms blend to the loco pose
    stored, arms = loop.target.copy(), robot.group("arms")
    for count in range(loop.loco.transition_ticks, 0, -1):
        alpha = count / loop.loco.transition_ticks
        loop.target[arms] = (alpha * stored + (1 - alpha) * loop.loco.default_angles)[arms]
        loop.squat_tick(STAND)
    start = loop.sim.data.qpos[:2].copy()
    for _ in range(350):  # vx = 0.3 m/s for 7 s
        loop.loco_tick(np.array([0.3, 0.0, 0.0]))
    walked = loop.sim.data.qpos[:2] - start
    for _ in range(100):  # stance: zero command, gait clock stopped
        loop.loco_tick(np.zeros(3), stopped=True)
    assert loop.z(len(loop.pelvis)).min() > FALLEN_Z
    assert abs(walked[0] - 2.16) < 0.25 * 2.16, walked  # reference: 2.16 m at the end of the command
    assert abs(walked[1]) < 0.5, walked  # reference: drifts 0.30 m left
    assert loop.z(50).min() > 0.76
