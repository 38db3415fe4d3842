"""Assembly of the 29-joint target from the lower-body controller and the IK arm targets, ROS-free.

A lower-body controller gives the leg and waist targets and their feed-forward torques each tick, takes
the operator's commands and answers mode requests. Arm targets move at most ``arm_step_limit_rad`` per
control period (OpenWBT's ±0.01 rad limiter), from the measured arm pose at start, and stay inside the
joint limits: a tick after periods a starved process skipped may move by as many steps (MAX_CATCH_UP_PERIODS at
most), so that the arms' speed limit does not fall with the tick rate. With ``walking_pose``, while the lower
body walks (``LowerBodyController.walking``) the arms move to the robot's default arm pose instead of the IK's
targets. The gains of the command are the lower-body
controller's for every joint (g1_teleop.control.gains), given with the targets of the same tick. The command
then passes its own contract (g1_teleop.control.command_contract): finite, targets within the joint limits,
velocities within the velocity limits, feed-forward torques (the IK's arm gravity torques included) within the
effort limits. Vectors are in DDS motor order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from g1_teleop.control.command_contract import CommandContract
from g1_teleop.control.gains import JointGains
from g1_teleop.control.lower_body import LowerBodyController
from g1_teleop.control.proprioception import Proprioception
from g1_teleop.core.limits import slew_limit
from g1_teleop.core.robot_description import Robot

MAX_CATCH_UP_PERIODS = 3  # arm steps one tick may take after skipped periods (0.03 rad with OpenWBT's limiter)


@dataclass(frozen=True)
class WholeBodyTarget:
    """The 29-joint command of one tick: targets q (rad), velocities dq (rad/s), feed-forward torques tau_ff
    (N·m) and the PD gains to apply with them; ``gains_changed`` when they differ from the previous command's (or
    it is the first); ``corrections`` what the command contract changed (kind → joints)."""

    q: np.ndarray
    tau_ff: np.ndarray
    gains: JointGains
    gains_changed: bool
    dq: np.ndarray | None = None
    corrections: dict[str, int] | None = None


class WholeBodyTargetBuilder:
    def __init__(self, robot: Robot, lower_body: LowerBodyController, arm_step_limit_rad: float = 0.01,
                 walking_pose: bool = False) -> None:
        if arm_step_limit_rad <= 0:
            raise ValueError(f"arm_step_limit_rad must be positive, got {arm_step_limit_rad}")
        self._lower, self._arms = robot.group("lower_body"), robot.group("arms")
        if sorted([*self._lower, *self._arms]) != list(range(len(robot.joint_names))):
            raise ValueError(f"{robot.config_path}: the joint groups lower_body and arms must hold each joint once")
        self.robot = robot
        self.lower_body = lower_body
        self.arm_step_limit_rad = arm_step_limit_rad
        self.walking_pose = walking_pose
        self._walking_arm_q = robot.default_q[self._arms]
        self._arm_lower = robot.q_lower[self._arms]
        self._arm_upper = robot.q_upper[self._arms]
        self._arm_q: np.ndarray | None = None
        self._gains: JointGains | None = None  # the previous command's
        self.contract = CommandContract(robot.q_lower, robot.q_upper, robot.velocity_limit, robot.effort_limit)

    def start(self, q_measured: np.ndarray) -> None:
        """Begin from the measured arm pose, so the first targets do not jump."""
        self._arm_q = np.clip(q_measured[self._arms], self._arm_lower, self._arm_upper)

    def step(self, state: Proprioception, arm_q_target: np.ndarray | None, arm_tau_ff: np.ndarray | None,
             periods: int = 1) -> WholeBodyTarget:
        """One tick, ``periods`` control periods after the previous one (1 unless ticks were skipped):
        ``arm_q_target`` (rad) and ``arm_tau_ff`` (N·m) in the ``arms`` group's order; None keeps the arms where
        they are (no or stale IK)."""
        if self._arm_q is None:
            self.start(state.q)
        if self.walking_pose and self.lower_body.walking:
            arm_q_target, arm_tau_ff = self._walking_arm_q, None
        if arm_q_target is not None:
            steps = min(max(periods, 1), MAX_CATCH_UP_PERIODS)
            stepped = slew_limit(arm_q_target, self._arm_q, self.arm_step_limit_rad * steps)
            self._arm_q = np.clip(stepped, self._arm_lower, self._arm_upper)
        lower = self.lower_body.targets(state)
        q_target, tau_ff = np.zeros(len(self.robot.joint_names)), np.zeros(len(self.robot.joint_names))
        q_target[self._lower], tau_ff[self._lower] = lower.q, lower.tau_ff
        q_target[self._arms] = self._arm_q
        if arm_tau_ff is not None:
            tau_ff[self._arms] = arm_tau_ff
        bounded = self.contract.bound(q_target, np.zeros(len(q_target)), tau_ff, fallback_q=state.q)
        changed, self._gains = lower.gains != self._gains, lower.gains
        return WholeBodyTarget(q=bounded.q, tau_ff=bounded.tau_ff, gains=lower.gains, gains_changed=changed,
                               dq=bounded.dq, corrections=bounded.corrections)
