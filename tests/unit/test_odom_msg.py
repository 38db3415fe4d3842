"""ros.messages.odom_msg: a body's pose in the world and its twist in its own frame (REP-105)."""

from __future__ import annotations

from g1_teleop.ros.messages import odom_msg, to_stamp


def test_odometry_carries_the_pose_in_the_world_and_the_twist_in_the_body_frame() -> None:
    msg = odom_msg(to_stamp(2_020_000_000), [1.0, 2.0, 0.79], [0.9, 0.1, -0.3, 0.3], [0.5, 0.0, -0.1],
                   [0.01, 0.02, 0.03])
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (2, 20_000_000)
    assert (msg.header.frame_id, msg.child_frame_id) == ("world", "pelvis")
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    assert (p.x, p.y, p.z) == (1.0, 2.0, 0.79)
    assert (o.w, o.x, o.y, o.z) == (0.9, 0.1, -0.3, 0.3)
    v, w = msg.twist.twist.linear, msg.twist.twist.angular
    assert (v.x, v.y, v.z, w.x, w.y, w.z) == (0.5, 0.0, -0.1, 0.01, 0.02, 0.03)
