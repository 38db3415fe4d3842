"""robot_state: the robot's frames and description for RViz and Foxglove (robot_state_publisher's job, and more).

Publishes, from the robot model (g1_teleop.core.frame_tree):

- robot_description (std_msgs/String, latched): the URDF text of the model in use. An MJCF model has no URDF
  (neither MuJoCo nor Pinocchio writes one): its URDF is written from the model that runs
  (core/urdf_export.py: the same links, joints, limits and inertias, no geometry), so every bag says which
  robot ran and RViz and Foxglove get a URDF they parse; the robot's shape is not in it (give the matching
  URDF as ``model`` to see it). With ``dex3``, the URDF has the Dex3-1 hands (core/dex3_urdf.py).
- /tf_static (latched): the fixed frames (imu_in_pelvis, left_eye, right_eye, left_ee, right_ee, an MJCF's sites).
- /tf: every link a joint moves, parent → child as the model names them, stamped with the joint_states it
  comes from (with ``dex3`` the finger links too, at hand_states' newest positions); ``world`` → ``pelvis``
  from odom (``base_pose`` odom: the simulator's ground truth) or from the IMU's orientation with the pelvis
  over its feet (``imu``: the real robot has no odometry; x, y stay 0);
  ``pelvis`` → ``xr_world`` from xr/head: the headset's world placed as the wrist targets are (xr_input's
  head-relative mapping, operator.xr_frames.ik_T_world), so the operator's head is drawn where it acts;
  ``pelvis`` → ``xr_left_hand``/``xr_right_hand`` from xr/*_wrist: the frame of xr/*_hand's landmarks, the wrist
  target turned by operator.xr_frames.WRIST_R_HAND (hand tracking gives both from the same wrist pose).
- teleop/wrist_markers (visualization_msgs/MarkerArray, frame pelvis): the wrist targets (xr/*_wrist) and
  the reached hand points (left_ee, right_ee of joint_states).

The inputs are taken ``rate_hz`` times a second of the wall clock, each topic's newest message
(g1_teleop.ros.polled_subscription), and what they give goes out in one /tf message: a display needs no more, and
taking every 200 Hz state and IMU sample cost this node a third of a core of the two a small machine has, which the
policy then lacked. The links' transforms and the markers are computed only while someone subscribes to them, into
messages made once and refilled (ros.tf_messages.FixedFrameTransforms, ros.wrist_markers.WristMarkers).

``links`` false leaves robot_description, /tf_static and the links to robot_state_publisher (on a ROS
distribution the launch files start it for a URDF model) and publishes the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped, TransformStamped
from nav_msgs.msg import Odometry
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String
from visualization_msgs.msg import MarkerArray

from g1_teleop.core.dex3_description import load_dex3
from g1_teleop.core.dex3_urdf import urdf_with_dex3_hands
from g1_teleop.core.frame_tree import FrameTree, Transform
from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.pinocchio_model import build_pinocchio_model
from g1_teleop.core.robot_description import load_robot
from g1_teleop.core.rotations import transform, wxyz_from_matrix
from g1_teleop.core.settings import check_settings, setting
from g1_teleop.core.urdf_export import urdf_of
from g1_teleop.operator.xr_frames import WRIST_R_HAND, ik_T_world
from g1_teleop.ros.diagnostics import Diagnostics, WarnOnce
from g1_teleop.ros.messages import imu_orientation_wxyz, transform_from_pose_msg
from g1_teleop.ros.node_main import run
from g1_teleop.ros.operator_messages import HAND_FRAMES
from g1_teleop.ros.parameters import declare_config
from g1_teleop.ros.polled_subscription import LatestInputs
from g1_teleop.ros.qos import QOS_LATCHED, QOS_SENSOR, QOS_STATE, QOS_TF, QOS_TF_STATIC
from g1_teleop.ros.tf_messages import FixedFrameTransforms, TFMessage, tf_message
from g1_teleop.ros.wrist_markers import REACHED, SIDES, TARGET, WristMarkers

BASE_POSES = ("odom", "imu", "none")
HAND_STATES_KEPT = 20  # hand_states messages kept between two ticks (2 × 100 Hz: a tenth of a second)
WORLD, XR_WORLD = "world", "xr_world"
# tf2's broadcasters: /tf reliable, 100 deep; /tf_static reliable, transient local (late joiners get it)


@dataclass(frozen=True)
class RobotStateConfig:
    """robot_state's ROS parameters (read once at start-up)."""

    model: str = setting("", "robot model file (MJCF .xml or URDF); empty: the one robot_config names")
    robot_config: str = setting("", "robot configuration (YAML); empty: config/g1_29dof.yaml")
    base_pose: str = setting("odom", "where world → pelvis comes from: odom (nav_msgs/Odometry, the simulator's "
                             "ground truth), imu (the IMU's orientation, the pelvis over its feet at x = y = 0: "
                             "a robot without odometry) or none (no world frame)", choices=BASE_POSES)
    links: bool = setting(True, "publish robot_description, /tf_static and the links' /tf; false: "
                          "robot_state_publisher does")
    dex3: bool = setting(False, "Dex3-1 hands on the wrists (config/dex3.yaml): robot_description has them (a URDF "
                         "body) and /tf moves their fingers from hand_states")
    rate_hz: float = setting(30.0, "how often the inputs are taken, each topic's newest message: at most that many "
                             "answers (/tf, markers) per input per second of the wall clock, however fast the "
                             "simulation runs (Hz); 0: one per message", minimum=0.0)

    def __post_init__(self) -> None:
        check_settings(self)


