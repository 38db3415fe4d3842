"""The G1's low-level state (unitree_hg LowState) as the robot sends it: C layout, CRC, DDS bytes, ROS-free.

The robot fills ``crc`` with a CRC-32 over the message copied into a naturally aligned C struct (2092
bytes, little-endian), as for LowCmd (see :mod:`g1_teleop.hardware.lowcmd`):

    offset    0  uint32 version[2], uint8 mode_pr, uint8 mode_machine, 2 pad, uint32 tick
    offset   16  IMUState (56 B): float32 quaternion[4] (w, x, y, z), gyroscope[3] (rad/s),
                 accelerometer[3] (m/s²), rpy[3] (rad, ZYX), int16 temperature, 2 pad
    offset   72  35 × MotorState (56 B each): uint8 mode, 3 pad, float32 q, dq, ddq, tau_est,
                 int16 temperature[2], float32 vol, uint32 sensor[2], uint32 motorstate, uint32 reserve[4]
    offset 2032  uint8 wireless_remote[40] (see :mod:`g1_teleop.hardware.wireless_remote`)
    offset 2072  uint32 reserve[4]
    offset 2088  uint32 crc: over the 522 32-bit words before it, each fed most significant bit first

A state is a numpy record of :data:`LOWSTATE_DTYPE` whose field names are the IDL's
(``state["motor_state"]["q"]``, ``state["imu_state"]["quaternion"]``), so filling or reading one costs a
few µs, against ~0.4 ms for the SDK's Python (de)serialiser. On the wire (DDS, little-endian CDR) the
sample is a 4-byte encapsulation header and the same fields, except that ``motor_state[0].mode`` follows
the IMU's temperature directly and the motor fields come 4 bytes earlier: 2092 bytes in all.
:func:`lowstate_to_cdr` and :func:`lowstate_from_cdr` convert between the two.

Units: q in rad, dq in rad/s, ddq in rad/s², tau_est in N·m. Motor slots follow the DDS order.
"""

from __future__ import annotations

import numpy as np

from g1_teleop.hardware.lowcmd import crc32_mpeg2

NUM_MOTOR_SLOTS = 35
LOWSTATE_SIZE = 2092

IMU_STATE_DTYPE = np.dtype({
    "names": ["quaternion", "gyroscope", "accelerometer", "rpy", "temperature"],
    "formats": [("<f4", 4), ("<f4", 3), ("<f4", 3), ("<f4", 3), "<i2"],
    "offsets": [0, 16, 28, 40, 52],
    "itemsize": 56,
})
MOTOR_STATE_DTYPE = np.dtype({
    "names": ["mode", "q", "dq", "ddq", "tau_est", "temperature", "vol", "sensor", "motorstate", "reserve"],
    "formats": ["u1", "<f4", "<f4", "<f4", "<f4", ("<i2", 2), "<f4", ("<u4", 2), "<u4", ("<u4", 4)],
    "offsets": [0, 4, 8, 12, 16, 20, 24, 28, 36, 40],
    "itemsize": 56,
})
LOWSTATE_DTYPE = np.dtype({
    "names": ["version", "mode_pr", "mode_machine", "tick", "imu_state", "motor_state", "wireless_remote",
              "reserve", "crc"],
    "formats": [("<u4", 2), "u1", "u1", "<u4", IMU_STATE_DTYPE, (MOTOR_STATE_DTYPE, NUM_MOTOR_SLOTS),
                ("u1", 40), ("<u4", 4), "<u4"],
    "offsets": [0, 8, 9, 12, 16, 72, 2032, 2072, 2088],
    "itemsize": LOWSTATE_SIZE,
})

_CRC_WORDS = LOWSTATE_SIZE // 4 - 1  # 522: every word before crc
_MOTOR0_MODE = 72  # C offset of motor_state[0].mode; the CDR body has it at 70
_MOTOR0_Q = 76  # C offset of motor_state[0].q; the CDR body has it at 72
_CDR_LITTLE_ENDIAN = (b"\x00\x01", b"\x00\x07")  # encapsulation ids: XCDR1, XCDR2 (plain, little-endian)


def new_lowstate() -> np.ndarray:
    """A zeroed LowState record (0-d array of :data:`LOWSTATE_DTYPE`, padding included)."""
    return np.zeros((), dtype=LOWSTATE_DTYPE)


def lowstate_crc(packed: bytes) -> int:
    """The robot's CRC of a packed LowState (``LOWSTATE_SIZE`` bytes): the 522 words before ``crc``."""
    if len(packed) != LOWSTATE_SIZE:
        raise ValueError(f"a packed LowState has {LOWSTATE_SIZE} bytes, got {len(packed)}")
    return crc32_mpeg2(np.frombuffer(packed, dtype="<u4", count=_CRC_WORDS).astype(">u4").tobytes())


def pack_lowstate(state: np.ndarray) -> tuple[bytes, int]:
    """Set ``state["crc"]`` and return (the packed 2092 bytes, crc)."""
    if state.dtype != LOWSTATE_DTYPE or state.shape != ():
        raise ValueError(f"pack_lowstate needs a record from new_lowstate(), got {state.dtype} {state.shape}")
    crc = lowstate_crc(state.tobytes())
    state["crc"] = crc
    return state.tobytes(), crc


def unpack_lowstate(packed: bytes) -> np.ndarray:
    """A read-only LowState record over a packed LowState (``crc`` as carried: check with lowstate_crc)."""
    if len(packed) != LOWSTATE_SIZE:
        raise ValueError(f"a packed LowState has {LOWSTATE_SIZE} bytes, got {len(packed)}")
    return np.frombuffer(packed, dtype=LOWSTATE_DTYPE).reshape(())


def lowstate_to_cdr(packed: bytes) -> bytes:
    """The DDS sample (XCDR1 little-endian, with its header) of a packed LowState."""
    if len(packed) != LOWSTATE_SIZE:
        raise ValueError(f"a packed LowState has {LOWSTATE_SIZE} bytes, got {len(packed)}")
    mode = _MOTOR0_MODE
    return _CDR_LITTLE_ENDIAN[0] + b"\x00\x00" + packed[:70] + packed[mode:mode + 1] + b"\x00" + packed[_MOTOR0_Q:]


def lowstate_from_cdr(sample: bytes) -> bytes:
    """The packed LowState (C layout) of a received DDS sample; raises ValueError on a foreign encoding."""
    if len(sample) < LOWSTATE_SIZE or sample[0:2] not in _CDR_LITTLE_ENDIAN:
        raise ValueError(f"not a little-endian CDR LowState sample: {len(sample)} bytes, header {sample[:4].hex()}")
    body = sample[4:LOWSTATE_SIZE]
    return body[:70] + b"\x00\x00" + body[70:71] + b"\x00\x00\x00" + body[72:]
