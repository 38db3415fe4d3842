"""Safety state machine of the hardware bridge: what may be written to the motors, tick by tick. ROS-free.

    WAIT_FOR_STATE ─fresh LowState─▶ ZERO_TORQUE ─start─▶ RAMP ─ramp done─▶ HOLD ─activate─▶ ACTIVE
                                          any state ─fault or e-stop─▶ DAMP ─start─▶ RAMP

- WAIT_FOR_STATE: no LowState yet, nothing is written.
- ZERO_TORQUE: kp = kd = 0 until the operator starts.
- RAMP: a linear move from the pose measured at the start to the default pose (``ramp_duration_s``).
- HOLD: the default pose with the hold gains; ACTIVE: the policy's commands, blended in from the hold
  command over ``activate_blend_s`` (targets, feed-forward and gains move linearly from one to the other),
  so that a policy whose first targets are far from the held pose does not jerk the robot.
- DAMP: kp = 0, kd from the damping gain profile. Entered from any state on an operator e-stop; while ACTIVE on
  no valid joint_command for more than ``command_grace_s`` (a command older than ``command_timeout_s`` is late:
  the last one is held meanwhile and the lateness reported), or for more than ``command_timeout_s`` once the
  command's source is known gone (no publisher on joint_command); on a LowState older than
  ``state_timeout_s`` (then nothing is written until a fresh one arrives), on a joint velocity above its
  limit, on a pelvis tilt beyond ``max_tilt_rad`` and on a LowState with non-finite values. It is left only
  by an operator start, which ramps again from the measured pose, and only when no fault remains.

Every target passes, in every state, the joint position limits, a per-tick slew limit (CommandLimiter)
and a bound on the PD stiffness torque: |kp·(q* − q)| ≤ ``pd_torque_scale``·effort limit. Commands with
NaN or the wrong number of joints are rejected. :meth:`BridgeSafety.step` is a function of the clock and
the inputs; it returns the command to write (or None) and what happened, each reported once.

Units: s, rad, rad/s, N·m. Vectors in DDS motor order (29 joints).
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from g1_teleop.core import rotations
from g1_teleop.core.limits import CommandLimiter, JointCommand, JointLimits, limit_stiffness_torque
from g1_teleop.core.robot_description import Robot
from g1_teleop.core.settings import check_settings, setting


class SafetyState(str, enum.Enum):
    WAIT_FOR_STATE = "WAIT_FOR_STATE"
    ZERO_TORQUE = "ZERO_TORQUE"
    RAMP = "RAMP"
    HOLD = "HOLD"
    ACTIVE = "ACTIVE"
    DAMP = "DAMP"


class OperatorAction(str, enum.Enum):
    START = "start"  # ZERO_TORQUE or DAMP → RAMP
    ACTIVATE = "activate"  # HOLD → ACTIVE
    ESTOP = "estop"  # any state → DAMP


@dataclass(frozen=True)
class OperatorEvent:
    """An operator request and where it came from (e.g. "wireless remote", "joy", "service")."""

    action: OperatorAction
    source: str


@dataclass(frozen=True)
class BridgeSafetyConfig:
    """Thresholds of the state machine and the gain profiles it uses, each declared with its units and legal values."""

    ramp_duration_s: float = setting(2.0, "RAMP: time from the measured pose to the default pose (s)", positive=True)
    activate_blend_s: float = setting(1.0, "HOLD → ACTIVE: time from the hold command to the policy's (s); 0: at once",
                                      minimum=0.0)
    # 45 ms, so that with one 2 ms write tick and DDS delivery at both ends the first damping LowCmd reaches the
    # robot within 50 ms of the last command.
    command_timeout_s: float = setting(0.045, "ACTIVE: a valid joint_command older than this is late: the last one is "
                                              "held; with no publisher left on joint_command, damp (s)", positive=True)
    # A late command holds the last one before damping, because damping drops a standing humanoid and a live policy
    # on a loaded machine was seen starved for up to 367 ms (45 ms without grace: false trips within 0.6-3.2 s).
    # The anchors: GR00T-WholeBodyControl (decoupled_wbc/control/policy/g1_decoupled_whole_body_policy.py) treats
    # teleop input older than 1.0 s by injecting a zero-velocity goal, not by damping; unitree_rl_gym's
    # deploy/deploy_real/deploy_real.py has no command watchdog at all (one damping command on exit). NVIDIA's SONIC
    # (GEAR-SONIC, gear_sonic_deploy in GR00T-WholeBodyControl) was looked up; its deploy's timeout was not checked.
    # Here the policy itself is what is late, so nothing balances meanwhile: half of GR00T's 1.0 s, above the
    # longest starvation seen, is held, then damping; a policy known gone (its publisher left) damps at once.
    command_grace_s: float = setting(0.5, "ACTIVE: damp when the last valid joint_command is older (s); between "
                                          "command_timeout_s and this the last one is held", positive=True)
    state_timeout_s: float = setting(0.1, "damp, and write nothing, when the last LowState is older (s)", positive=True)
    max_tilt_rad: float = setting(0.8, "damp when the pelvis z axis is further from the world's vertical: a fall (rad)",
                                  positive=True, maximum=math.pi)
    velocity_fault_scale: float = setting(1.0, "damp when a joint's |dq| > scale · its velocity limit", positive=True)
    slew_velocity_scale: float = setting(1.0, "a target moves at most scale · its velocity limit · tick",
                                         positive=True)
    pd_torque_scale: float = setting(1.0, "|kp·(q* − q)| <= scale · effort limit", positive=True)
    hold_gain_profile: str = setting("default", "gain profile (config/g1_29dof.yaml) of RAMP and HOLD")
    damping_gain_profile: str = setting("damping", "gain profile (config/g1_29dof.yaml) of DAMP; its kp must be 0")

    def __post_init__(self) -> None:
        try:
            for field in dataclasses.fields(self):  # (check_settings does not check types)
                value = getattr(self, field.name)
                if isinstance(field.default, str) and not (isinstance(value, str) and value):
                    raise ValueError(f"{field.name} must name a gain profile, got {value!r}")
                if isinstance(field.default, float) and (isinstance(value, bool) or not isinstance(value, int | float)):
                    raise ValueError(f"{field.name} must be a number, got {value!r}")
            check_settings(self)
            if self.command_grace_s < self.command_timeout_s:
                raise ValueError(f"command_grace_s ({self.command_grace_s}) must be >= command_timeout_s "
                                 f"({self.command_timeout_s})")
        except ValueError as exc:
            raise ValueError(f"bridge safety: {exc}") from None


@dataclass(frozen=True, eq=False)
class StateSample:
    """The latest LowState: when it arrived (s, the clock of ``step``), q (rad), dq (rad/s) and the pelvis
    IMU orientation ``world_q_pelvis`` (w, x, y, z)."""

    received_s: float
    q: np.ndarray
    dq: np.ndarray
    world_q_pelvis: np.ndarray


@dataclass(frozen=True, eq=False)
class CommandSample:
    """The latest joint_command and when it arrived (s, the clock of ``step``)."""

    received_s: float
    command: JointCommand


@dataclass(frozen=True)
class Transition:
    time_s: float
    previous: SafetyState
    current: SafetyState
    reason: str

    def __str__(self) -> str:
        return f"{self.previous.value} → {self.current.value}: {self.reason}"


@dataclass(frozen=True)
class CommandRejected:
    """A joint_command that does not reach the robot, and why (it is judged once)."""

    problem: str

    def __str__(self) -> str:
        return f"joint_command rejected: {self.problem}"


@dataclass(frozen=True)
class ActionRefused:
    """An operator start or activate that was refused, and why."""

    event: OperatorEvent
    reason: str

    def __str__(self) -> str:
        return f"{self.event.action.value} from {self.event.source} refused: {self.reason}"


@dataclass(frozen=True)
class WritingStopped:
    """The tick wrote nothing after ticks that wrote a LowCmd, and why."""

    reason: str

    def __str__(self) -> str:
        return f"LowCmd writing stopped: {self.reason}"


@dataclass(frozen=True)
class WritingResumed:
    """The tick wrote a LowCmd after ticks that wrote none (a LowState fresh again)."""

    def __str__(self) -> str:
        return "LowCmd writing resumed: LowState fresh again"


@dataclass(frozen=True)
class CommandLate:
    """ACTIVE: the last valid joint_command became late (older than command_timeout_s); it is held."""

    age_s: float
    grace_s: float

    def __str__(self) -> str:
        return (f"joint_command late ({self.age_s * 1e3:.0f} ms): holding the last one, damping if none arrives "
                f"within {self.grace_s:.3f} s of it")


Notice = CommandRejected | ActionRefused | WritingStopped | WritingResumed | CommandLate


@dataclass(frozen=True)
class SafetyOutput:
    """What to write this tick (None: nothing), the state changes and the notices."""

    command: JointCommand | None
    transitions: tuple[Transition, ...] = ()
    notices: tuple[Notice, ...] = ()


class BridgeSafety:
    """The state machine; feed it every write tick with :meth:`step`."""

    def __init__(self, robot: Robot, config: BridgeSafetyConfig) -> None:
        self.config = config
        self.joint_names = robot.joint_names
        self.limits = JointLimits(robot.q_lower, robot.q_upper, robot.velocity_limit, robot.effort_limit)
        self.default_q = robot.default_q
        self.hold_kp, self.hold_kd = robot.gains(config.hold_gain_profile)
        damping_kp, self.damping_kd = robot.gains(config.damping_gain_profile)
        if np.any(damping_kp != 0):
            raise ValueError(f"bridge safety: damping_gain_profile {config.damping_gain_profile!r} has kp ≠ 0")
        self._limiter = CommandLimiter(self.limits, config.slew_velocity_scale)
        self._state = SafetyState.WAIT_FOR_STATE
        self._command: CommandSample | None = None  # the latest valid command
        self._seen_command_s: float | None = None  # received_s of the latest command looked at
        self._ramp_start_s = 0.0
        self._active_start_s = 0.0
        self._ramp_from_q = robot.default_q
        self._last_tick_s: float | None = None
        self._source_gone = False
        self._writing = False  # the last tick returned a command
        self._late_reported_s: float | None = None  # received_s of the command last reported late
        self._ever_written = False

    @property
    def state(self) -> SafetyState:
        return self._state

    def step(
        self,
        now_s: float,
        state: StateSample | None,
        command: CommandSample | None,
        events: Iterable[OperatorEvent] = (),
        command_source_gone: bool = False,
    ) -> SafetyOutput:
        """One write tick at ``now_s``: the latest LowState and joint_command (None before the first), the
        operator events since the last tick, and whether joint_command is known to have no publisher left."""
        self._source_gone = command_source_gone
        transitions: list[Transition] = []
        notices: list[Notice] = []

        def go(target: SafetyState, reason: str) -> None:
            if self._state is target:
                return
            transitions.append(Transition(now_s, self._state, target, reason))
            self._state = target
            if target is SafetyState.RAMP:
                assert state is not None
                self._ramp_start_s = now_s
                self._ramp_from_q = np.array(state.q, dtype=float)
                self._limiter.reset(self._ramp_from_q)
            elif target is SafetyState.ACTIVE:
                self._active_start_s = now_s

        if command is not None and command.received_s != self._seen_command_s:
            self._seen_command_s = command.received_s
            problem = self._command_problem(command.command)
            if problem:
                notices.append(CommandRejected(problem))
            else:
                self._command = command

        fresh = state is not None and now_s - state.received_s <= self.config.state_timeout_s
        requests = list(events)
        estops = [e for e in requests if e.action is OperatorAction.ESTOP]
        if estops:
            go(SafetyState.DAMP, f"operator e-stop ({estops[0].source})")
        fault = self._fault(now_s, state, fresh)
        if fault:
            go(SafetyState.DAMP, fault)
        elif self._state is SafetyState.ACTIVE and self._command is not None:
            age = now_s - self._command.received_s
            if age > self.config.command_timeout_s and self._late_reported_s != self._command.received_s:
                self._late_reported_s = self._command.received_s
                notices.append(CommandLate(age, self.config.command_grace_s))
        if self._state is SafetyState.WAIT_FOR_STATE and fresh:
            go(SafetyState.ZERO_TORQUE, "LowState received")
        for event in requests:
            if event.action is not OperatorAction.ESTOP:
                refusal = self._operator(event, now_s, fresh, fault, bool(estops), go)
                if refusal:
                    notices.append(ActionRefused(event, refusal))
        if self._state is SafetyState.RAMP and now_s - self._ramp_start_s >= self.config.ramp_duration_s:
            go(SafetyState.HOLD, "ramp complete")

        output = None
        if fresh:
            assert state is not None
            output = self._target(now_s, state)
        if output is None and self._writing:
            notices.append(WritingStopped(self._stale_reason(now_s, state)))
        elif output is not None and not self._writing and self._ever_written:
            notices.append(WritingResumed())
        self._writing = output is not None
        self._ever_written |= self._writing
        self._last_tick_s = now_s
        return SafetyOutput(output, tuple(transitions), tuple(notices))

    # -----------------------------------------------------------------------------------------------

    def _command_problem(self, command: JointCommand) -> str | None:
        n = len(self.joint_names)
        fields = {"q": command.q, "dq": command.dq, "tau_ff": command.tau_ff, "kp": command.kp, "kd": command.kd}
        wrong_size = [f"{name} has shape {np.shape(v)}" for name, v in fields.items() if np.shape(v) != (n,)]
        if wrong_size:
            return ", ".join(wrong_size) + f" (expected ({n},))"
        not_finite = [name for name, v in fields.items() if not np.isfinite(v).all()]
        if not_finite:
            return "non-finite values in " + ", ".join(not_finite)
        return None

    def _stale_reason(self, now_s: float, state: StateSample | None) -> str:
        if state is None:
            return "no LowState"
        return f"LowState {now_s - state.received_s:.3f} s old (limit {self.config.state_timeout_s:.3f} s)"

    def _fault(self, now_s: float, state: StateSample | None, fresh: bool) -> str | None:
        """Why the robot must be damped now, or None."""
        cfg = self.config
        if self._state is SafetyState.WAIT_FOR_STATE and not fresh:
            return None
        if not fresh:
            return self._stale_reason(now_s, state)
        assert state is not None
        not_finite = [name for name, v in (("q", state.q), ("dq", state.dq), ("IMU quaternion", state.world_q_pelvis))
                      if not np.isfinite(v).all()]
        if not_finite or not float(state.world_q_pelvis @ state.world_q_pelvis) > 0:
            return "LowState has invalid values in " + (", ".join(not_finite) or "IMU quaternion (zero norm)")
        excess = np.abs(state.dq) / (cfg.velocity_fault_scale * self.limits.velocity)
        worst = int(np.argmax(excess))
        if excess[worst] > 1.0:
            return (f"{self.joint_names[worst]} velocity {state.dq[worst]:.2f} rad/s beyond its limit "
                    f"{cfg.velocity_fault_scale * self.limits.velocity[worst]:.2f} rad/s")
        tilt = rotations.tilt(state.world_q_pelvis)
        if tilt > cfg.max_tilt_rad:
            return f"pelvis tilt {tilt:.2f} rad beyond {cfg.max_tilt_rad:.2f} rad (fall)"
        if self._state is SafetyState.ACTIVE:
            age = None if self._command is None else now_s - self._command.received_s
            if age is None or age > cfg.command_grace_s:
                shown = "ever" if age is None else f"{age:.3f} s"
                return f"no valid joint_command for {shown} (grace {cfg.command_grace_s:.3f} s)"
            if self._source_gone and age > cfg.command_timeout_s:
                return (f"no valid joint_command for {age:.3f} s (limit {cfg.command_timeout_s:.3f} s) and no "
                        "publisher left on joint_command")
        return None

    def _operator(self, event: OperatorEvent, now_s: float, fresh: bool, fault: str | None, estopped: bool,
                  go: Callable[[SafetyState, str], None]) -> str | None:
        """Apply a start or activate request; returns why it was refused, or None."""
        if estopped:
            return "an e-stop arrived in the same tick"
        if event.action is OperatorAction.START:
            if self._state not in (SafetyState.ZERO_TORQUE, SafetyState.DAMP):
                return f"only from ZERO_TORQUE or DAMP (now {self._state.value})"
            if not fresh:
                return "no fresh LowState"
            if fault:
                return fault
            go(SafetyState.RAMP, f"operator start ({event.source})")
            return None
        if self._state is not SafetyState.HOLD:
            return f"only from HOLD (now {self._state.value})"
        if self._command is None or now_s - self._command.received_s > self.config.command_timeout_s:
            return f"no valid joint_command within {self.config.command_timeout_s:.3f} s"
        go(SafetyState.ACTIVE, f"operator activate ({event.source})")
        return None

    def _hold_command(self) -> JointCommand:
        return JointCommand.hold(self.default_q, self.hold_kp, self.hold_kd)

    def _target(self, now_s: float, state: StateSample) -> JointCommand:
        """The limited command for the current state, from a fresh LowState."""
        n = len(self.joint_names)
        if self._state in (SafetyState.ZERO_TORQUE, SafetyState.DAMP):
            kd = self.damping_kd if self._state is SafetyState.DAMP else np.zeros(n)
            wanted = JointCommand.hold(state.q, np.zeros(n), kd)
            self._limiter.reset(state.q)  # no stiffness: the next ramp starts from the measured pose
        elif self._state is SafetyState.RAMP:
            alpha = min(1.0, max(0.0, (now_s - self._ramp_start_s) / self.config.ramp_duration_s))
            q = self._ramp_from_q + alpha * (self.default_q - self._ramp_from_q)
            wanted = JointCommand.hold(q, self.hold_kp, self.hold_kd)
        elif self._state is SafetyState.HOLD:
            wanted = self._hold_command()
        else:
            assert self._state is SafetyState.ACTIVE and self._command is not None
            wanted = self._command.command
            blend_s = self.config.activate_blend_s
            if now_s - self._active_start_s < blend_s:
                wanted = self._hold_command().blend(wanted, (now_s - self._active_start_s) / blend_s)
        dt = 0.0 if self._last_tick_s is None else max(0.0, now_s - self._last_tick_s)
        limited = self._limiter.apply(wanted, dt)
        max_torque = self.config.pd_torque_scale * self.limits.effort
        limited.q = limit_stiffness_torque(limited.q, limited.kp, state.q, max_torque)
        self._limiter.reset(limited.q)
        return limited