class RobotState(Node):
    """The robot's TF tree, description and wrist markers (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__("robot_state")
        cfg = self.cfg = declare_config(self, RobotStateConfig)
        robot = load_robot(cfg.robot_config or None, cfg.model or None)
        dex3 = load_dex3() if cfg.dex3 else None
        pin_model = build_pinocchio_model(robot, hands=dex3)
        hand_names = dex3.both_joint_names() if dex3 else ()
        self.tree = FrameTree(robot, pin_model, hand_names)
        self.index = JointIndex(robot.joint_names)
        self.hand_index = JointIndex(hand_names)
        self.hand_q = np.zeros(len(hand_names))  # the fingers' newest positions (rad; 0: the open hand until told)
        self.ee = {side: robot.frames[f"{side}_ee"].name for side in SIDES}
        self.q: np.ndarray | None = None
        self.targets: dict[str, PoseStamped] = {}
        self.wrist_T_hand = {side: np.eye(4) for side in SIDES}
        for side, T in self.wrist_T_hand.items():
            T[:3, :3] = WRIST_R_HAND[side]
        self.warn = WarnOnce(self)
        self.published = 0
        self.links = FixedFrameTransforms([(parent, child) for parent, child, _ in
                                           self.tree.moving(self.tree.standing_q)])
        self.pending: list[TransformStamped] = []  # this tick's transforms, one /tf message
        self.markers = WristMarkers()
        self.pub_tf = self.create_publisher(TFMessage, "/tf", QOS_TF)
        self.pub_markers = self.create_publisher(MarkerArray, "teleop/wrist_markers", QOS_STATE)
        described = "links off"
        if cfg.links:
            urdf = (urdf_of(robot, self.tree, pin_model) if robot.model_is_mjcf
                    else urdf_with_dex3_hands(robot.model_path.read_text(), dex3) if dex3
                    else robot.model_path.read_text())
            described = self.publish_description(urdf)
        # in this order: the joints' need the hands', the IMU's the joints'
        inputs = self.inputs = LatestInputs(self, polled=cfg.rate_hz > 0)
        if inputs.polled:
            self.create_timer(1.0 / cfg.rate_hz, self.tick, clock=Clock(clock_type=ClockType.STEADY_TIME))
        if dex3:  # (one hand per message: each since the last tick)
            inputs.subscribe(JointState, "hand_states", QOS_STATE, self.on_hand_states, depth=HAND_STATES_KEPT)
        inputs.subscribe(JointState, "joint_states", QOS_STATE, self.on_joint_states)
        if cfg.base_pose == "odom":
            inputs.subscribe(Odometry, "odom", QOS_STATE, self.on_odom)
        elif cfg.base_pose == "imu":
            inputs.subscribe(Imu, "imu", QOS_STATE, self.on_imu)
        inputs.subscribe(PoseStamped, "xr/head", QOS_SENSOR, self.on_head)
        for side in SIDES:
            inputs.subscribe(PoseStamped, f"xr/{side}_wrist", QOS_SENSOR, partial(self.on_wrist, side))
        self.diagnostics = Diagnostics(self, lambda: {"tf_published": self.published, "frames": len(self.tree.frames),
                                                      "base_pose": cfg.base_pose, "links": cfg.links})
        self.get_logger().info(f"{robot.model_path.name}: {len(self.tree.frames)} frames rooted at {self.tree.root}, "
                               f"world → {self.tree.root} from {cfg.base_pose}; {described}")

    def publish_description(self, urdf: str) -> str:
        """robot_description (the URDF, latched) and /tf_static; says what was published."""
        self.pub_static = self.create_publisher(TFMessage, "/tf_static", QOS_TF_STATIC)
        self.pub_static.publish(tf_message(self.tree.static, self.get_clock().now().to_msg()))
        self.pub_description = self.create_publisher(String, "robot_description", QOS_LATCHED)
        self.pub_description.publish(String(data=urdf))
        return f"{len(self.tree.static)} fixed frames and robot_description ({len(urdf)} characters of URDF)"

    def tick(self) -> None:
        """The polled inputs' newest messages, their transforms in one /tf message."""
        self.inputs.poll()
        self.flush()

    def add(self, transforms: list[TransformStamped]) -> None:
        """Transforms for /tf: with this tick's (polled), or at once (an input's every message)."""
        self.pending += transforms
        if not self.inputs.polled:
            self.flush()

    def add_transforms(self, transforms: list[Transform], stamp: Time) -> None:
        if self.pub_tf.get_subscription_count():
            self.add(tf_message(transforms, stamp).transforms)

    def flush(self) -> None:
        if self.pending:
            self.pub_tf.publish(TFMessage(transforms=self.pending))
            self.pending = []
            self.published += 1

    def on_hand_states(self, msg: JointState, _received_s: float = 0.0) -> None:
        try:
            q = self.hand_index.parse(msg.name, msg.position, require_all=False).position
        except MalformedJointMessage as exc:
            self.warn(f"hand {exc.kind}", f"ignored hand_states: {exc}")
            return
        given = ~np.isnan(q)
        self.hand_q[given] = q[given]

    def on_joint_states(self, msg: JointState, _received_s: float = 0.0) -> None:
        try:
            self.q = np.concatenate([self.index.parse(msg.name, msg.position).position, self.hand_q])
        except MalformedJointMessage as exc:
            self.warn(exc.kind, f"ignored joint_states: {exc}")
            return
        if self.cfg.links and self.pub_tf.get_subscription_count():
            self.add(self.links.fill([T for _, _, T in self.tree.moving(self.q)], msg.header.stamp))
        if self.pub_markers.get_subscription_count():
            self.publish_markers(self.q, msg.header.stamp)

    def publish_markers(self, q: np.ndarray, stamp: Time) -> None:
        """The reached wrists at ``q`` (stamped ``stamp``) and the newest targets."""
        reached = [self.tree.root_T(q, self.ee[side]) for side in SIDES]
        orientations = wxyz_from_matrix(np.stack([T[:3, :3] for T in reached])).tolist()
        for side, T, wxyz in zip(SIDES, reached, orientations, strict=True):
            self.markers.set(REACHED, side, T[:3, 3].tolist(), wxyz, stamp, self.tree.root)
        for side, target in self.targets.items():
            p, o = target.pose.position, target.pose.orientation
            self.markers.set(TARGET, side, (p.x, p.y, p.z), (o.w, o.x, o.y, o.z), target.header.stamp,
                             target.header.frame_id)
        self.pub_markers.publish(self.markers.message())

    def on_odom(self, msg: Odometry, _received_s: float = 0.0) -> None:
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        self.add_transforms([(msg.header.frame_id, msg.child_frame_id,
                              transform((p.x, p.y, p.z), (o.w, o.x, o.y, o.z)))], msg.header.stamp)

    def on_imu(self, msg: Imu, _received_s: float = 0.0) -> None:
        if self.q is None:
            return  # (the pelvis height needs the legs)
        world_q_pelvis = imu_orientation_wxyz(msg)  # the IMU frame is the pelvis's (imu_in_pelvis: identity)
        height = self.tree.pelvis_height(self.q, world_q_pelvis)
        self.add_transforms([(WORLD, self.tree.root, transform((0.0, 0.0, height), world_q_pelvis))],
                            msg.header.stamp)

    def on_head(self, msg: PoseStamped, _received_s: float = 0.0) -> None:
        try:
            world_T_head = transform_from_pose_msg(msg)
        except ValueError as exc:
            self.warn("head", f"ignored xr/head: {exc}")
            return
        self.add_transforms([(self.tree.root, msg.header.frame_id or XR_WORLD, ik_T_world(world_T_head))],
                            msg.header.stamp)

    def on_wrist(self, side: str, msg: PoseStamped, _received_s: float = 0.0) -> None:
        try:
            target_T = transform_from_pose_msg(msg)  # finite, unit quaternion
        except ValueError as exc:
            self.warn(f"{side} wrist", f"ignored xr/{side}_wrist: {exc}")
            return
        self.targets[side] = msg
        self.add_transforms([(msg.header.frame_id or self.tree.root, HAND_FRAMES[side],
                              target_T @ self.wrist_T_hand[side])], msg.header.stamp)


def main(args: list[str] | None = None) -> None:
    run(RobotState, args)


if __name__ == "__main__":
    main()
