"""sim_bridge: MuJoCo G1 behind the ROS topic contract (g1_teleop.sim.simulator).

Subscribes joint_command, teleop/gains and sim/start (std_msgs/Empty: with wait_for_start the simulation holds
at t = 0, publishing nothing, until tools are attached); publishes joint_states, imu, odom and /clock; with dex3,
also teleop/hand_target → the simulated Dex3 hands → hand_states (g1_teleop.ros.sim_hands). Lockstep: the
simulation advances one control period only after the command stamped with the current period arrives (and
re-publishes the state while it waits), and stops at ``stop_at_s``. Real time: the simulated time follows the wall
clock; until the first valid command the robot is held still where it starts (time runs, nothing moves: a controller
that starts late would otherwise find it fallen), then physics runs and stale commands fall back to hold, then
damping (g1_teleop.core.input_watchdog). Gains: each command gets those in force when it arrives
(g1_teleop.core.gains_in_force): the ``gain_profile`` until the first valid teleop/gains message (the gains the
controller in charge wants), then the latest valid one.
"""

from __future__ import annotations

import time

from diagnostic_msgs.msg import DiagnosticStatus
from nav_msgs.msg import Odometry
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Empty

from g1_teleop.core.dex3_description import load_dex3
from g1_teleop.core.gains_in_force import GainsInForce
from g1_teleop.core.input_watchdog import Freshness, InputWatchdog, WatchdogTimeouts, fallback_command
from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.limits import CommandLimiter, JointCommand, JointLimits
from g1_teleop.core.mujoco_model import build_mujoco_model
from g1_teleop.core.realtime_priority import fifo_requested
from g1_teleop.core.robot_description import load_robot
from g1_teleop.ros.diagnostics import Diagnostics, WarnOnce
from g1_teleop.ros.gains_topic import take_gains
from g1_teleop.ros.messages import (
    command_from_joint_state,
    imu_msg,
    joint_state_msg,
    odom_msg,
    stamp_ns,
    to_stamp,
)
from g1_teleop.ros.node_main import run
from g1_teleop.ros.parameters import declare_config
from g1_teleop.ros.qos import QOS_COMMAND, QOS_LATCHED, QOS_STATE
from g1_teleop.ros.sim_hands import SimulatedHands
from g1_teleop.sim.sim_bridge_settings import SimBridgeConfig
from g1_teleop.sim.simulator import SimConfig, Simulator, parse_pushes
from g1_teleop.sim.viewer import open_passive_viewer
from g1_teleop.sim.wall_clock import WallClockFollower

GRID_MARGIN_S = 0.0002  # real time: simulated time 0 this long before the physics timer's scheduled call


