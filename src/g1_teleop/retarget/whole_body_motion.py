"""Known G1 motions and the operator body points that would make the whole-body retargeting reproduce them: the
round trip that checks the retargeting without motion-capture data. ROS-free.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from g1_teleop.core.body_points import BODY_POINT_COUNT
from g1_teleop.core.rotations import wxyz_from_rpy
from g1_teleop.retarget.whole_body import WholeBodyRetargeter
from g1_teleop.retarget.whole_body_problem import BASE_SIZE

# (segment, duration s); each starts and ends at the default pose, at rest
DEMO_SEGMENTS = (("stand", 2.0), ("arm_swings", 4.0), ("waist_turns", 4.0), ("squat", 4.0), ("all_turning", 4.0))


@dataclass(frozen=True, eq=False)
class RobotMotion:
    """N robot poses: ``stamps`` (N,) s, pelvis ``base_position`` (N, 3) m and ``base_wxyz`` (N, 4) in the world,
    ``joints`` (N, 29) DDS order, rad."""

    stamps: np.ndarray
    base_position: np.ndarray
    base_wxyz: np.ndarray
    joints: np.ndarray


def demo_motion(retargeter: WholeBodyRetargeter, rate_hz: float = 30.0) -> RobotMotion:
    """``DEMO_SEGMENTS`` at ``rate_hz``: standing still, arm swings, waist turns, a squat (feet flat), then all
    of them while the pelvis turns 0.4 rad about the vertical; joints within their limits and under 3 rad/s.
    The pelvis height keeps the lower toe frame where it is when the robot stands on the floor."""
    robot = retargeter.robot
    index = {name: i for i, name in enumerate(robot.joint_names)}
    stamps = np.arange(0.0, sum(d for _, d in DEMO_SEGMENTS), 1.0 / rate_hz)
    joints = np.tile(robot.default_q, (stamps.size, 1))
    yaw = np.zeros(stamps.size)
    start = 0.0
    for name, duration in DEMO_SEGMENTS:
        inside = (stamps >= start) & (stamps < start + duration)
        t = stamps[inside] - start
        envelope = np.sin(math.pi * t / duration) ** 2  # 0 with zero slope at both ends
        rows = joints[inside]
        if name in ("arm_swings", "all_turning"):
            swing = envelope * np.sin(2.0 * math.pi * 0.5 * t)
            for side, sign in (("left", 1.0), ("right", -1.0)):
                rows[:, index[f"{side}_shoulder_pitch_joint"]] += 0.7 * sign * swing
                rows[:, index[f"{side}_shoulder_roll_joint"]] += sign * 0.3 * envelope
                rows[:, index[f"{side}_shoulder_yaw_joint"]] += 0.3 * swing
                rows[:, index[f"{side}_elbow_joint"]] += 0.4 * swing
                rows[:, index[f"{side}_wrist_roll_joint"]] += 0.5 * swing
                rows[:, index[f"{side}_wrist_pitch_joint"]] -= 0.4 * swing
                rows[:, index[f"{side}_wrist_yaw_joint"]] += 0.3 * envelope
        if name in ("waist_turns", "all_turning"):
            rows[:, index["waist_yaw_joint"]] += 0.6 * envelope * np.sin(2.0 * math.pi * 0.25 * t)
            rows[:, index["waist_roll_joint"]] += 0.15 * envelope * np.sin(2.0 * math.pi * 0.5 * t)
            rows[:, index["waist_pitch_joint"]] += 0.25 * envelope
        if name in ("squat", "all_turning"):
            bend = 0.55 * envelope  # hip −a, knee +2a, ankle −a keeps the feet parallel to the pelvis
            for side in ("left", "right"):
                rows[:, index[f"{side}_hip_pitch_joint"]] -= bend
                rows[:, index[f"{side}_knee_joint"]] += 2.0 * bend
                rows[:, index[f"{side}_ankle_pitch_joint"]] -= bend
        if name == "all_turning":
            yaw[inside] = 0.4 * (1.0 - np.cos(math.pi * t / duration)) / 2.0
        joints[inside] = rows
        start += duration
    joints = np.clip(joints, robot.q_lower, robot.q_upper)
    base_wxyz = np.array([wxyz_from_rpy(0.0, 0.0, float(a)) for a in yaw])
    base_position = np.zeros((stamps.size, 3))
    feet = [retargeter.links.index(link) for link in ("left_toe_link", "right_toe_link")]
    for i in range(stamps.size):
        x = np.concatenate([np.zeros(BASE_SIZE), joints[i]])
        poses = retargeter.problem.link_poses(x, base_wxyz[i])
        base_position[i, 2] = retargeter.floor_toe_height_m - min(poses[k][2, 3] for k in feet)
    return RobotMotion(stamps, base_position, base_wxyz, joints)


def body_frames(retargeter: WholeBodyRetargeter, motion: RobotMotion,
                scales: dict[str, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The operator's body points (N, 24, 3) m and orientations (N, 24, 4), XRobot's order, for which the
    retargeting gives ``motion`` (``WholeBodyRetargeter.body_points``; scales: the operator's, default the
    retargeter's)."""
    positions = np.zeros((motion.stamps.size, BODY_POINT_COUNT, 3))
    quat = np.zeros((motion.stamps.size, BODY_POINT_COUNT, 4))
    for i in range(motion.stamps.size):
        positions[i], quat[i] = retargeter.body_points(motion.base_position[i], motion.base_wxyz[i],
                                                       motion.joints[i], scales)
    return positions, quat
