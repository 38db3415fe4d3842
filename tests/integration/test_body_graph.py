"""The whole-body path in the simulated graph: `g1-teleop body-stream demo` writes a body stream, `g1-teleop sim
--body-stream --body-squat` plays it through xr_input (source body) and body_retarget: after the standing
calibration the waist and the arms follow the known motion behind the stream, at the simulator's joints, while the
built-in controller keeps the robot standing; when the operator squats, the robot's pelvis goes down with theirs
(teleop/squat_height), and nothing falls. The whole retargeted robot body_retarget publishes for tools (the run's bag:
teleop/body_configuration, body_base, body_links) is the known motion's, legs and pelvis included, and its waist and
arms are what went to the policy on teleop/arm_target."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from g1_teleop.control.standing_controller import StandingConfig
from g1_teleop.core.rosbag import read_bag
from g1_teleop.retarget.whole_body import WholeBodyRetargeter
from g1_teleop.retarget.whole_body_motion import demo_motion
from g1_teleop.ros.body_messages import RETARGET_WORLD

pytestmark = pytest.mark.integration

RATE_HZ = 15.0  # body frames per second (PICO streams its body at about this order; fewer frames: a faster test)
DURATION_S = 13.0  # standing still 2 s (calibration), arm swings 4 s, waist turns 4 s, the squat's first 3 s
SQUAT_S = 10.0  # the squat starts


def test_a_body_stream_drives_the_waist_and_arms_while_the_robot_stands(sim_job, robot, tmp_path):
    stream = tmp_path / "body.npz"
    made = subprocess.run([sys.executable, "-m", "g1_teleop.tools.cli", "body-stream", "demo", str(stream),
                           "--rate", str(RATE_HZ)], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0 and stream.exists(), made.stdout + made.stderr
    run = sim_job("--body-stream", str(stream), "--body-squat", "--duration", str(DURATION_S), name="body")

    summary, log = run.summary, (run.out / "nodes.log").read_text()
    assert summary["fell"] is False, summary
    assert summary["nodes_alive"] == summary["nodes_total"] == 5
    assert "body_retarget]: calibrated" in log and "[WARN]" not in log.split("calibrated")[1], log[-3000:]

    motion = demo_motion(WholeBodyRetargeter(robot), RATE_HZ)  # what the stream was made from
    recording = np.load(run.out / "recording.npz")
    arms, waist = robot.group("arms"), robot.group("waist")

    def held(t: np.ndarray) -> np.ndarray:
        """The demo's joints (N, 29) of the body frame in force at times t (s)."""
        return motion.joints[np.searchsorted(motion.stamps, t + 1e-6, side="right") - 1]

    # body_retarget's arm targets are the known motion's arm joints (over DDS, through the real nodes)
    t_arm = recording["arm_target_t"]
    following = t_arm > 2.1
    arm_error = np.abs(recording["arm_target_q"][following] - held(t_arm[following])[:, arms])

    # what reaches the simulator: the operator's waist, clipped to the standing controller's limits and moved at
    # most its step a tick (control.standing_controller), from 0 until the calibration ends at 2 s
    limit, step = np.array(StandingConfig().waist_limit_rad), StandingConfig().waist_step_limit_rad
    t_cmd, commanded = recording["command_t"], recording["command_q"][:, waist]
    expected, w = np.zeros_like(commanded), np.zeros(3)
    for i, goal in enumerate(np.clip(held(t_cmd)[:, waist], -limit, limit)):
        w = w + np.clip((goal if t_cmd[i] >= 2.0 - 1e-6 else 0.0) - w, -step, step)
        expected[i] = w
    waist_error = np.abs(commanded - expected)
    t_state, q = recording["state_t"], recording["state_q"]
    lag = np.abs(q[:, waist] - np.array([np.interp(t_state, t_cmd, commanded[:, j]) for j in range(3)]).T)
    print(f"\narm targets vs the motion p95 {np.percentile(arm_error, 95):.4f} rad; commanded waist vs expected "
          f"p95 {np.percentile(waist_error, 95):.4f} max {waist_error.max():.4f} rad; measured waist vs commanded "
          f"p95 {np.percentile(lag, 95):.4f} rad; waist yaw {q[:, waist[0]].min():.2f}…{q[:, waist[0]].max():.2f}")
    assert following.sum() > 0.9 * 50 * (DURATION_S - 2.2) and np.percentile(arm_error, 95) < 0.05
    assert np.percentile(waist_error, 95) < 0.02 and waist_error.max() < 0.05
    assert np.percentile(lag, 95) < 0.05
    # the waist turned both ways and leaned as the operator did
    assert q[:, waist[0]].max() > 0.25 and q[:, waist[0]].min() < -0.25 and q[:, waist[2]].max() > 0.18

    # body_squat: standing (the operator's pelvis scaled to the robot's is above the controller's 0.75 m top) until
    # the operator squats; then the robot's pelvis follows theirs down (0.64 m at the bottom, 1.2 s after the squat
    # starts; the command moves at most 0.08 m/s, full stick) and stands again
    t_odom, z = recording["odom_t"], recording["odom_p"][:, 2]
    operator_z = motion.base_position[:, 2]
    bottom = motion.stamps[np.argmin(operator_z)]
    print(f"pelvis before the squat {z[t_odom < SQUAT_S].min():.3f} m; at the operator's bottom ({bottom:.1f} s, "
          f"{operator_z.min():.3f} m) the robot's {np.interp(bottom + 0.5, t_odom, z):.3f} m; lowest {z.min():.3f} m")
    assert z[t_odom < SQUAT_S].min() > 0.72
    assert np.interp(bottom + 0.5, t_odom, z) < 0.69 and z.min() > operator_z.min() - 0.04

    # the whole retargeted robot for tools, once per body frame after the calibration: the 29 joints (their waist and
    # arms exactly the arm target of the same stamp, the legs the motion's), the pelvis and the 14 tracked links
    check_whole_body(run.out / "bag", robot, motion)


