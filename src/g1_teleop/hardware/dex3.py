"""Unitree Dex3-1 hands: their description (config/dex3.yaml), the HandCmd motor mode, and what the
hardware bridge writes to each hand, tick by tick. ROS-free.

A hand follows the state of the body's safety state machine (:mod:`g1_teleop.hardware.bridge_safety`):

- WAIT_FOR_STATE, ZERO_TORQUE: kp = kd = 0 (the fingers are free);
- RAMP, HOLD: the open hand (every joint at 0) with the hand gains;
- ACTIVE: the latest ``teleop/hand_target``; one older than ``command_timeout_s`` is not followed and the
  hand holds its last target;
- DAMP: kp = 0, kd = ``damping_kd``.

Nothing is written to a hand without a HandState newer than ``state_timeout_s``. Every target passes the
joint limits, a slew limit (``slew_velocity_scale`` × each joint's velocity limit) and the stiffness-torque
bound |kp·(q* − q)| ≤ effort limit. Units: rad, rad/s, N·m, s. Vectors in HandCmd motor order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from g1_teleop.core.config_location import ConfigLocation, check_keys, number, string, vector
from g1_teleop.core.limits import CommandLimiter, JointCommand, JointLimits, limit_stiffness_torque
from g1_teleop.core.paths import config_path
from g1_teleop.hardware.bridge_safety import SafetyState

SIDES = ("left", "right")
NUM_HAND_MOTORS = 7
HAND_STATUS = 0x01  # MotorCmd.mode bits 4–6 in every Dex3 source
_JOINT_KEYS = ("left", "right", "effort", "velocity")


class Dex3ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Dex3:
    """Both hands: the motor order, per-side joint limits, gains and the bridge's timeouts."""

    motor_order: tuple[str, ...]  # HandCmd.motor_cmd index → joint ("thumb_0", …)
    limits: dict[str, JointLimits]  # by side
    kp: float
    kd: float
    damping_kd: float
    slew_velocity_scale: float
    command_timeout_s: float
    state_timeout_s: float

    def joint_names(self, side: str) -> tuple[str, ...]:
        """ROS joint names of one hand, in motor order (``left_hand_thumb_0_joint`` …)."""
        return tuple(f"{side}_hand_{joint}_joint" for joint in self.motor_order)


