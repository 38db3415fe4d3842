"""Conversions between the topic contract's standard messages and the core's types: stamps, joint states and
commands, IMU samples, poses and odometry. Quaternions in the core are (w, x, y, z) (``g1_teleop.core.rotations``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState, Joy

from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.limits import JointCommand
from g1_teleop.core.rotations import position_wxyz, transform
from g1_teleop.hardware.wireless_remote import REMOTE_FRAME, WirelessRemote

IMU_FRAME = "imu_in_pelvis"


def stamp_ns(stamp: Time) -> int:
    """Nanoseconds of a builtin_interfaces/Time."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def stamp_s(stamp: Time) -> float:
    """Seconds of a builtin_interfaces/Time."""
    return stamp.sec + stamp.nanosec * 1e-9


def to_stamp(ns: int) -> Time:
    """builtin_interfaces/Time of nanoseconds."""
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def joint_state_msg(names: Sequence[str], stamp: Time, position: np.ndarray, velocity: np.ndarray | None = None,
                    effort: np.ndarray | None = None) -> JointState:
    """sensor_msgs/JointState of named joints (rad, rad/s, N·m); absent arrays stay empty."""
    msg = JointState(name=list(names), position=np.asarray(position, dtype=float).tolist(),
                     velocity=[] if velocity is None else np.asarray(velocity, dtype=float).tolist(),
                     effort=[] if effort is None else np.asarray(effort, dtype=float).tolist())
    msg.header.stamp = stamp
    return msg


def command_from_joint_state(msg: JointState, index: JointIndex, kp: np.ndarray, kd: np.ndarray) -> JointCommand:
    """A joint_command message as a JointCommand in ``index`` order: position = q*, velocity = dq* (0 when
    absent), effort = τff (0 when absent), with the given gains. Raises MalformedJointMessage."""
    vec = index.parse(msg.name, msg.position, msg.velocity, msg.effort)
    zeros = np.zeros(len(index))
    return JointCommand(q=vec.position, dq=zeros if vec.velocity is None else vec.velocity,
                        tau_ff=zeros if vec.effort is None else vec.effort, kp=kp, kd=kd)


def imu_msg(stamp: Time, world_q_imu: Sequence[float], gyro: Sequence[float], accel: Sequence[float],
            frame_id: str = IMU_FRAME) -> Imu:
    """sensor_msgs/Imu: orientation of the IMU in the world (w, x, y, z), angular velocity (rad/s) and specific
    force (m/s²), both in the IMU frame."""
    msg = Imu()
    msg.header.stamp, msg.header.frame_id = stamp, frame_id
    o, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
    o.w, o.x, o.y, o.z = (float(v) for v in world_q_imu)
    w.x, w.y, w.z = (float(v) for v in gyro)
    a.x, a.y, a.z = (float(v) for v in accel)
    return msg


def imu_orientation_wxyz(msg: Imu) -> np.ndarray:
    """(w, x, y, z) of an Imu message's orientation."""
    o = msg.orientation
    return np.array([o.w, o.x, o.y, o.z])


def pose_stamped_msg(a_T_b: np.ndarray, stamp: Time, frame_id: str) -> PoseStamped:
    """geometry_msgs/PoseStamped of frame b in frame a (``frame_id``), from a 4×4 transform (m)."""
    msg = PoseStamped()
    msg.header.stamp, msg.header.frame_id = stamp, frame_id
    position, q = position_wxyz(a_T_b)
    p, o = msg.pose.position, msg.pose.orientation
    p.x, p.y, p.z = (float(v) for v in position)
    o.w, o.x, o.y, o.z = (float(v) for v in q)
    return msg


def transform_from_pose_msg(msg: PoseStamped, tolerance: float = 1e-3) -> np.ndarray:
    """4×4 transform of a PoseStamped (m). ValueError when a value is not finite or the quaternion's norm is
    more than ``tolerance`` away from 1 (a nearly unit quaternion is normalised)."""
    p, o = msg.pose.position, msg.pose.orientation
    position, q = np.array([p.x, p.y, p.z]), np.array([o.w, o.x, o.y, o.z])
    if not (np.all(np.isfinite(position)) and np.all(np.isfinite(q))):
        raise ValueError("non-finite values (NaN or inf) in the pose")
    norm = float(np.linalg.norm(q))
    if abs(norm - 1.0) > tolerance:
        raise ValueError(f"orientation quaternion has norm {norm:.4f}, expected 1")
    return transform(position, q / norm)


def odom_msg(stamp: Time, world_p_body: Sequence[float], world_q_body: Sequence[float],
             body_v_body: Sequence[float], body_w_body: Sequence[float], frame_id: str = "world",
             child_frame_id: str = "pelvis") -> Odometry:
    """nav_msgs/Odometry of a body (``child_frame_id``) in the world (``frame_id``): position (m) and
    orientation (w, x, y, z) in the world; linear (m/s) and angular (rad/s) velocity in the body frame, as
    REP-105 puts the twist in the child frame. The covariances stay zero (unknown)."""
    msg = Odometry()
    msg.header.stamp, msg.header.frame_id, msg.child_frame_id = stamp, frame_id, child_frame_id
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    v, w = msg.twist.twist.linear, msg.twist.twist.angular
    p.x, p.y, p.z = (float(c) for c in world_p_body)
    o.w, o.x, o.y, o.z = (float(c) for c in world_q_body)
    v.x, v.y, v.z = (float(c) for c in body_v_body)
    w.x, w.y, w.z = (float(c) for c in body_w_body)
    return msg


def gains_msg(names: Sequence[str], stamp: Time, kp: np.ndarray, kd: np.ndarray) -> JointState:
    """The ``teleop/gains`` message: the PD gains the controller in charge wants for each named joint,
    position = kp (N·m/rad), velocity = kd (N·m·s/rad)."""
    return joint_state_msg(names, stamp, kp, kd)


def gains_from_msg(msg: JointState, index: JointIndex, kp_max: np.ndarray,
                   kd_max: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(kp, kd) in ``index`` order from a ``teleop/gains`` message. Raises MalformedJointMessage (kind "gains"
    for values out of range) unless every joint is there with finite 0 ≤ kp ≤ kp_max, 0 ≤ kd ≤ kd_max."""
    vec = index.parse(msg.name, msg.position, msg.velocity, need_velocity=True)
    kp, kd = vec.position, vec.velocity
    assert kd is not None  # need_velocity
    bad = [index.names[i] for i in np.flatnonzero((kp < 0) | (kp > kp_max) | (kd < 0) | (kd > kd_max))]
    if bad:
        raise MalformedJointMessage("gains", f"gains out of range [0, gain_limits] for {bad[:5]}")
    return kp, kd


def joy_msg(axes: Sequence[float], buttons: Sequence[int], stamp: Time, frame_id: str = "") -> Joy:
    """sensor_msgs/Joy of a gamepad's, a headset's or a remote's axes (-1…1) and buttons (0/1)."""
    joy = Joy(axes=[float(a) for a in axes], buttons=[int(b) for b in buttons])
    joy.header.stamp, joy.header.frame_id = stamp, frame_id
    return joy


def remote_joy_msg(remote: WirelessRemote, stamp: Time) -> Joy:
    """sensor_msgs/Joy of the G1's wireless remote: its axes and buttons (``wireless_remote.BUTTONS`` order)."""
    return joy_msg(remote.axes, remote.buttons, stamp, REMOTE_FRAME)
