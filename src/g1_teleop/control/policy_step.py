"""One tick of the policy, ROS-free: the tick's inputs → the 29-joint command, and the problems to warn about.

No command from a stale state (real time: no plausible joint state for ``state_timeout_s``; the bridge holds,
then damps); a stale arm target is dropped (the arms hold). Each tick counts for the mode requests' hold-off,
gives the operator's commands to the lower body, and builds the target, which passes its contract. The
command is stamped, in lockstep, with the state it answers; in real time with the tick's clock time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from g1_teleop.control.mode_requests import ModeRequestGate
from g1_teleop.control.operator_commands import JoystickMapping
from g1_teleop.control.policy_inputs import PolicyInputs
from g1_teleop.control.state_checks import PlausibilityLimits
from g1_teleop.control.tick_inputs import TickInputs
from g1_teleop.control.whole_body_target import WholeBodyTarget, WholeBodyTargetBuilder
from g1_teleop.core.rotations import yaw_from_wxyz


@dataclass(frozen=True)
class PolicyCommand:
    """A tick's command: its stamp, the target, and the stamp of the operator sample behind its arm targets
    (None: no arm target)."""

    stamp_ns: int
    target: WholeBodyTarget
    arm_stamp_ns: int | None


class PolicySettings(Protocol):
    """The policy node's settings a tick depends on (control.policy_settings.PolicyNodeConfig has them; s, indices)."""

    control_dt: float
    lockstep: bool
    state_timeout_s: float
    arm_target_timeout_s: float
    joy_axes: tuple[int, ...]
    joy_buttons: tuple[int, ...]
    joy_timeout_s: float
    cmd_vel_timeout_s: float
    button_release_s: float
    mode_hold_off_s: float


class PolicyStep:
    """The tick's inputs (``inputs``; ``intake`` takes the messages, refusing implausible states), the mode
    requests' gate (hold-off in ticks) and the target builder, composed."""

    def __init__(self, builder: WholeBodyTargetBuilder, settings: PolicySettings) -> None:
        s = settings
        self.builder = builder
        self.inputs = TickInputs(s.lockstep, s.state_timeout_s, s.arm_target_timeout_s)
        mapping = JoystickMapping(s.joy_axes, s.joy_buttons, s.joy_timeout_s, s.cmd_vel_timeout_s, s.button_release_s)
        interval = s.control_dt if s.lockstep else PlausibilityLimits().min_interval_s  # lockstep: runs ahead
        self.intake = PolicyInputs(builder.robot, self.inputs, mapping, PlausibilityLimits(min_interval_s=interval))
        self.operator = self.intake.operator
        self.gate = ModeRequestGate(builder.lower_body, round(s.mode_hold_off_s / s.control_dt), s.control_dt)
        self.control_dt = s.control_dt
        self._last_stamp_ns: int | None = None  # the previous command's

    def sync_timeout(self, now_s: float, timeout_s: float) -> tuple[bool, tuple[str, str] | None]:
        """Lockstep, polled: whether to tick now with the latest arm target (the state's own is overdue), and
        the problem to warn about. Before the first arm target the graph is still starting: it waits, so that
        a slow start never changes a run."""
        if not self.inputs.overdue(now_s, timeout_s):
            return False, None
        t = self.inputs.stamp_ns / 1e9
        if self.inputs.arm is None:
            return False, ("first_arm", f"no teleop/arm_target yet (t = {t:.3f} s): is retarget running? Lockstep "
                                        "waits for its first answer")
        return True, ("sync", f"no teleop/arm_target for t = {t:.3f} s within {timeout_s} s: is retarget running? "
                              "Using the latest arm target")

    def __call__(self, now_s: float, clock_stamp_ns: int | None = None) -> tuple[PolicyCommand | None,
                                                                                 list[tuple[str, str]]]:
        """The command of a tick at ``now_s`` (None: none this tick) and the (kind, message) problems."""
        tick = self.inputs.take(now_s)
        if tick is None:
            return None, []
        if tick.stale_state:
            return None, [("stale_state", f"no plausible joint_states for {self.inputs.state_timeout_s} s: no "
                                          "command (the bridge holds, then damps)")]
        problems = []
        if tick.stale_arm:
            problems.append(("stale_arm", f"teleop/arm_target older than {self.inputs.arm_target_timeout_s} s: "
                                          "arms hold"))
        self.gate.tick()
        self.operator.apply(self.builder.lower_body, now_s, yaw_from_wxyz(tick.state.world_q_pelvis))
        arm = tick.arm
        if arm is not None and arm.waist_q is not None and not self.builder.lower_body.command_waist(arm.waist_q):
            problems.append(("waist", "the lower-body controller drives the waist itself now (a learned policy, "
                                      "walking, or controller hold): the operator's waist targets wait"))
        stamp = tick.stamp_ns if clock_stamp_ns is None else clock_stamp_ns
        periods = 1 if self._last_stamp_ns is None else round((stamp - self._last_stamp_ns) / 1e9 / self.control_dt)
        self._last_stamp_ns = stamp
        target = self.builder.step(tick.state, None if arm is None else arm.q, None if arm is None else arm.tau_ff,
                                   periods)
        problems += [(f"command/{kind}", f"command bounded by its contract: {kind} of {joints} joints")
                     for kind, joints in (target.corrections or {}).items()]
        return PolicyCommand(stamp, target, None if arm is None else arm.stamp_ns), problems
