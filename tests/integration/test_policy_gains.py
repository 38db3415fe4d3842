"""teleop/gains on the simulation graph (four nodes as separate processes over DDS, lockstep): a subscriber sees
the gains of the controller in charge with its first command, and across mode switches the gains blend over
the switch's ticks, in step with the targets. The switches: the built-in controller standing (the robot's default
gains, waist 300/3) and a legs-only policy in unitree_rl_gym's layout walking (the preset's, waist 900/9), on
the gantry (the policy made here does not balance, support.tiny_policy)."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from g1_teleop.control.gains import JointGains
from support.policy_graph import TICK_NS, PolicyGraph, policy_graph
from support.shared_data import OPENWBT_POLICIES, shared_path
from support.tiny_policy import ACTION_SCALE, actions_after, write_tiny_loco_policy

pytestmark = pytest.mark.integration

TRANSITION_TICKS = 50  # the built-in controller's and the preset's (OpenWBT's 1 s)


def first_gains(g: PolicyGraph) -> JointGains:
    """The gains heard first, checked to come with the first command (same stamp)."""
    g.spin_until(lambda: bool(g.heard.gains and g.heard.commands))
    stamp = min(g.heard.gains)
    assert stamp == min(g.heard.commands), "the first gains come with the first command"
    return g.heard.gains[stamp]


@pytest.mark.parametrize("controller", ["hold", "openwbt"])
def test_each_controller_declares_its_gains_for_all_joints(rclpy_context, robot, controller):
    arguments = {"controller": controller, "gantry": "true"}
    expected = JointGains.profile(robot, "default")
    if controller == "openwbt":
        arguments["policy_dir"] = str(shared_path(OPENWBT_POLICIES))
        squat = yaml.safe_load((OPENWBT_POLICIES / "g1_squat.yaml").read_text())
        expected = JointGains(squat["kps"], squat["kds"])
    with policy_graph(rclpy_context, **arguments) as g:
        assert first_gains(g) == expected and g.heard.names[0] == list(robot.joint_names)
        g.spin_until(g.ticks_later(25))
        assert len(g.heard.gains) == 1  # unchanged gains are not published again


def test_gains_blend_across_mode_switches_in_step_with_the_targets(rclpy_context, robot, tmp_path):
    config = write_tiny_loco_policy(tmp_path / "policies")
    default = JointGains.profile(robot, "default")
    with policy_graph(rclpy_context, controller="builtin", loco_config=str(config), policy_dir=str(config.parent),
                      gantry="true") as g:
        assert first_gains(g) == default  # the built-in controller's
        g.spin_until(g.ticks_later(25))
        accepted = g.call("locomotion")
        assert accepted.success, accepted.message
        g.spin_until(lambda: g.heard.modes[-1:] == ["LOCOMOTION"])
        g.spin_until(g.ticks_later(30))  # the policy's state converges (by halves)
        assert g.call("squat").success
        g.spin_until(lambda: g.heard.modes[-1:] == ["SQUAT"])
        g.spin_until(g.ticks_later(10))
    heard = g.heard

    walking = yaml.safe_load(config.read_text())
    waist, legs = robot.group("waist"), robot.group("legs")
    preset = JointGains(np.r_[walking["kps"], walking["arm_waist_kps"]],  # legs 0–11, then waist and arms
                        np.r_[walking["kds"], walking["arm_waist_kds"]])
    stamps = sorted(heard.gains)
    kp = np.array([heard.gains[s].kp[waist[0]] for s in stamps])
    for s in stamps:  # every message is a whole tick k of a blend, kp and kd: only the waist differs
        k = round((heard.gains[s].kp[waist[0]] - 300.0) / 12.0)
        expected = default.interpolate(preset, k / TRANSITION_TICKS)
        np.testing.assert_allclose(heard.gains[s].kp, expected.kp, rtol=1e-12)
        np.testing.assert_allclose(heard.gains[s].kd, expected.kd, rtol=1e-12)
    # Up: the built-in controller keeps the legs while the waist goes 300 → 900 by 12 N·m/rad a tick, each step
    # at its tick's stamp; the policy's first target comes with the first 900.
    rising = [stamps[i + 1] for i in np.flatnonzero(np.diff(kp) > 0)]
    walk_start = rising[-1]
    assert heard.gains[walk_start].kp[waist[0]] == 900.0
    for s in rising:
        assert heard.gains[s].kp[waist[0]] == pytest.approx(900.0 - 12.0 * ((walk_start - s) // TICK_NS))
    first_target = np.array(walking["default_angles"]) + ACTION_SCALE * actions_after(1)
    np.testing.assert_allclose(heard.commands[walk_start][legs], first_target, atol=1e-6)
    assert not np.allclose(heard.commands[walk_start - TICK_NS][legs], first_target, atol=1e-6)  # still held
    # Down: both run; the first tick is the policy's alone, then targets and gains move together, 900 → 300.
    falling = [stamps[i + 1] for i in np.flatnonzero(np.diff(kp) < 0)]
    squat_start = falling[-1]
    assert heard.gains[squat_start].kp[waist[0]] == 300.0
    for s in falling:
        assert heard.gains[s].kp[waist[0]] == pytest.approx(300.0 + 12.0 * ((squat_start - s) // TICK_NS))
    converged = np.array(walking["default_angles"]) + ACTION_SCALE * actions_after(60)
    blend_start = squat_start - TRANSITION_TICKS * TICK_NS
    for s in (blend_start - TICK_NS, blend_start):  # LOCOMOTION, then the blend's first tick (fraction 0)
        np.testing.assert_allclose(heard.commands[s][legs], converged, atol=1e-6)
    for s in range(blend_start + TICK_NS, squat_start, TICK_NS):  # fractions 1/50 … 49/50 toward squatting
        if s in heard.commands:
            assert not np.allclose(heard.commands[s][legs], converged, atol=1e-6)
    print(f"\ngains messages: {len(stamps)}; rising {len(rising)} of 50 (312 … 900), falling {len(falling)} of 50 "
          f"(888 … 300); waist kp {kp.min():g} → {kp.max():g}; walk starts at {walk_start / 1e9:.2f} s, the blend "
          f"back ends at {squat_start / 1e9:.2f} s")
    assert len(rising) >= 40 and len(falling) >= 40  # a reliable depth-1 writer may drop one under load
