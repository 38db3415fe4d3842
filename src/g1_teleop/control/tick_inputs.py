"""The inputs of one whole-body command tick, ROS-free: the robot's state (a joint state with the IMU
sample) and the IK arm target.

Lockstep: inputs pair by stamp (:class:`g1_teleop.core.stamp_sync.StampSync`, the joint state leading):
a tick is ready once the joint state, the IMU sample and the arm target of one stamp are in; a state that
waits longer than the sync timeout for its arm target is overdue (the node then ticks with the latest arm
target, or keeps waiting for a first one). Real time: a tick takes the newest of each; no command from a
joint state older than ``state_timeout_s``, and an arm target older than ``arm_target_timeout_s`` is
dropped (the arms hold). With :class:`g1_teleop.control.state_checks.StateChecks`, a joint state or IMU sample
that cannot be the robot's is refused (ImplausibleState) and the last taken one kept, so that the staleness
rules apply when only implausible samples come. Times are monotonic wall seconds, stamps integer nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from g1_teleop.control.proprioception import ProprioceptionSample
from g1_teleop.control.state_checks import StateChecks
from g1_teleop.core.stamp_sync import StampSync


@dataclass(frozen=True)
class JointSample:
    """One joint state: q (29,) rad and dq (29,) rad/s in DDS order, received at ``received_s``."""

    q: np.ndarray
    dq: np.ndarray
    received_s: float


@dataclass(frozen=True)
class ImuSample:
    """One IMU sample: pelvis orientation (w, x, y, z) in the world, angular velocity (3,) rad/s in the
    pelvis frame."""

    world_q_pelvis: np.ndarray
    pelvis_w_pelvis: np.ndarray


@dataclass(frozen=True)
class ArmTarget:
    """The IK's arm target: q (14,) rad and feed-forward torques tau_ff (14,) N·m in the ``arms`` group's
    order, stamped with the operator sample behind it, received at ``received_s``; waist_q (3,) rad in the
    ``waist`` group's order when the operator's body drives the waist (body_retarget), else None."""

    stamp_ns: int
    q: np.ndarray
    tau_ff: np.ndarray
    received_s: float
    waist_q: np.ndarray | None = None


@dataclass(frozen=True)
class Tick:
    """What one tick computes from: the state (of ``stamp_ns``), the arm target (None: the arms hold);
    real time: ``stale_state`` (no command this tick), ``stale_arm`` (the arm target was dropped)."""

    stamp_ns: int
    state: ProprioceptionSample
    arm: ArmTarget | None
    stale_state: bool = False
    stale_arm: bool = False


class TickInputs:
    JOINTS, IMU, ARM = "joint_states", "imu", "arm_target"

    def __init__(self, lockstep: bool, state_timeout_s: float, arm_target_timeout_s: float,
                 checks: StateChecks | None = None) -> None:
        self.lockstep = lockstep
        self.state_timeout_s, self.arm_target_timeout_s = state_timeout_s, arm_target_timeout_s
        self.sync = StampSync((self.JOINTS, self.IMU, self.ARM), lead=self.JOINTS)
        self.checks = checks

    def put_joints(self, stamp_ns: int, sample: JointSample, now_stamp_ns: int | None = None) -> None:
        """Take a joint state (raises ImplausibleState when the checks refuse it; ``now_stamp_ns``: the clock
        its stamp is compared with, None: not compared)."""
        if self.checks is not None:
            self.checks.take_joints(sample.q, sample.dq, sample.received_s, stamp_ns, now_stamp_ns)
        self.sync.put(self.JOINTS, stamp_ns, sample, sample.received_s)

    def put_imu(self, stamp_ns: int, sample: ImuSample, received_s: float = 0.0,
                now_stamp_ns: int | None = None) -> None:
        """Take an IMU sample received at ``received_s`` (raises ImplausibleState as put_joints)."""
        if self.checks is not None:
            self.checks.take_imu(sample.world_q_pelvis, sample.pelvis_w_pelvis, received_s, stamp_ns, now_stamp_ns)
        self.sync.put(self.IMU, stamp_ns, sample)

    def put_arm(self, target: ArmTarget) -> None:
        self.sync.put(self.ARM, target.stamp_ns, target)

    @property
    def stamp_ns(self) -> int:
        """The stamp of the newest joint state (-1 before the first)."""
        return self.sync.stamp(self.JOINTS)

    @property
    def arm(self) -> ArmTarget | None:
        """The newest arm target."""
        return self.sync.value(self.ARM)

    def state(self) -> ProprioceptionSample | None:
        """The robot's state: lockstep, the joint state and the IMU sample of one stamp; real time, the newest
        of each. None until both are in."""
        joints, imu = self.sync.value(self.JOINTS), self.sync.value(self.IMU)
        if joints is None or imu is None or (self.lockstep and not self.sync.complete(self.stamp_ns,
                                                                                      (self.JOINTS, self.IMU))):
            return None
        return ProprioceptionSample(joints.q, joints.dq, imu.world_q_pelvis, imu.pelvis_w_pelvis)

    def ready(self) -> bool:
        """Lockstep: the newest joint state is unanswered and its IMU sample and arm target are in."""
        return self.lockstep and self.sync.ready()

    def overdue(self, now_s: float, timeout_s: float) -> bool:
        """Lockstep: the newest state (joint state and IMU sample), unanswered, has waited more than
        ``timeout_s`` for its arm target."""
        since = self.sync.waiting_since_s
        return since is not None and self.state() is not None and now_s - since > timeout_s

    def take(self, now_s: float) -> Tick | None:
        """The inputs of a tick at ``now_s`` (None before the state is in); the state is then answered."""
        state = self.state()
        if state is None:
            return None
        self.sync.answered()
        tick = Tick(self.stamp_ns, state, self.arm)
        if self.lockstep:
            return tick
        if now_s - self.sync.value(self.JOINTS).received_s > self.state_timeout_s:
            return Tick(tick.stamp_ns, state, None, stale_state=True)
        if tick.arm is not None and now_s - tick.arm.received_s > self.arm_target_timeout_s:
            return Tick(tick.stamp_ns, state, None, stale_arm=True)
        return tick
