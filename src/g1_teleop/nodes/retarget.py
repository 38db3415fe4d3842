"""retarget: the operator's hands → the 14 arm joints.

mode "pose": dual-arm IK from xr/left_wrist, xr/right_wrist (geometry_msgs/PoseStamped, pelvis frame, the left_ee /
right_ee targets) through the operator clutch (retarget.wrist_targets, retarget.clutch), warm-started from
joint_states (which also locks the rest of the body), keeping ``min_clearance_m`` between the forearms/hands and the
trunk, the thighs and the other arm. clutch "auto" (scenarios, bags) follows from the first sample; "operator" (a
live source) only once engaged (the XR Joy's ``engage_button`` or teleop/engage; teleop/pause holds), relative to the
engage; stale wrists hold, then go slowly home (retarget.clutch). waist "head": while engaged the operator's head yaw
and pitch since the engage turn and bend the waist (retarget.head_waist), sent with the arms. mode "gamepad": joy →
a velocity of each hand → damped-least-squares differential IK, a step per joint state (no headset).
Publishes teleop/arm_target (sensor_msgs/JointState: 14 named arm joints (and the 3 waist joints with waist head),
position = target, effort = gravity feed-forward), stamped with the operator sample it follows (else: the joint
state's), and teleop/clutch (std_msgs/String, latched: disengaged, engaged, holding or homing).
Lockstep: clutch auto answers once a control period's joint state and wrists are in; clutch operator answers each
joint state at once, stamped with it (a headset sends at its own rate). Real time: the newest joint state is taken
(ros.polled_subscription) after each wrist pair's answer, for the next, and at state_solve_rate_hz (state_answers)."""

from __future__ import annotations

import time

import numpy as np
from geometry_msgs.msg import PoseStamped
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import JointState, Joy
from std_msgs.msg import String
from std_srvs.srv import Trigger

from g1_teleop.core.dex3_description import load_dex3
from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.mujoco_model import build_mujoco_model
from g1_teleop.core.pinocchio_model import build_pinocchio_model
from g1_teleop.core.robot_description import load_robot
from g1_teleop.core.stamp_sync import StampSync
from g1_teleop.core.xr_input_contract import JOY_FRAMES
from g1_teleop.retarget.arm_ik import DualArmIK
from g1_teleop.retarget.clutch import ClutchState, ClutchTransition, Refused, WristPair
from g1_teleop.retarget.gamepad_ik import GamepadArmTeleop
from g1_teleop.retarget.head_waist import HeadWaist
from g1_teleop.retarget.retarget_settings import RetargetSettings
from g1_teleop.retarget.self_collision import ArmCollisionModel
from g1_teleop.retarget.state_answers import StateAnswers
from g1_teleop.retarget.wrist_targets import ClutchLog, WristTargets
from g1_teleop.ros.diagnostics import Diagnostics, WarnOnce
from g1_teleop.ros.messages import joint_state_msg, stamp_ns, to_stamp, transform_from_pose_msg
from g1_teleop.ros.node_main import run
from g1_teleop.ros.parameters import declare_config
from g1_teleop.ros.polled_subscription import LatestInputs
from g1_teleop.ros.qos import QOS_COMMAND, QOS_LATCHED, QOS_SENSOR, QOS_STATE


