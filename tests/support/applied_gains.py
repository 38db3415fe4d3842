"""The PD gains a simulator applied, solved from what it published (joint_states' effort), not from what it was
told. ROS-free.

sim_bridge applies τ = kp(q* − q) + kd(dq* − dq) + τff every physics step (h s), clipped to the effort limits, and
in lockstep publishes after each control period (T s) joint_states whose effort is the torque of the period's last
physics step. That torque was computed from the state one step before the published one: MuJoCo's integrators
(Euler, implicitfast) move positions with the new velocity, so its position is q − h·dq exactly; its velocity is
interpolated between the period's two published velocities (dq − (h/T)(dq − dq_start)). Per joint, least squares
over many periods of τ − τff = kp·(q* − q) + kd·(dq* − dq) then gives kp (N·m/rad) and kd (N·m·s/rad). Needs
motion (dq varying) for kd, the targets inside the joint limits (the bridge's limiter would move them otherwise),
and leaves out the periods whose torque is at the effort limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from g1_teleop.core.robot_description import Robot

# How close fit_gains comes on the robot under ``excitation``, with room: in windows of 75–90 periods on the
# gantry every joint came within 3.6 % in kp and 3.3 % in kd (the default gains, the waist at 900/9, every joint
# at 1.5×); the ankles, in contact with the floor, are the least precise.
EXCITED_KP_RTOL = 0.05
EXCITED_KD_RTOL = 0.08


def excitation(robot: Robot, t_s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A command (q* rad, dq* rad/s, τff N·m) at ``t_s`` that makes every joint's PD torque identifiable: the
    target held at the default pose, a feed-forward of 20 % of the effort limit at 0.5 Hz (it moves q away from q*
    by τff/kp whatever kp is) and a velocity target of 2 rad/s amplitude at 1.1 Hz (a torque kd·dq* known
    exactly), each joint at its own phase, faded in over the first 0.5 s."""
    phases = np.random.default_rng(0).uniform(0.0, 2.0 * np.pi, (2, len(robot.joint_names)))
    fade = min(1.0, t_s / 0.5)
    tau_ff = fade * 0.2 * robot.effort_limit * np.sin(2.0 * np.pi * 0.5 * t_s + phases[0])
    dq_target = fade * 2.0 * np.sin(2.0 * np.pi * 1.1 * t_s + phases[1])
    return robot.default_q.copy(), dq_target, tau_ff


@dataclass(frozen=True)
class Periods:
    """Control periods in lockstep, one row each, every array (periods, joints), DDS order: the command applied
    during the period (q* rad, dq* rad/s, τff N·m), the joint velocity published at its start (rad/s), and the
    state published at its end (q rad, dq rad/s, effort = the applied torque N·m)."""

    q_target: np.ndarray
    dq_target: np.ndarray
    tau_ff: np.ndarray
    dq_start: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    tau: np.ndarray

    @classmethod
    def stack(cls, rows: Sequence[Sequence[np.ndarray]]) -> Periods:
        """From one (q*, dq*, τff, dq_start, q, dq, τ) tuple of (joints,) arrays per period."""
        return cls(*(np.array(column, dtype=float) for column in zip(*rows, strict=True)))

    def __getitem__(self, rows: slice | np.ndarray) -> Periods:
        return Periods(*(getattr(self, name)[rows] for name in self.__dataclass_fields__))

    def __len__(self) -> int:
        return len(self.q)

    def pd_errors(self, physics_dt: float, control_dt: float) -> tuple[np.ndarray, np.ndarray]:
        """(q* − q, dq* − dq) of the state the last physics step's torque was computed from."""
        dq_before = self.dq - (physics_dt / control_dt) * (self.dq - self.dq_start)
        return self.q_target - (self.q - physics_dt * self.dq), self.dq_target - dq_before


@dataclass(frozen=True)
class GainFit:
    """kp (N·m/rad) and kd (N·m·s/rad) per joint, the RMS of the torque left unexplained (N·m) and the number of
    periods used."""

    kp: np.ndarray
    kd: np.ndarray
    residual_rms: np.ndarray
    used: np.ndarray


def fit_gains(periods: Periods, physics_dt: float, control_dt: float, effort_limit: np.ndarray) -> GainFit:
    """Per joint, the (kp, kd) that explain the published torques best (least squares); periods whose torque
    is within 0.1 % of the effort limit (clipped) are left out."""
    position_error, velocity_error = periods.pd_errors(physics_dt, control_dt)
    pd_torque = periods.tau - periods.tau_ff
    n = periods.q.shape[1]
    kp, kd, rms, used = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n, dtype=int)
    for j in range(n):
        rows = np.abs(periods.tau[:, j]) < 0.999 * effort_limit[j]
        a = np.column_stack([position_error[rows, j], velocity_error[rows, j]])
        (kp[j], kd[j]), *_ = np.linalg.lstsq(a, pd_torque[rows, j], rcond=None)
        rms[j] = np.sqrt(np.mean((a @ [kp[j], kd[j]] - pd_torque[rows, j]) ** 2))
        used[j] = int(rows.sum())
    return GainFit(kp, kd, rms, used)


def torque_mismatch(periods: Periods, kp: np.ndarray, kd: np.ndarray, physics_dt: float,
                    control_dt: float) -> np.ndarray:
    """(periods, joints): published torque − the torque the gains ``kp``, ``kd`` (per joint, or per period and
    joint) give for the same errors (N·m)."""
    position_error, velocity_error = periods.pd_errors(physics_dt, control_dt)
    return periods.tau - periods.tau_ff - (kp * position_error + kd * velocity_error)


def joints_with_other_kp(periods: Periods, kp: np.ndarray, kd: np.ndarray, physics_dt: float, control_dt: float,
                         effort_limit: np.ndarray, factor: float = 1.5) -> dict[int, str]:
    """Joints whose published torques a kp ``factor`` × or ÷ ``kp`` explains at least as well (RMS over the periods)
    as ``kp`` (with ``kd``; each per joint, or per period and joint); joint → which. Works where a joint barely
    moves, as when a controller stands: the position error's part of the torque is exact (kd is not judged: with
    little motion the velocity estimate's error outweighs it; fit_gains under ``excitation`` solves it).

    An alternative is judged only where it predicts torques further from those of ``kp`` than twice the noise (the
    smaller of their miss and the best constant gains' miss, fit_gains): a joint held exactly at its target says
    nothing about kp. Periods at the effort limit are left out, as in fit_gains."""
    unclipped = np.abs(periods.tau) < 0.999 * effort_limit

    def rms(values: np.ndarray) -> np.ndarray:
        return np.sqrt(np.sum(np.where(unclipped, values, 0.0) ** 2, axis=0) / unclipped.sum(axis=0))

    def predicted(kp_: np.ndarray) -> np.ndarray:
        return periods.tau - torque_mismatch(periods, kp_, kd, physics_dt, control_dt)

    given = predicted(kp)
    miss = rms(periods.tau - given)
    noise = np.minimum(miss, fit_gains(periods, physics_dt, control_dt, effort_limit).residual_rms)
    other_kp: dict[int, str] = {}
    for name, kp_other in ((f"kp × {factor}", kp * factor), (f"kp ÷ {factor}", kp / factor)):
        other = predicted(kp_other)
        told_apart = rms(other - given) > 2.0 * noise
        for j in np.flatnonzero(told_apart & (rms(periods.tau - other) <= miss)):
            other_kp.setdefault(int(j), name)
    return other_kp
