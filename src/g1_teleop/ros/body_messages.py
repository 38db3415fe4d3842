"""The whole retargeted robot of a body frame (``retarget.whole_body.WholeBodyFrame``) as standard messages, for
tools (body_retarget → teleop/body_configuration, teleop/body_base, teleop/body_links). Built once, filled per
frame (the joints and poses copied in); body_retarget fills and publishes each only while something subscribes
(the links' 14 poses cost about a tenth of a frame's solve).

Frame ``retarget_world``: where the retargeting places the robot, the operator's world (``operator_world``: z up,
x forward) scaled by the calibration's pelvis scale about its origin, floor at z = 0. It is not in the TF tree
(robot_state places the unscaled ``operator_world`` under the measured pelvis, for the operator's head).
"""

from __future__ import annotations

from collections.abc import Sequence

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Pose, PoseArray, PoseStamped
from sensor_msgs.msg import JointState

from g1_teleop.core.rotations import wxyz_from_matrix
from g1_teleop.retarget.whole_body import WholeBodyFrame

RETARGET_WORLD = "retarget_world"


class WholeBodyMessages:
    """``configuration``: JointState of the 29 joints (``joint_names``, DDS order, rad; legs included); ``base``:
    PoseStamped of the pelvis; ``links``: PoseArray of the tracked links in ``links``' order (the robot bodies of
    ``whole_body_config.XROBOT_TO_G1``); poses in ``RETARGET_WORLD``. Each filled with a frame and its stamp by
    the method of its name, the same object each call (publish it before the next)."""

    def __init__(self, joint_names: Sequence[str], links: Sequence[str]) -> None:
        self._configuration = JointState(name=list(joint_names))
        self._base = PoseStamped()
        self._base.header.frame_id = RETARGET_WORLD
        self._links = PoseArray(poses=[Pose() for _ in links])
        self._links.header.frame_id = RETARGET_WORLD

    def configuration(self, frame: WholeBodyFrame, stamp: Time) -> JointState:
        self._configuration.header.stamp = stamp
        self._configuration.position = frame.joints.tolist()
        return self._configuration

    def base(self, frame: WholeBodyFrame, stamp: Time) -> PoseStamped:
        self._base.header.stamp = stamp
        p, o = self._base.pose.position, self._base.pose.orientation
        (p.x, p.y, p.z), (o.w, o.x, o.y, o.z) = frame.base_position.tolist(), frame.base_wxyz.tolist()
        return self._base

    def links(self, frame: WholeBodyFrame, stamp: Time) -> PoseArray:
        self._links.header.stamp = stamp
        positions = frame.link_poses[:, :3, 3].tolist()
        orientations = wxyz_from_matrix(frame.link_poses[:, :3, :3]).tolist()
        for pose, (x, y, z), (qw, qx, qy, qz) in zip(self._links.poses, positions, orientations, strict=True):
            p, o = pose.position, pose.orientation
            p.x, p.y, p.z, o.w, o.x, o.y, o.z = x, y, z, qw, qx, qy, qz
        return self._links