class Retarget(Node):
    def __init__(self) -> None:
        super().__init__("retarget")
        cfg = self.cfg = declare_config(self, RetargetSettings)
        robot = load_robot(cfg.robot_config or None, cfg.model or None)
        pin_model = build_pinocchio_model(robot, floating_base=False, hands=load_dex3() if cfg.dex3 else None)
        collision = ArmCollisionModel(robot, build_mujoco_model(robot), pin_model)
        self.ik = DualArmIK(pin_model, robot.joint_names, cfg.ik_config(), collision)
        self.joints = JointIndex(robot.joint_names)
        self.waist_names = robot.group_names("waist")
        self.inputs = StampSync(["left", "right", "joints"])
        self.warn = WarnOnce(self)
        self.last_output: JointState | None = None
        self.waiting_since: float | None = None
        self.pair_stamp: int | None = None  # the stamp of the last complete wrist pair the clutch took (ns)
        self.state_answers = StateAnswers(cfg.state_solve_rate_hz)  # real time, on time.monotonic()
        self.solves = self.failures = 0
        self.operator = cfg.mode == "pose" and cfg.clutch_mode() == "operator"
        home = WristPair(*self.ik.end_effector_poses(robot.default_q))
        self.targets = WristTargets(cfg.clutch_mode(), cfg.clutch_config(), home, cfg.engage_button)
        self.clutch_log = ClutchLog()
        self.head_waist = HeadWaist(cfg.head_waist_config()) if cfg.waist == "head" and cfg.mode == "pose" else None
        self.world_T_head: np.ndarray | None = None
        self.pub = self.create_publisher(JointState, "teleop/arm_target", QOS_COMMAND)
        self.pub_clutch = self.create_publisher(String, "teleop/clutch", QOS_LATCHED)
        self.pub_clutch.publish(String(data=self.targets.state.value))
        if cfg.mode == "pose":
            self.create_subscription(PoseStamped, "xr/left_wrist", lambda m: self.on_wrist("left", m), QOS_SENSOR)
            self.create_subscription(PoseStamped, "xr/right_wrist", lambda m: self.on_wrist("right", m), QOS_SENSOR)
            if self.operator:
                self.create_subscription(Joy, "joy", self.on_engage_button, QOS_SENSOR)
            if self.head_waist is not None:
                self.create_subscription(PoseStamped, "xr/head", self.on_head, QOS_SENSOR)
        else:
            self.gamepad = GamepadArmTeleop(self.ik, cfg.gamepad_mapping(), damping=cfg.gamepad_damping,
                                            max_joint_speed=cfg.gamepad_max_joint_speed)
            self.joy: tuple[float, list[float], list[int]] | None = None  # (received, axes, buttons)
            self.create_subscription(Joy, "joy", self.on_joy, QOS_SENSOR)
        self.state_input = LatestInputs(self, polled=not cfg.lockstep)
        self.state_input.subscribe(JointState, "joint_states", QOS_STATE, self.on_joint_states)
        for action in ("engage", "pause"):
            self.create_service(Trigger, f"teleop/{action}",
                                lambda request, response, action=action: self.serve_clutch(action, response))
        self.diagnostics = Diagnostics(self, lambda: {"solves": self.solves, "ik_failures": self.failures,
                                                      "clutch": f"{self.targets.state.value} ({self.targets.mode})"})
        period_s, on_timer = (0.05, self.on_sync_timeout) if cfg.lockstep else (1 / cfg.state_solve_rate_hz,
                                                                                self.state_input.poll)
        self.create_timer(period_s, on_timer, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(f"dual-arm IK ready on {len(self.ik.arm_joint_names)} arm joints, {cfg.described()}")

    def now_s(self) -> float:
        return self.get_clock().now().nanoseconds / 1e9

    def robot_wrists(self) -> WristPair:
        """The robot's wrists now: the forward kinematics of the latest measured joints."""
        return WristPair(*self.ik.end_effector_poses(self.inputs.value("joints")))

    def on_wrist(self, side: str, msg: PoseStamped) -> None:
        try:
            pelvis_T_wrist = transform_from_pose_msg(msg)
        except ValueError as exc:
            self.warn(f"pose_{side}", f"ignored xr/{side}_wrist: {exc}; keeping the last target")
            return
        self.inputs.put(side, stamp_ns(msg.header.stamp), pelvis_T_wrist)
        left, right = self.inputs.stamp("left"), self.inputs.stamp("right")
        if left == right and self.targets.put_sample(WristPair(self.inputs.value("left"), self.inputs.value("right")),
                                                     left / 1e9):
            self.pair_stamp = left
            self.state_answers.sample(time.monotonic())
            self.try_solve()
            self.state_input.poll()  # real time: the newest joint state, for the next solve (off this sample's path)

    def on_head(self, msg: PoseStamped) -> None:
        try:
            self.world_T_head = transform_from_pose_msg(msg)
        except ValueError as exc:
            self.warn("pose_head", f"ignored xr/head: {exc}; the waist keeps its last target")

    def on_engage_button(self, msg: Joy) -> None:
        if msg.header.frame_id not in JOY_FRAMES.values():
            return  # the XR layout's button only: other devices' button 10 (the robot remote's X) means something else
        self.report(self.targets.joy(msg.buttons, stamp_ns(msg.header.stamp) / 1e9, self.now_s(), self.robot_wrists),
                    "Joy button")

    def serve_clutch(self, action: str, response: Trigger.Response) -> Trigger.Response:
        if self.cfg.mode != "pose":
            result: ClutchTransition | Refused = Refused(
                "retarget is in gamepad mode: the sticks move the hands, there is no clutch")
        elif action == "engage":
            result = self.targets.engage(self.now_s(), self.robot_wrists)
        else:
            result = self.targets.pause(self.now_s())
        self.report(result, f"service teleop/{action}")
        response.success, response.message = isinstance(result, ClutchTransition), result.reason
        return response

    def report(self, result: ClutchTransition | Refused | None, source: str) -> None:
        """An operator's clutch request: log it (deliberate: every one) and publish the new state."""
        if isinstance(result, Refused):
            self.get_logger().warning(f"clutch request refused ({source}): {result.reason}")
        elif result is not None:
            self.get_logger().info(f"clutch {result.state.value} ({source}): {result.reason}")
            self.pub_clutch.publish(String(data=result.state.value))

    def on_joint_states(self, msg: JointState, _received_s: float = 0.0) -> None:
        try:
            vec = self.joints.parse(msg.name, msg.position, msg.velocity)
        except MalformedJointMessage as exc:
            self.warn(exc.kind, f"ignored joint_states: {exc}")
            return
        stamp = stamp_ns(msg.header.stamp)
        if self.cfg.lockstep and self.last_output is not None and stamp == stamp_ns(self.last_output.header.stamp):
            self.pub.publish(self.last_output)  # the simulator re-published this period: same answer
            return
        if self.cfg.mode == "gamepad":
            self.gamepad_step(stamp, vec.position)
            return
        if stamp != self.inputs.stamp("joints"):
            self.waiting_since = time.monotonic()
        self.inputs.put("joints", stamp, vec.position)
        if not self.cfg.lockstep and not self.state_answers.due(time.monotonic()):
            return  # the warm start is refreshed; the wrist pair just taken is answered
        if self.operator:
            self.solve()  # every joint state: the clutch holds, homes or follows whatever the headset sends
        else:
            self.try_solve()

    def on_joy(self, msg: Joy) -> None:
        self.joy = (time.monotonic(), list(msg.axes), list(msg.buttons))

    def gamepad_step(self, stamp: int, q_measured: np.ndarray) -> None:
        """Move the hands by the sticks over the time since the last joint state (released when stale)."""
        previous = self.inputs.stamp("joints")
        self.inputs.put("joints", stamp, q_measured)
        dt = min(max((stamp - previous) / 1e9, 0.0), 0.1) if previous >= 0 else 0.0
        fresh = self.joy is not None and time.monotonic() - self.joy[0] <= self.cfg.joy_timeout_s
        axes, buttons = self.joy[1:] if fresh else ([], [])
        q_arm = self.gamepad.step(q_measured, axes, buttons, dt)
        q_body = q_measured.copy()
        q_body[self.ik.arm_indices] = q_arm
        self.publish(q_arm, self.ik.gravity_torques(q_body), stamp)

    def try_solve(self) -> None:
        """After a new wrist pair, and (clutch auto) a joint state. Real time: whatever the wrists' stamps once a pair
        came (a vanished operator's last sample may lack one wrist: the clutch must still hold, then home)."""
        if self.inputs.value("joints") is None or self.pair_stamp is None:
            return
        if not self.cfg.lockstep or (not self.operator and self.inputs.complete(self.inputs.stamp("joints"))):
            self.solve()

    def on_sync_timeout(self) -> None:
        waited = None if self.waiting_since is None else time.monotonic() - self.waiting_since
        if waited is not None and waited > self.cfg.sync_timeout_s and self.inputs.value("left") is not None:
            self.warn("sync", f"no wrist sample for t = {self.inputs.stamp('joints') / 1e9:.3f} s within "
                              f"{self.cfg.sync_timeout_s} s: is xr_input running? Using the latest wrists")
            self.solve()

    def solve(self) -> None:
        self.waiting_since = None
        joints = self.inputs.stamp("joints")
        now_s = joints / 1e9 if self.cfg.lockstep else self.now_s()
        self.report(self.targets.engage_press(now_s, self.robot_wrists), "Joy button")  # a press waiting for wrists
        step = self.targets.step(now_s, self.robot_wrists)
        if step.transitions:
            self.pub_clutch.publish(String(data=self.targets.state.value))
            self.clutch_log.put(step.transitions)
            if self.head_waist is not None and step.transitions[-1].state is ClutchState.ENGAGED:
                self.head_waist.reset(self.world_T_head)  # the waist follows the head's motion since the engage
        if (line := self.clutch_log.line(time.monotonic())) is not None:
            self.get_logger().info(line)
        result = self.ik.solve(step.targets.left, step.targets.right, self.inputs.value("joints"))
        self.solves += 1
        if not result.ok:
            self.failures += 1
            self.warn("ik", "IK failed (unusable target, or no collision-free pose found from the measured one): "
                            "holding the measured arm joints")
        # the operator sample followed, else (holding, homing, paused; lockstep clutch operator) the joint state
        follows = self.targets.state is ClutchState.ENGAGED and not (self.operator and self.cfg.lockstep)
        stamp = self.pair_stamp if follows and self.pair_stamp is not None else joints
        self.publish(result.q_arm, result.tau_ff, stamp)

    def publish(self, q_arm: np.ndarray, tau_ff: np.ndarray, stamp: int) -> None:
        names, q, tau = self.ik.arm_joint_names, q_arm, tau_ff
        head, waist = self.world_T_head, self.head_waist
        if waist is not None and head is not None and self.targets.state is ClutchState.ENGAGED:
            names, q, tau = [*names, *self.waist_names], [*q, *waist.waist(head)], [*tau, 0.0, 0.0, 0.0]
        msg = joint_state_msg(names, to_stamp(stamp), q, effort=tau)
        msg.header.frame_id = "pelvis"
        self.pub.publish(msg)
        self.last_output = msg


def main(args: list[str] | None = None) -> None:
    run(Retarget, args)


if __name__ == "__main__":
    main()