def check_whole_body(bag_dir, robot, motion) -> None:
    """The run's bag: body_retarget's whole robot against its arm targets and the known motion."""
    bag = read_bag(bag_dir, ["teleop/arm_target", "teleop/body_configuration", "teleop/body_base", "teleop/body_links"])

    def stamp(msg) -> int:
        return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec

    targets = {stamp(m.msg): m.msg for m in bag.get("teleop/arm_target")}
    configurations = [m.msg for m in bag.get("teleop/body_configuration")]
    bases = {stamp(m.msg): m.msg for m in bag.get("teleop/body_base")}
    links = {stamp(m.msg): m.msg for m in bag.get("teleop/body_links")}
    assert len(configurations) > 0.9 * 50 * (DURATION_S - 2.2), len(configurations)  # lockstep: each period
    legs = robot.group("legs")
    upper_error, leg_error, base_error = [], [], []
    for msg in configurations:
        t = stamp(msg)
        assert list(msg.name) == list(robot.joint_names) and np.all(np.isfinite(msg.position))
        q = np.asarray(msg.position)
        target = targets[t]  # the answer of the same body frame
        assert len(target.name) == 17
        upper_error.append(np.abs(q[[robot.joint_names.index(n) for n in target.name]] - target.position).max())
        frame = np.searchsorted(motion.stamps, t / 1e9 + 1e-6, side="right") - 1  # the motion's pose behind it
        leg_error.append(np.abs(q[legs] - motion.joints[frame, legs]).max())
        base, poses = bases[t], links[t].poses
        assert base.header.frame_id == links[t].header.frame_id == RETARGET_WORLD and len(poses) == 14
        p = base.pose.position
        base_error.append(np.linalg.norm([p.x, p.y, p.z] - motion.base_position[frame]))
        assert (poses[0].position.x, poses[0].position.y, poses[0].position.z) == pytest.approx((p.x, p.y, p.z))
        assert np.all(np.isfinite([(pose.position.x, pose.position.y, pose.position.z, pose.orientation.w)
                                   for pose in poses]))
    print(f"whole body: {len(configurations)} frames; waist and arms vs arm_target max {max(upper_error):.1e} rad; "
          f"legs vs the motion p95 {np.percentile(leg_error, 95):.1e} rad; pelvis p95 "
          f"{np.percentile(base_error, 95) * 1e3:.1e} mm")
    assert max(upper_error) == 0.0
    assert np.percentile(leg_error, 95) < 0.01 and np.percentile(base_error, 95) < 0.005
