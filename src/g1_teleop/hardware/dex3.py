"""Unitree Dex3-1 hands on the robot: the HandCmd motor mode, the HandCmd/HandState messages, and what the
hardware bridge writes to each hand, tick by tick (the hands' description: core/dex3_description.py). ROS-free.

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
from typing import Any

import numpy as np

from g1_teleop.core.dex3_description import NUM_HAND_MOTORS, SIDES, Dex3
from g1_teleop.core.limits import CommandLimiter, JointCommand, limit_stiffness_torque
from g1_teleop.hardware.bridge_safety import SafetyState

HAND_STATUS = 0x01  # MotorCmd.mode bits 4–6 in every Dex3 source


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
