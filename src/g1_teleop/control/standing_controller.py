"""The built-in standing and squat controller (mode SQUAT, no learned weights). ROS-free.

The operator's sticks set the pelvis height h ∈ [0.45, 0.75] m and pitch p ∈ [0, 0.5] rad (as OpenWBT's
squat mode: full stick 0.08 m/s and 0.1 rad/s). Every control tick:

1. the pelvis reference moves toward (h, p) at most ``reference_rate`` (m/s, rad/s), starting from the
   measured posture, so no target jumps;
2. the pelvis is placed horizontally so that the centre of mass (with the measured arms) projects on the
   centre of the feet, and the legs follow by IK with both feet flat where they stand (leg_ik); below
   about 0.58 m the ankles reach their dorsiflexion limit and the pelvis leans further forward than
   commanded (0.31 rad at 0.5 m) to keep the centre of mass over the feet;
3. the leg targets move at most ``leg_step_limit_rad`` per tick toward that solution; the waist holds 0, or
   follows the operator's waist targets (``command_waist``: within ``waist_limit_rad`` of 0, at most
   ``waist_step_limit_rad`` per tick), and the legs are solved with the waist where it goes;
4. the feed-forward torques of legs and waist hold the measured posture against gravity with both feet
   on the ground and push the centre of mass back over the feet from the IMU and joint velocities
   (balance): joint PD alone at the OpenWBT gains (ankles 40 N·m/rad) is far softer than the
   ≈ m·g·h ≈ 240 N·m/rad that would keep the body from tipping about the ankles.

It is the squat part of a lower-body controller (g1_teleop.control.squat_locomotion: alone, or with a learned
walking part); its gains are the robot's default profile, which its balance torques were tuned with. Vectors
are in DDS motor order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from g1_teleop.control.balance import Balance, BalanceGains
from g1_teleop.control.gains import JointGains
from g1_teleop.control.leg_ik import LegIK, PelvisPose, StanceError, StanceModel
from g1_teleop.control.lower_body import LowerBodyTarget
from g1_teleop.control.proprioception import Proprioception
from g1_teleop.control.squat_command import SquatCommand, SquatCommandLimits
from g1_teleop.core.limits import slew_limit
from g1_teleop.core.robot_description import Robot


@dataclass(frozen=True)
class StandingConfig:
    """Command ranges and rates, reference and target rate limits, balance gains (see the module doc)."""

    control_dt: float = 0.02  # s
    height_range_m: tuple[float, float] = (0.45, 0.75)
    pitch_range_rad: tuple[float, float] = (0.0, 0.5)
    full_stick_rate: tuple[float, float] = (0.08, 0.1)  # m/s, rad/s
    reference_rate: tuple[float, float, float] = (0.1, 0.15, 0.1)  # height m/s, pitch rad/s, horizontal m/s
    leg_step_limit_rad: float = 0.04  # per tick (2 rad/s)
    transition_ticks: int = 50  # ticks the legs are kept before walking starts (OpenWBT's 1 s)
    # |waist yaw, roll, pitch| the operator may command (rad): well inside the joints' ±2.6/±0.52/±0.52, where
    # the centre of mass stays over the feet
    waist_limit_rad: tuple[float, float, float] = (0.6, 0.2, 0.3)
    waist_step_limit_rad: float = 0.01  # per tick (0.5 rad/s), as the arm targets
    balance: BalanceGains = field(default_factory=BalanceGains)

    def __post_init__(self) -> None:
        if not self.control_dt > 0 or not self.leg_step_limit_rad > 0 or not self.waist_step_limit_rad > 0:
            raise ValueError("control_dt, leg_step_limit_rad and waist_step_limit_rad must be positive")
        if len(self.waist_limit_rad) != 3 or not all(limit >= 0 for limit in self.waist_limit_rad):
            raise ValueError(f"waist_limit_rad must be three non-negative angles (yaw, roll, pitch), got "
                             f"{self.waist_limit_rad}")
        if self.transition_ticks < 0:
            raise ValueError(f"transition_ticks must be >= 0, got {self.transition_ticks}")
        if not all(rate > 0 for rate in self.reference_rate):
            raise ValueError(f"reference_rate must be positive, got {self.reference_rate}")

    @property
    def squat_limits(self) -> SquatCommandLimits:
        return SquatCommandLimits(self.height_range_m, self.pitch_range_rad,
                                  tuple(r * self.control_dt for r in self.full_stick_rate),
                                  standing=(self.height_range_m[1], self.pitch_range_rad[0]))


class StandingController:
    """Lower-body targets that stand and squat on both feet (a ``SquatPart``), with the robot's default gain
    profile."""

    def __init__(self, robot: Robot, stance: StanceModel, config: StandingConfig | None = None) -> None:
        self.config = config or StandingConfig()
        self.robot = robot
        self.gains, self.transition_ticks = JointGains.profile(robot), self.config.transition_ticks
        self._legs, self._waist_joints = robot.group("legs"), robot.group("waist")
        self._lower = robot.group("lower_body")  # legs and waist: the order of the targets
        self._command = SquatCommand(self.config.squat_limits)
        self.ik = LegIK(stance)
        self.balance = Balance(stance, self.config.balance)
        self._reference: PelvisPose | None = None  # the pelvis pose the legs are solved for
        self._pitch_bound = 0.0  # rad: the commanded pitch, rate-limited (the reference may lean further)
        self._solution: np.ndarray | None = None  # (29,) the last IK solution (legs), DDS order
        self._target: np.ndarray | None = None  # (15,) legs and waist (lower_body group), as last sent
        self._waist_q = np.zeros(len(self._waist_joints))  # the waist target, as last sent (rad)
        self._waist_goal = np.zeros(len(self._waist_joints))  # where the operator wants it (rad)
        limit = np.asarray(self.config.waist_limit_rad, dtype=float)
        self._waist_lower = np.maximum(-limit, robot.q_lower[self._waist_joints])
        self._waist_upper = np.minimum(limit, robot.q_upper[self._waist_joints])
        self.ik_failures = 0  # ticks whose pelvis pose the legs could not reach (the last pose was kept)

    @property
    def squat_command(self) -> np.ndarray:
        """(h m, p rad)."""
        return self._command.value

    def command_squat(self, height_rate: float, pitch_rate: float, height_m: float | None = None) -> None:
        """Stick values in [-1, 1] for one control tick; a height target ``height_m`` (m) replaces the height stick."""
        self._command.integrate(height_rate, pitch_rate, height_m)

    def command_waist(self, q: np.ndarray) -> bool:
        """The operator's waist targets (3,) rad (yaw, roll, pitch), clipped to ``waist_limit_rad``; taken."""
        self._waist_goal = np.clip(np.asarray(q, dtype=float), self._waist_lower, self._waist_upper)
        return True

    def reset(self) -> None:
        """The command back to standing (the waist goal back to 0); the next targets start from the measured
        posture."""
        self._command.reset()
        self._waist_goal = np.zeros(len(self._waist_joints))
        self._waist_q = np.zeros(len(self._waist_joints))  # (as the walk part leaves it: a blend follows)
        self._reference = None

    def targets(self, state: Proprioception) -> LowerBodyTarget:
        cfg = self.config
        self._waist_q = slew_limit(self._waist_goal, self._waist_q, cfg.waist_step_limit_rad)
        q = np.array(state.q, dtype=float)
        q[self._waist_joints] = self._waist_q
        if self._reference is None:  # start from the measured posture
            self._reference = self.ik.pelvis_of(q)
            self._pitch_bound = self._reference.pitch_rad
            self._solution = q.copy()
            self._target = q[self._lower]
        height, pitch = self.squat_command
        ref = self._reference
        rate_h, rate_p, rate_xy = (r * cfg.control_dt for r in cfg.reference_rate)
        self._pitch_bound = float(slew_limit(pitch, self._pitch_bound, rate_p))
        wanted = PelvisPose(ref.x_m, ref.y_m, float(slew_limit(height, ref.height_m, rate_h)), self._pitch_bound)
        q[self._legs] = self._solution[self._legs]
        try:
            # Two iterations a tick: warm-started, the pose converges over the ticks.
            balanced, _ = self.ik.balanced(wanted, q, com_target_xy=np.zeros(2), iterations=2)
            xy = slew_limit(np.array([balanced.x_m, balanced.y_m]), np.array([ref.x_m, ref.y_m]), rate_xy)
            reference = PelvisPose(float(xy[0]), float(xy[1]), wanted.height_m,
                                   float(slew_limit(balanced.pitch_rad, ref.pitch_rad, rate_p)))
            self._solution = self.ik.solve(reference, q)
            self._reference = reference
        except StanceError:  # out of the legs' reach: keep the last reachable pose
            self.ik_failures += 1
        goal = self._solution.copy()  # the legs solved, the waist held
        goal[self._waist_joints] = self._waist_q
        goal = np.clip(goal[self._lower], self.robot.q_lower[self._lower], self.robot.q_upper[self._lower])
        self._target = slew_limit(goal, self._target, cfg.leg_step_limit_rad)
        tau = self.balance.torques(state).tau[self._lower]
        effort = self.robot.effort_limit[self._lower]
        return LowerBodyTarget(q=self._target.copy(), tau_ff=np.clip(tau, -effort, effort), gains=self.gains)
