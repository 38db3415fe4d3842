"""The goal-seeking operator against a kinematic robot: the commanded body velocity, integrated in the
world frame, with the policy's dead band (|command| < 0.1 ignored) and 80 % of the commanded speed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from support.locomotion_goals import Goal, GoalKind, GoalSeeker, PlanarPose, SeekConfig, remaining

DT = 0.02


def kinematic_robot(seeker: GoalSeeker, pose: PlanarPose, seconds: float, gain: float = 0.8) -> PlanarPose:
    """Unicycle with lateral velocity; returns the final pose."""
    x, y, heading = pose.x, pose.y, pose.heading
    for k in range(round(seconds / DT)):
        command = np.array(seeker.command(k * DT, PlanarPose(x, y, heading)))
        command[np.abs(command) < 0.1] = 0.0
        vx, vy, wz = gain * command
        x += (math.cos(heading) * vx - math.sin(heading) * vy) * DT
        y += (math.sin(heading) * vx + math.cos(heading) * vy) * DT
        heading += wz * DT
    return PlanarPose(x, y, heading)


def test_heading_is_the_yaw_of_a_yaw_pitch_rotation():
    yaw, pitch = math.radians(30.0), 0.2
    # q = q_z(yaw) · q_y(pitch), written out
    cz, sz, cy, sy = math.cos(yaw / 2), math.sin(yaw / 2), math.cos(pitch / 2), math.sin(pitch / 2)
    quat = (cz * cy, -sz * sy, cz * sy, sz * cy)
    pose = PlanarPose.from_pose((1.0, 2.0, 0.7), quat)
    assert (pose.x, pose.y, pose.heading) == pytest.approx((1.0, 2.0, yaw))


def test_remaining_is_measured_along_the_start_pose_axes():
    start = PlanarPose(1.0, 1.0, math.pi / 2)  # facing world +y: its left is world −x
    moved = PlanarPose(0.7, 1.1, math.pi / 2)
    assert remaining(Goal(GoalKind.LATERAL, 0.5), start, moved) == pytest.approx(0.2)
    assert remaining(Goal(GoalKind.FORWARD, 0.5), start, moved) == pytest.approx(0.4)
    assert remaining(Goal(GoalKind.TURN, -math.pi * 0.9), start, PlanarPose(0, 0, math.pi * 0.9)) == pytest.approx(
        0.2 * math.pi)  # the short way round


def test_turn_then_side_step_reach_their_goals_and_stop():
    seeker = GoalSeeker([Goal(GoalKind.TURN, math.pi / 2), Goal(GoalKind.LATERAL, 0.5)])
    final = kinematic_robot(seeker, PlanarPose(0.0, 0.0, 0.05), seconds=30.0)
    assert seeker.done and all(o.reached for o in seeker.outcomes)
    assert abs(final.heading - math.pi / 2) < 0.03
    turn, step = seeker.outcomes
    left = np.array([-math.sin(step.start.heading), math.cos(step.start.heading)])
    assert np.array([final.x - step.start.x, final.y - step.start.y]) @ left == pytest.approx(0.5, abs=0.02)
    assert step.start_s == pytest.approx(turn.end_s + DT) and turn.end_s - turn.reached_s >= 1.0
    assert seeker.command(99.0, final) == (0.0, 0.0, 0.0)


def test_commands_full_stick_far_away_and_stay_above_the_dead_band_near_the_goal():
    cfg = SeekConfig()
    seeker = GoalSeeker([Goal(GoalKind.FORWARD, -1.0)], cfg)
    assert seeker.command(0.0, PlanarPose(0, 0, 0)) == (-cfg.max_linear_speed, 0.0, 0.0)
    assert seeker.command(0.02, PlanarPose(-0.95, 0, 0)) == (-cfg.min_linear_speed, 0.0, 0.0)
    assert seeker.command(0.04, PlanarPose(-0.8, 0, 0)) == pytest.approx((-0.2, 0.0, 0.0))


def test_a_goal_not_reached_in_time_ends_the_sequence_stopped():
    seeker = GoalSeeker([Goal(GoalKind.TURN, 1.0), Goal(GoalKind.LATERAL, 0.5)], SeekConfig(timeout_s=2.0))
    stuck = PlanarPose(0, 0, 0)
    commands = [seeker.command(k * DT, stuck) for k in range(200)]
    assert seeker.done and len(seeker.outcomes) == 1 and not seeker.outcomes[0].reached
    assert seeker.outcomes[0].error == pytest.approx(1.0) and commands[-1] == (0.0, 0.0, 0.0)


def test_configuration_errors_name_the_field():
    with pytest.raises(ValueError, match=r"min_angular_speed 0\.5 exceeds max_angular_speed 0\.3"):
        SeekConfig(min_angular_speed=0.5)
    with pytest.raises(ValueError, match="timeout_s must be positive"):
        SeekConfig(timeout_s=0.0)
    with pytest.raises(ValueError, match="target must be finite"):
        Goal(GoalKind.TURN, math.nan)
    with pytest.raises(ValueError, match="at least one goal"):
        GoalSeeker([])
