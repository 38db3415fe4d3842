"""The inputs of a policy tick: lockstep pairing by stamp (joint state leading, IMU sample and arm target of
the same stamp), the sync timeout, and real time's newest inputs with their staleness rules."""

from __future__ import annotations

import numpy as np

from g1_teleop.control.tick_inputs import ArmTarget, ImuSample, JointSample, TickInputs

UPRIGHT = np.array([1.0, 0.0, 0.0, 0.0])


def joints(value: float, received_s: float = 0.0) -> JointSample:
    return JointSample(np.full(29, value), np.zeros(29), received_s)


def imu(yaw_rate: float) -> ImuSample:
    return ImuSample(UPRIGHT, np.array([0.0, 0.0, yaw_rate]))


def arm(stamp_ns: int, received_s: float = 0.0) -> ArmTarget:
    return ArmTarget(stamp_ns, np.zeros(14), np.zeros(14), received_s)


def test_lockstep_ticks_once_the_three_inputs_of_a_stamp_are_in():
    inputs = TickInputs(lockstep=True, state_timeout_s=0.1, arm_target_timeout_s=0.5)
    inputs.put_imu(20, imu(1.0))
    inputs.put_joints(20, joints(0.2))
    assert not inputs.ready() and inputs.state() is not None
    inputs.put_arm(arm(10))  # an older arm target does not complete the period
    assert not inputs.ready()
    inputs.put_arm(arm(20))
    assert inputs.ready()
    tick = inputs.take(now_s=0.0)
    assert tick.stamp_ns == 20 and tick.arm.stamp_ns == 20 and tick.state.q[0] == 0.2
    assert tick.state.pelvis_w_pelvis[2] == 1.0 and not (tick.stale_state or tick.stale_arm)
    assert not inputs.ready()  # answered
    inputs.put_joints(40, joints(0.4))
    assert inputs.state() is None  # lockstep: the IMU sample of that stamp is not in yet
    inputs.put_imu(40, imu(2.0))
    inputs.put_arm(arm(40))
    assert inputs.ready() and inputs.take(0.0).state.pelvis_w_pelvis[2] == 2.0


def test_a_state_waiting_too_long_for_its_arm_target_is_overdue():
    inputs = TickInputs(lockstep=True, state_timeout_s=0.1, arm_target_timeout_s=0.5)
    inputs.put_joints(20, joints(0.0, received_s=10.0))
    assert not inputs.overdue(now_s=12.0, timeout_s=1.0)  # no IMU sample: no state to answer
    inputs.put_imu(20, imu(0.0))
    assert not inputs.overdue(now_s=10.5, timeout_s=1.0) and inputs.overdue(now_s=11.5, timeout_s=1.0)
    assert inputs.arm is None
    inputs.put_arm(arm(0))
    tick = inputs.take(11.5)  # with the latest arm target
    assert tick.arm.stamp_ns == 0 and not inputs.overdue(now_s=20.0, timeout_s=1.0)


def test_real_time_takes_the_newest_inputs_and_drops_stale_ones():
    inputs = TickInputs(lockstep=False, state_timeout_s=0.1, arm_target_timeout_s=0.5)
    assert inputs.take(0.0) is None
    inputs.put_joints(40, joints(0.4, received_s=1.0))
    assert inputs.take(1.0) is None  # no IMU sample yet
    inputs.put_imu(10, imu(3.0))
    inputs.put_arm(arm(5, received_s=1.0))
    assert not inputs.ready()  # real time ticks on its timer
    tick = inputs.take(1.05)
    assert tick.stamp_ns == 40 and tick.state.pelvis_w_pelvis[2] == 3.0 and tick.arm.stamp_ns == 5
    inputs.put_joints(60, joints(0.6, received_s=1.55))
    stale_arm = inputs.take(1.6)
    assert stale_arm.arm is None and stale_arm.stale_arm and not stale_arm.stale_state
    assert inputs.take(1.7).stale_state
