"""policy: 50 Hz whole-body command from the robot state and the IK arm targets.

Subscribes joint_states and teleop/arm_target; publishes joint_command (stamped with the state it
answers), teleop/mode (latched) and teleop/trace (sensor_msgs/TimeReference: command stamp → stamp of
the operator sample behind its arm targets). Legs and waist: DefaultPoseHold for now (the seam for the
squat and locomotion policies). Lockstep: one command per joint_states stamp, computed once the arm
target with that stamp arrived (or after sync_timeout_s without it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import JointState, TimeReference
from std_msgs.msg import String

from g1_teleop.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.modes import Mode
from g1_teleop.nodes.common import (
    QOS_COMMAND,
    QOS_LATCHED,
    QOS_STATE,
    Diagnostics,
    WarnOnce,
    declare_config,
    run,
    stamp_ns,
    to_stamp,
)
from g1_teleop.robot import ARM_INDICES, load_robot
from g1_teleop.whole_body_target import DefaultPoseHold, WholeBodyTargetBuilder


@dataclass(frozen=True)
class PolicyConfig:
    model: str = ""
    robot_config: str = ""
    control_dt: float = 0.02
    lockstep: bool = True
    arm_step_limit_rad: float = 0.01  # per control tick
    arm_target_timeout_s: float = 0.5  # an older arm target is stale: the arms hold
    sync_timeout_s: float = 1.0  # lockstep: wall seconds to wait for a tick's arm target
    state_timeout_s: float = 0.1  # real time: no command from joint_states older than this

    def __post_init__(self) -> None:
        for name in ("control_dt", "arm_step_limit_rad", "arm_target_timeout_s", "sync_timeout_s",
                     "state_timeout_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")


@dataclass
class _State:
    stamp_ns: int
    q: np.ndarray
    dq: np.ndarray
    received_s: float  # monotonic wall time


@dataclass
class _ArmTarget:
    stamp_ns: int
    q: np.ndarray
    tau_ff: np.ndarray
    received_s: float  # monotonic wall time


class Policy(Node):
    def __init__(self) -> None:
        super().__init__("policy")
        cfg = self.cfg = declare_config(self, PolicyConfig)
        robot = self.robot = load_robot(cfg.robot_config or None, cfg.model or None)
        self.joints = JointIndex(robot.joint_names)
        self.arm_joints = JointIndex([robot.joint_names[i] for i in ARM_INDICES])
        self.builder = WholeBodyTargetBuilder(robot, DefaultPoseHold(robot), cfg.arm_step_limit_rad)
        self.mode = Mode.STAND_HOLD
        self.warn = WarnOnce(self)
        self.state: _State | None = None
        self.arm: _ArmTarget | None = None
        self.pending_since: float | None = None  # lockstep: wall time the current state began waiting
        self.last_command: JointState | None = None
        self.commands = 0

        self.pub_command = self.create_publisher(JointState, "joint_command", QOS_COMMAND)
        self.pub_trace = self.create_publisher(TimeReference, "teleop/trace", QOS_COMMAND)
        self.pub_mode = self.create_publisher(String, "teleop/mode", QOS_LATCHED)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, QOS_STATE)
        self.create_subscription(JointState, "teleop/arm_target", self.on_arm_target, QOS_COMMAND)
        self.pub_mode.publish(String(data=self.mode.value))
        self.diagnostics = Diagnostics(self, lambda: {"mode": self.mode.value, "commands": self.commands})
        if cfg.lockstep:
            self.create_timer(0.05, self.on_sync_timeout, clock=Clock(clock_type=ClockType.STEADY_TIME))
        else:
            self.create_timer(cfg.control_dt, self.tick)
        self.get_logger().info(f"mode {self.mode.value}: legs and waist hold the default pose, arms follow "
                               f"the IK (±{cfg.arm_step_limit_rad} rad per tick)")

    def on_joint_states(self, msg: JointState) -> None:
        try:
            vec = self.joints.parse(msg.name, msg.position, msg.velocity, need_velocity=True)
        except MalformedJointMessage as exc:
            self.warn(exc.kind, f"ignored joint_states: {exc}")
            return
        state = _State(stamp_ns(msg.header.stamp), vec.position, vec.velocity, time.monotonic())
        if not self.cfg.lockstep:
            self.state = state
            return
        if self.last_command is not None and state.stamp_ns == stamp_ns(self.last_command.header.stamp):
            self.pub_command.publish(self.last_command)  # the simulator asks again: same answer
            return
        if self.state is None or state.stamp_ns != self.state.stamp_ns:
            self.pending_since = time.monotonic()
        self.state = state
        self.try_lockstep_tick()

    def on_arm_target(self, msg: JointState) -> None:
        try:
            vec = self.arm_joints.parse(msg.name, msg.position, msg.velocity, msg.effort)
        except MalformedJointMessage as exc:
            self.warn(exc.kind, f"ignored teleop/arm_target: {exc}; the arms keep their last target")
            return
        tau = np.zeros(len(self.arm_joints)) if vec.effort is None else vec.effort
        self.arm = _ArmTarget(stamp_ns(msg.header.stamp), vec.position, tau, time.monotonic())
        if self.cfg.lockstep:
            self.try_lockstep_tick()

    def try_lockstep_tick(self) -> None:
        if self.pending_since is not None and self.arm is not None and self.arm.stamp_ns == self.state.stamp_ns:
            self.tick()

    def on_sync_timeout(self) -> None:
        if self.pending_since is not None and time.monotonic() - self.pending_since > self.cfg.sync_timeout_s:
            self.warn("sync", f"no teleop/arm_target for t = {self.state.stamp_ns / 1e9:.3f} s within "
                              f"{self.cfg.sync_timeout_s} s: is retarget running? Using the latest arm target")
            self.tick()

    def tick(self) -> None:
        state, arm, now = self.state, self.arm, time.monotonic()
        if state is None:
            return
        self.pending_since = None
        if not self.cfg.lockstep:
            if now - state.received_s > self.cfg.state_timeout_s:
                self.warn("stale_state", f"joint_states older than {self.cfg.state_timeout_s} s: no command "
                                         "(the bridge holds, then damps)")
                return
            if arm is not None and now - arm.received_s > self.cfg.arm_target_timeout_s:
                self.warn("stale_arm", f"teleop/arm_target older than {self.cfg.arm_target_timeout_s} s: "
                                       "arms hold")
                arm = None
        target = self.builder.step(state.q, state.dq, None if arm is None else arm.q,
                                   None if arm is None else arm.tau_ff)
        msg = JointState(name=list(self.robot.joint_names), position=target.q.tolist(),
                         velocity=[0.0] * len(target.q), effort=target.tau_ff.tolist())
        msg.header.stamp = to_stamp(state.stamp_ns)
        self.pub_command.publish(msg)
        self.last_command = msg
        self.commands += 1
        if arm is not None:
            trace = TimeReference(time_ref=to_stamp(arm.stamp_ns), source="policy")
            trace.header.stamp, trace.header.frame_id = msg.header.stamp, "joint_command"
            self.pub_trace.publish(trace)


def main(args: list[str] | None = None) -> None:
    run(Policy, args)


if __name__ == "__main__":
    main()
