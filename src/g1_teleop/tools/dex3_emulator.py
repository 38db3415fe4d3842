"""Emulated Dex3 hands for the virtual robot: the hand's DDS behaviour around simple finger dynamics.
ROS-free.

The project's G1 model has no hands, and no Dex3 is here, so the virtual robot stands in for one: each
finger joint is a rotor with inertia ``INERTIA_KG_M2`` and viscous friction ``FRICTION_N_M_S``, driven by
the hand's PD law τ = kp(q* − q) + kd(dq* − dq) + τff, clipped to the effort limit, stopped at the joint
limits. Integration is semi-implicit: the velocity terms (kd, friction) at the new velocity, stable for the
hand's stiff damping at the virtual robot's 2 ms step; a saturated torque is applied as clipped. A
HandCmd is applied only if it has 7 motor commands whose mode carries their own index (bits 0–3) and
every value is finite; rejections are counted by reason. Until the first valid command the fingers are
free. Units: rad, rad/s, N·m, s; vectors in HandCmd motor order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from g1_teleop.core.dex3_description import NUM_HAND_MOTORS
from g1_teleop.core.limits import JointCommand, JointLimits

INERTIA_KG_M2 = 2e-4  # a finger segment about its joint
FRICTION_N_M_S = 0.01


@dataclass
class HandCmdCounts:
    received: int = 0
    applied: int = 0
    malformed: int = 0  # fewer than 7 motor commands, or a mode without the motor's own index
    non_finite: int = 0


class EmulatedHand:
    """One hand's seven joints under the latest valid HandCmd."""

    def __init__(self, limits: JointLimits) -> None:
        self.limits = limits
        self.q = np.clip(np.zeros(NUM_HAND_MOTORS), limits.q_lower, limits.q_upper)
        self.dq = np.zeros(NUM_HAND_MOTORS)
        self.tau = np.zeros(NUM_HAND_MOTORS)
        zeros = np.zeros(NUM_HAND_MOTORS)
        self.command = JointCommand.hold(zeros, zeros, zeros)  # free
        self.counts = HandCmdCounts()

    def receive(self, message: Any) -> None:
        """Check one HandCmd_ (the SDK's type); apply it if it passes, else count why not."""
        self.counts.received += 1
        motors = message.motor_cmd
        if len(motors) < NUM_HAND_MOTORS or any(m.mode & 0x0F != i for i, m in enumerate(motors[:NUM_HAND_MOTORS])):
            self.counts.malformed += 1
            return
        values = np.array([(m.q, m.dq, m.tau, m.kp, m.kd) for m in motors[:NUM_HAND_MOTORS]], dtype=float).T
        if not np.isfinite(values).all():
            self.counts.non_finite += 1
            return
        self.command = JointCommand(*values)
        self.counts.applied += 1

    def advance(self, dt: float) -> None:
        """One step of ``dt`` seconds under the applied command."""
        c, lim, inertia = self.command, self.limits, INERTIA_KG_M2
        drive = c.kp * (c.q - self.q) + c.kd * c.dq + c.tau_ff  # the torque's terms without the velocity
        dq = (self.dq + dt / inertia * drive) / (1.0 + dt * (c.kd + FRICTION_N_M_S) / inertia)
        tau = drive - c.kd * dq
        saturated = np.abs(tau) > lim.effort
        tau = np.clip(tau, -lim.effort, lim.effort)
        dq = np.where(saturated, self.dq + dt * (tau - FRICTION_N_M_S * self.dq) / inertia, dq)
        q = self.q + dt * dq
        at_limit = (q < lim.q_lower) | (q > lim.q_upper)
        self.q, self.dq, self.tau = np.clip(q, lim.q_lower, lim.q_upper), np.where(at_limit, 0.0, dq), tau

    def state_message(self) -> Any:
        """The HandState_ (the SDK's type) of the current state: q, dq, tau_est of each motor."""
        from unitree_sdk2py.idl.default import unitree_hg_msg_dds__HandState_ as new_hand_state
        from unitree_sdk2py.idl.default import unitree_hg_msg_dds__MotorState_ as new_motor_state

        message = new_hand_state()
        message.motor_state = [new_motor_state() for _ in range(NUM_HAND_MOTORS)]
        for i, motor in enumerate(message.motor_state):
            motor.mode, motor.q, motor.dq, motor.tau_est = i, float(self.q[i]), float(self.dq[i]), float(self.tau[i])
        return message
