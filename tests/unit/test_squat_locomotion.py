"""SquatLocomotionController in closed loop with MuJoCo (no ROS, no gantry) on OpenWBT's policies (the learned
squat and walk parts): commands, refused and accepted mode switches, blends, and no fall through a whole
sequence; the gains of every tick are the command's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from g1_teleop.control.learned.policy_config import load_policy_config
from g1_teleop.control.learned.policy_parts import LearnedSquat, LearnedWalk
from g1_teleop.control.squat_locomotion import SquatLocomotionController
from g1_teleop.control.whole_body_target import WholeBodyTargetBuilder
from g1_teleop.core.limits import JointCommand
from g1_teleop.core.modes import Mode
from g1_teleop.sim.simulator import SimConfig, Simulator

SHARED_POLICIES = Path(__file__).resolve().parents[3] / "shared" / "policies" / "openwbt"


@pytest.fixture
def loop(robot, mj_model):
    if not (SHARED_POLICIES / "squat.onnx").is_file():
        pytest.skip(f"OpenWBT policies not found at {SHARED_POLICIES}: the reference data is not beside the repo")
    squat = load_policy_config(SHARED_POLICIES / "g1_squat.yaml", SHARED_POLICIES)
    loco = load_policy_config(SHARED_POLICIES / "g1_loco.yaml", SHARED_POLICIES)
    controller = SquatLocomotionController(LearnedSquat(robot, squat), LearnedWalk(robot, loco))
    sim = Simulator(robot, mj_model, SimConfig(gantry=False))
    builder = WholeBodyTargetBuilder(robot, controller)
    heights: list[float] = []

    def run(seconds: float, squat_rates=(0.0, 0.0), velocity=(0.0, 0.0, 0.0)) -> None:
        for _ in range(round(seconds / 0.02)):
            controller.command_squat(*squat_rates)
            controller.command_velocity(*velocity)
            target = builder.step(sim.state(), None, None)
            np.testing.assert_array_equal(target.gains.kp, squat.kps)  # OpenWBT's squat and loco kps are alike
            sim.step_control_period(JointCommand(target.q, np.zeros(29), target.tau_ff, target.gains.kp,
                                                 target.gains.kd))
            heights.append(sim.state().world_p_pelvis[2])

    return controller, sim, run, heights


def test_squat_walk_and_back_without_falling(loop):
    controller, sim, run, heights = loop
    run(2.0)
    assert controller.mode is Mode.SQUAT and heights[-1] > 0.76  # standing at h = 0.75
    run(3.2, squat_rates=(-1.0, 0.0))  # full stick down: 0.08 m/s → h = 0.5
    assert controller.squat.squat_command[0] == pytest.approx(0.5, abs=0.01)
    run(1.0)
    assert 0.47 < heights[-1] < 0.53
    reason = controller.request(Mode.LOCOMOTION)
    assert reason is not None and "stand up first" in reason
    run(3.5, squat_rates=(1.0, 0.0))  # back up to the top
    assert not controller.walking
    assert controller.request(Mode.LOCOMOTION) is None
    assert controller.walking and controller.mode is Mode.SQUAT  # walking from the request on
    run(1.2)  # 50-tick transition, then the locomotion policy
    assert controller.mode is Mode.LOCOMOTION and controller.walking
    x0 = sim.state().world_p_pelvis[0]
    run(4.0, velocity=(0.3, 0.0, 0.0))
    walked = sim.state().world_p_pelvis[0] - x0
    assert walked > 0.8  # ~0.3 m/s (reference: 0.32 m/s steady)
    refused = controller.request(Mode.SQUAT)  # still commanded at 0.3 m/s
    assert refused is not None and "stop first" in refused
    run(1.0)  # stopped: the command goes to zero
    assert controller.request(Mode.SQUAT) is None
    assert not controller.walking  # the blend back to SQUAT has begun
    run(2.0)
    assert controller.mode is Mode.SQUAT and not controller.transitioning
    assert min(heights) > 0.45 and heights[-1] > 0.74, min(heights)


def test_commands_are_clipped_and_dead_banded(loop):
    controller = loop[0]
    controller.command_squat(-1.0, 1.0)
    assert controller.squat.squat_command == pytest.approx([0.75 - 0.4 / 250, 0.5 / 250])
    controller.mode = Mode.LOCOMOTION  # commands only (no tick runs here)
    controller.command_velocity(1.0, 0.05, -0.2)
    np.testing.assert_allclose(controller.walk.command, [0.3, 0.0, -0.2])