class SimBridge(Node):
    """The simulator behind the topic contract: commands in, state and /clock out (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__("sim_bridge")
        cfg = self.cfg = declare_config(self, SimBridgeConfig)
        if cfg.lockstep and fifo_requested():  # (the graph's control_priority)
            raise ValueError("control_priority needs lockstep:=false: in lockstep the control process never sleeps, "
                             "and at SCHED_FIFO it would keep a core from every normal process")
        robot = self.robot = load_robot(cfg.robot_config or None, cfg.model or None)
        dex3 = load_dex3() if cfg.dex3 else None
        if dex3 is not None and robot.model_is_mjcf:
            raise ValueError(f"dex3:=true puts Dex3 hands on a URDF body; {robot.model_path} is an MJCF (leave model "
                             "empty for the project's body)")
        model = build_mujoco_model(robot, timestep=cfg.physics_dt, hands=dex3)
        self.sim = Simulator(robot, model, SimConfig(cfg.physics_dt, cfg.control_dt, cfg.gantry,
                                                     parse_pushes(cfg.pushes)),
                             hand_names=dex3.both_joint_names() if dex3 else ())
        self.index = JointIndex(robot.joint_names)
        self.gains = GainsInForce(cfg.gain_profile, *robot.gains(cfg.gain_profile))
        self.damping = JointCommand.damping(len(robot.joint_names), robot.gains(cfg.damping_profile)[1])
        self.limiter = CommandLimiter(JointLimits(robot.q_lower, robot.q_upper, robot.velocity_limit,
                                                  robot.effort_limit))
        initial = self.sim.state().q
        self.limiter.reset(initial)
        self.command = JointCommand.hold(initial, self.gains.kp, self.gains.kd)  # last safe command
        self.watchdog = InputWatchdog(WatchdogTimeouts(cfg.command_hold_after_s, cfg.command_damp_after_s))
        self.freshness = Freshness.WAITING
        self.warn = WarnOnce(self)
        self.hands = SimulatedHands(self, dex3, self.sim, self.warn) if dex3 else None
        self.commands_applied = 0
        self.commands_rejected = 0
        self.wall_clock = WallClockFollower(cfg.realtime_factor, cfg.max_lag_s, cfg.physics_dt, time.monotonic())
        self.on_grid = False  # real time: simulated time 0 put on the physics timer's grid (run_realtime)

        self.pub_joints = self.create_publisher(JointState, "joint_states", QOS_STATE)
        self.pub_imu = self.create_publisher(Imu, "imu", QOS_STATE)
        self.pub_odom = self.create_publisher(Odometry, "odom", QOS_STATE)
        self.pub_clock = self.create_publisher(ClockMsg, "/clock", QOS_STATE)
        # Before joint_command's: rclpy serves ready subscriptions in creation order (a tick's gains, then its command).
        self.create_subscription(JointState, "teleop/gains", self.on_gains, QOS_LATCHED)
        self.create_subscription(JointState, "joint_command", self.on_command, QOS_COMMAND)
        self.started = not cfg.wait_for_start
        self.stop_at_ns = round(cfg.stop_at_s * 1e9)
        self.create_subscription(Empty, "sim/start", self.on_start, QOS_LATCHED)
        self.diagnostics = Diagnostics(self, lambda: {
            "sim_time_s": self.sim.stamp_ns / 1e9, "commands_applied": self.commands_applied,
            "commands_rejected": self.commands_rejected, "input": self.freshness.value,
            "lockstep": cfg.lockstep, "gantry": cfg.gantry, "slipped_s": round(self.wall_clock.slipped_s, 3),
            "gains": self.gains.source, "gains_refused": self.gains.refused,
        })
        wall = Clock(clock_type=ClockType.STEADY_TIME)
        self.viewer = open_passive_viewer(self.sim) if cfg.viewer else None
        if cfg.viewer and self.viewer is None:
            self.get_logger().warning("viewer:=true but no display (DISPLAY is unset): running headless")
        self._last_publish = time.monotonic()
        if cfg.lockstep:
            self.create_timer(cfg.republish_period_s / 2, self.republish_if_waiting, clock=wall)
        else:
            self.physics_timer = self.create_timer(cfg.physics_dt, self.run_realtime, clock=wall)
        if self.started:
            self.publish_state()
        self.get_logger().info(
            f"MuJoCo G1 ready: {robot.model_path.name}, physics {cfg.physics_dt * 1e3:g} ms, control "
            f"{cfg.control_dt * 1e3:g} ms, {'lockstep' if cfg.lockstep else 'real time'}, "
            f"gantry {'on' if cfg.gantry else 'off'}, gains: {self.gains.source}{', Dex3 hands' if dex3 else ''}"
            + "".join(f"; push {p.force_n} N at {p.start_s:g} s for {p.duration_s:g} s" for p in self.sim.config.pushes)
        )

    def on_start(self, _msg: Empty) -> None:
        if not self.started:
            self.started = True
            self.get_logger().info("sim/start received: the simulation runs")
            self.publish_state()

    # -- commands ---------------------------------------------------------------------------------
    def on_gains(self, msg: JointState) -> None:
        take_gains(msg, self.gains, self.index, self.robot.gain_limits, self.sim.stamp_ns / 1e9, self.warn,
                   self.get_logger(), f"gain profile '{self.cfg.gain_profile}'")

    def parse(self, msg: JointState) -> JointCommand | None:
        try:
            return command_from_joint_state(msg, self.index, self.gains.kp, self.gains.kd)
        except MalformedJointMessage as exc:
            self.commands_rejected += 1
            self.warn(exc.kind, f"rejected joint_command: {exc}; keeping the last safe command")
            return None

    def on_command(self, msg: JointState) -> None:
        command = self.parse(msg)
        if command is not None:
            self.command = self.limiter.apply(command, self.cfg.control_dt)
            self.commands_applied += 1
            self.watchdog.feed(time.monotonic())
        if not self.cfg.lockstep or not self.started:
            return
        stamp = stamp_ns(msg.header.stamp)
        if self.stopped:
            return
        if stamp == self.sim.stamp_ns:
            self.sim.step_control_period(self.command)  # a rejected command steps with the last safe one
            self.publish_state()
            if self.stopped:
                self.get_logger().info(f"stop_at_s reached ({self.cfg.stop_at_s:g} s): the simulation stops here")
        elif stamp > self.sim.stamp_ns:
            self.warn("stamp", f"joint_command stamped {stamp / 1e9:.3f} s is ahead of the simulation "
                               f"({self.sim.stamp_ns / 1e9:.3f} s): is another simulator running?")

    # -- stepping ---------------------------------------------------------------------------------
    @property
    def stopped(self) -> bool:
        """Lockstep at stop_at_s: the simulation advances no further (and re-publishes nothing)."""
        return self.cfg.lockstep and 0 < self.stop_at_ns <= self.sim.stamp_ns

    def republish_if_waiting(self) -> None:
        if self.started and not self.stopped and time.monotonic() - self._last_publish >= self.cfg.republish_period_s:
            self.publish_state()

    def run_realtime(self) -> None:
        """Take the physics steps that have ended by wall time (at most one control period per call); more than
        max_lag_s behind, slip (sim.wall_clock). Until started, and at the first call once started, simulated time 0
        is this call's scheduled time (rcl keeps a timer's calls on the grid of its first, however late one comes),
        less GRID_MARGIN_S against rounding."""
        if not (self.started and self.on_grid):
            scheduled_s = time.monotonic() + self.physics_timer.time_until_next_call() * 1e-9 - self.cfg.physics_dt
            self.wall_clock.restart(scheduled_s - GRID_MARGIN_S)
            self.on_grid = self.started
            if not self.started:
                self.republish_if_waiting()
            return
        catch_up = self.wall_clock.catch_up(time.monotonic(), self.sim.stamp_ns)
        if catch_up.slip_s > 0.05:
            self.warn("slip", f"the simulation fell {catch_up.lag_s * 1e3:.0f} ms behind the wall clock (a starved "
                              "process?): it slips instead of catching up; see slipped_s in diagnostics")
        freshness = self.watchdog.freshness(time.monotonic())
        if freshness != self.freshness:
            self._report(freshness)
        command = fallback_command(freshness, self.command, self.damping)
        steps = catch_up.steps_due(self.sim.stamp_ns, self.sim.config.physics_dt_ns, self.sim.config.decimation)
        for _ in range(steps):
            if freshness is Freshness.WAITING:
                self.sim.step_still()
            else:
                self.sim.step(command)
        if steps:
            self.publish_state()

    def _report(self, freshness: Freshness) -> None:
        self.freshness = freshness
        level = {Freshness.FRESH: DiagnosticStatus.OK, Freshness.WAITING: DiagnosticStatus.OK}.get(
            freshness, DiagnosticStatus.WARN)
        text = {
            Freshness.FRESH: "joint_command is arriving",
            Freshness.WAITING: "waiting for joint_command; the robot is held still where it starts",
            Freshness.HOLD: f"no joint_command for {self.cfg.command_hold_after_s} s: holding the last target",
            Freshness.DAMP: f"no joint_command for {self.cfg.command_damp_after_s} s: damping only",
        }[freshness]
        if level == DiagnosticStatus.OK:  # one severity per call site (rclpy requires it)
            self.get_logger().info(text)
        else:
            self.get_logger().warning(text)
        self.diagnostics.set(level, text)

    # -- output -----------------------------------------------------------------------------------
    def publish_state(self) -> None:
        state = self.sim.state()
        stamp = to_stamp(state.stamp_ns)
        self.pub_clock.publish(ClockMsg(clock=stamp))
        self.pub_joints.publish(joint_state_msg(self.robot.joint_names, stamp, state.q, state.dq, state.tau))
        self.pub_imu.publish(imu_msg(stamp, state.world_q_pelvis, state.pelvis_w_pelvis, state.pelvis_a_imu))
        self.pub_odom.publish(odom_msg(stamp, state.world_p_pelvis, state.world_q_pelvis, state.pelvis_v_pelvis,
                                       state.pelvis_w_pelvis))
        self._last_publish = time.monotonic()
        if self.hands is not None:
            self.hands.update(state.stamp_ns / 1e9)
        if self.viewer is not None:
            self.viewer.sync()


def main(args: list[str] | None = None) -> None:
    run(SimBridge, args)


if __name__ == "__main__":
    main()