def load_dex3(path: Path | None = None) -> Dex3:
    """Read and validate ``config/dex3.yaml`` (or ``path``)."""
    file = Path(path) if path is not None else config_path("dex3.yaml")
    try:
        raw = yaml.safe_load(file.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise Dex3ConfigError(f"{file}: cannot read: {exc}") from exc
    where = ConfigLocation(str(file), Dex3ConfigError)
    check_keys(raw, ("motor_order", "joints", "gains", "damping_kd", "slew_velocity_scale", "command_timeout_s",
                     "state_timeout_s"), (), where)
    order = raw["motor_order"]
    if not isinstance(order, list) or len(order) != NUM_HAND_MOTORS or len(set(order)) != NUM_HAND_MOTORS:
        raise where.key("motor_order").error(f"expected {NUM_HAND_MOTORS} distinct joint names, got {order!r}")
    order = tuple(string(name, where.key("motor_order").key(i)) for i, name in enumerate(order))
    joints = raw["joints"]
    check_keys(joints, order, (), where.key("joints"))
    ranges = {side: np.zeros((NUM_HAND_MOTORS, 2)) for side in SIDES}
    effort, velocity = np.zeros(NUM_HAND_MOTORS), np.zeros(NUM_HAND_MOTORS)
    for i, name in enumerate(order):
        at = where.key("joints").key(name)
        check_keys(joints[name], _JOINT_KEYS, (), at)
        for side in SIDES:
            ranges[side][i] = vector(joints[name][side], 2, at.key(side))
            if not ranges[side][i, 0] <= 0.0 <= ranges[side][i, 1]:
                raise at.key(side).error(f"must contain 0 (the open hand), got {ranges[side][i].tolist()}")
        effort[i] = number(joints[name]["effort"], at.key("effort"), minimum=0.0, strict=True)
        velocity[i] = number(joints[name]["velocity"], at.key("velocity"), minimum=0.0, strict=True)
    gains = raw["gains"]
    check_keys(gains, ("kp", "kd"), (), where.key("gains"))
    positive = {key: number(raw[key], where.key(key), minimum=0.0, strict=True)
                for key in ("slew_velocity_scale", "command_timeout_s", "state_timeout_s")}
    return Dex3(
        motor_order=order,
        limits={side: JointLimits(ranges[side][:, 0], ranges[side][:, 1], velocity, effort) for side in SIDES},
        kp=number(gains["kp"], where.key("gains").key("kp"), minimum=0.0),
        kd=number(gains["kd"], where.key("gains").key("kd"), minimum=0.0),
        damping_kd=number(raw["damping_kd"], where.key("damping_kd"), minimum=0.0),
        **positive,
    )


def hand_motor_mode(motor: int, timeout: bool = False) -> int:
    """HandCmd MotorCmd.mode: bits 0–3 the motor's index (0–6), bits 4–6 the status (0x01), bit 7 timeout."""
    if not 0 <= motor < NUM_HAND_MOTORS:
        raise ValueError(f"a Dex3 motor index is 0–{NUM_HAND_MOTORS - 1}, got {motor}")
    return motor | HAND_STATUS << 4 | int(timeout) << 7


@dataclass(frozen=True, eq=False)
class HandSample:
    """The latest HandState of one hand: arrival time (s, the clock of ``step``), q (rad), dq (rad/s)."""

    received_s: float
    q: np.ndarray
    dq: np.ndarray


@dataclass(frozen=True, eq=False)
class HandTarget:
    """The latest valid hand target (rad, motor order) and when it arrived (s)."""

    received_s: float
    q: np.ndarray


class HandSafety:
    """What to write to one hand; feed it every hand tick with :meth:`step`."""

    def __init__(self, dex3: Dex3, side: str) -> None:
        if side not in SIDES:
            raise ValueError(f"side must be one of {SIDES}, got {side!r}")
        self.dex3 = dex3
        self.limits = dex3.limits[side]
        self._limiter = CommandLimiter(self.limits, dex3.slew_velocity_scale)
        self._last_tick_s: float | None = None
        self._held: np.ndarray | None = None  # the last target written (rad)

    def step(self, now_s: float, body: SafetyState, hand: HandSample | None,
             target: HandTarget | None) -> JointCommand | None:
        """The command for this tick, or None (no fresh HandState: write nothing)."""
        dt = 0.0 if self._last_tick_s is None else max(0.0, now_s - self._last_tick_s)
        self._last_tick_s = now_s
        if hand is None or now_s - hand.received_s > self.dex3.state_timeout_s:
            self._held = None
            return None
        n, d = NUM_HAND_MOTORS, self.dex3
        zeros = np.zeros(n)
        if self._held is None:  # (again) a fresh HandState: start from the measured pose
            self._limiter.reset(hand.q)
            self._held = np.array(hand.q, dtype=float)
        if body in (SafetyState.WAIT_FOR_STATE, SafetyState.ZERO_TORQUE, SafetyState.DAMP):
            kd = np.full(n, d.damping_kd) if body is SafetyState.DAMP else zeros
            self._limiter.reset(hand.q)  # no stiffness: what comes next starts from the measured pose
            self._held = np.array(hand.q, dtype=float)
            return self._limiter.apply(JointCommand.hold(self._held, zeros, kd), dt)
        kp, kd = np.full(n, d.kp), np.full(n, d.kd)
        if body is SafetyState.ACTIVE and target is not None and now_s - target.received_s <= d.command_timeout_s:
            wanted = target.q
        elif body is SafetyState.ACTIVE:
            wanted = self._held  # no fresh target: hold
        else:  # RAMP, HOLD
            wanted = zeros
        command = self._limiter.apply(JointCommand.hold(np.asarray(wanted, dtype=float), kp, kd), dt)
        command.q = limit_stiffness_torque(command.q, command.kp, hand.q, self.limits.effort)
        self._limiter.reset(command.q)
        self._held = command.q
        return command


def hand_cmd_message(command: JointCommand, timeout: bool = False) -> Any:
    """The unitree_hg HandCmd_ of one hand's command (motor order; needs unitree_sdk2py)."""
    from unitree_sdk2py.idl.unitree_hg.msg.dds_ import HandCmd_, MotorCmd_

    return HandCmd_(motor_cmd=[
        MotorCmd_(mode=hand_motor_mode(i, timeout), q=float(command.q[i]), dq=float(command.dq[i]),
                  tau=float(command.tau_ff[i]), kp=float(command.kp[i]), kd=float(command.kd[i]), reserve=0)
        for i in range(NUM_HAND_MOTORS)], reserve=[0, 0, 0, 0])


def hand_state_arrays(message: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q (rad), dq (rad/s), tau_est (N·m) of the 7 motors of a HandState_; ValueError if it has fewer."""
    motors = message.motor_state
    if len(motors) < NUM_HAND_MOTORS:
        raise ValueError(f"HandState has {len(motors)} motor states, a Dex3 hand {NUM_HAND_MOTORS}")
    values = np.array([(m.q, m.dq, m.tau_est) for m in motors[:NUM_HAND_MOTORS]], dtype=float)
    return values[:, 0], values[:, 1], values[:, 2]
