"""The G1's low-level command (unitree_hg LowCmd) as the robot checks it: C layout and CRC, ROS-free.

The robot accepts a LowCmd only if its ``crc`` field matches a CRC-32 over the message copied into a
naturally aligned C struct (1004 bytes, little-endian):

    offset    0  uint8 mode_pr, uint8 mode_machine, 2 pad
    offset    4  35 × MotorCmd (28 B each): uint8 mode, 3 pad, float32 q, dq, tau, kp, kd, uint32 reserve
    offset  984  uint32 reserve[4]
    offset 1000  uint32 crc

The CRC covers the 250 32-bit words before ``crc``: polynomial 0x04C11DB7, initial value 0xFFFFFFFF, no
reflection, no final XOR, each word fed most significant bit first. That is CRC-32/MPEG-2 over the words
serialised big-endian, computed here with zlib's reflected CRC-32 on bit-reversed bytes (a few µs).

On the wire (DDS, little-endian CDR) the sample is a 4-byte encapsulation header and the same fields
without the C struct's padding after ``mode_machine``: 1004 bytes in all. :func:`lowcmd_to_cdr` and
:func:`lowcmd_from_cdr` convert between the two, so a bridge can write and check LowCmd samples as raw
bytes instead of through the SDK's Python (de)serialiser (~0.24 ms a message).

Units: q in rad, dq in rad/s, tau in N·m, kp in N·m/rad, kd in N·m·s/rad. Motor slots follow the DDS order.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from g1_teleop.core.limits import JointCommand

NUM_MOTOR_SLOTS = 35
NUM_BODY_JOINTS = 29  # slots 29–34 carry no body joint
LOWCMD_SIZE = 1004
MOTOR_ENABLE = 1  # MotorCmd.mode of a driven motor; 0 disables it
MODE_PR = 0  # LowCmd.mode_pr: ankle and waist motors addressed as pitch/roll joints (the 29-joint order)

_MOTOR_WORDS = 7  # MotorCmd: mode (uint8 + 3 pad), q, dq, tau, kp, kd, reserve
_MOTORS_START_WORD = 1
_RESERVE_START_WORD = _MOTORS_START_WORD + NUM_MOTOR_SLOTS * _MOTOR_WORDS  # 246: byte offset 984
_CRC_WORD = _RESERVE_START_WORD + 4  # 250: byte offset 1000
_MOTOR_FLOAT_FIELDS = ("q", "dq", "tau", "kp", "kd")
_CDR_LITTLE_ENDIAN = (b"\x00\x01", b"\x00\x07")  # encapsulation ids: XCDR1, XCDR2 (plain, little-endian)
_BIT_REVERSED_BYTE = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))


def _reverse_bits32(value: int) -> int:
    return int(f"{value:032b}"[::-1], 2)


def crc32_mpeg2(data: bytes) -> int:
    """CRC-32/MPEG-2 of a byte stream (poly 0x04C11DB7, init 0xFFFFFFFF, MSB first, no final XOR).

    A non-reflected CRC equals the bit-reversed reflected CRC of the bit-reversed bytes; zlib's CRC-32 is
    that reflected CRC with a final XOR of 0xFFFFFFFF, which is undone here.
    """
    reflected = zlib.crc32(data.translate(_BIT_REVERSED_BYTE)) ^ 0xFFFFFFFF
    return _reverse_bits32(reflected)


def lowcmd_crc(packed: bytes) -> int:
    """The robot's CRC of a packed LowCmd (``LOWCMD_SIZE`` bytes): the 250 words before ``crc``."""
    if len(packed) != LOWCMD_SIZE:
        raise ValueError(f"a packed LowCmd has {LOWCMD_SIZE} bytes, got {len(packed)}")
    return _crc_of_words(np.frombuffer(packed, dtype="<u4"))


def _crc_of_words(words: np.ndarray) -> int:
    """CRC of the words before the crc field, each fed most significant bit first."""
    return crc32_mpeg2(words[:_CRC_WORD].byteswap().tobytes())


def pack_lowcmd(
    mode_pr: int,
    mode_machine: int,
    mode: np.ndarray,
    q: np.ndarray,
    dq: np.ndarray,
    tau: np.ndarray,
    kp: np.ndarray,
    kd: np.ndarray,
    motor_reserve: np.ndarray | None = None,
    reserve: np.ndarray | None = None,
) -> tuple[bytes, int]:
    """Pack a LowCmd into its 1004-byte C layout with the CRC filled in: returns (bytes, crc).

    ``mode`` … ``kd`` and ``motor_reserve`` have one entry per motor slot (35); ``reserve`` has 4 words.
    Floats are rounded to float32 as on the wire.
    """
    words = np.zeros(_CRC_WORD + 1, dtype="<u4")
    words[0] = (mode_pr & 0xFF) | (mode_machine & 0xFF) << 8  # two uint8 then two pad bytes, little-endian
    motor_words = words[_MOTORS_START_WORD:_RESERVE_START_WORD].reshape(NUM_MOTOR_SLOTS, _MOTOR_WORDS)
    columns = {"mode": mode, "q": q, "dq": dq, "tau": tau, "kp": kp, "kd": kd, "reserve": motor_reserve}
    for name, values in columns.items():
        if values is not None and np.shape(values) != (NUM_MOTOR_SLOTS,):
            raise ValueError(f"LowCmd {name} needs {NUM_MOTOR_SLOTS} motor slots, got shape {np.shape(values)}")
    motor_words[:, 0] = np.asarray(mode, dtype=np.uint8)  # the 3 pad bytes after it stay zero
    motor_words.view("<f4")[:, 1:6] = np.column_stack((q, dq, tau, kp, kd))
    if motor_reserve is not None:
        motor_words[:, 6] = motor_reserve
    if reserve is not None:
        words[_RESERVE_START_WORD:_CRC_WORD] = reserve
    crc = _crc_of_words(words)
    words[_CRC_WORD] = crc
    return words.tobytes(), crc


def motor_slots(command: JointCommand) -> dict[str, np.ndarray]:
    """Per-slot arrays (35) of a 29-joint command: joints enabled, slots 29–34 all zero, float32-rounded."""
    fields = {"q": command.q, "dq": command.dq, "tau": command.tau_ff, "kp": command.kp, "kd": command.kd}
    slots: dict[str, np.ndarray] = {"mode": np.zeros(NUM_MOTOR_SLOTS, dtype=np.uint8)}
    slots["mode"][:NUM_BODY_JOINTS] = MOTOR_ENABLE
    for name, values in fields.items():
        if np.shape(values) != (NUM_BODY_JOINTS,):
            raise ValueError(f"JointCommand.{name} needs {NUM_BODY_JOINTS} joints, got shape {np.shape(values)}")
        slot_values = np.zeros(NUM_MOTOR_SLOTS, dtype=np.float32)
        slot_values[:NUM_BODY_JOINTS] = values
        slots[name] = slot_values
    return slots


class LowCmdEncoder:
    """29-joint commands → LowCmd DDS samples (XCDR1, the CRC filled in), one buffer reused: the 500 Hz path.

    The same bytes as ``lowcmd_to_cdr(pack_lowcmd(MODE_PR, mode_machine, **motor_slots(command))[0])`` in a
    fraction of the time: the motor slots' layout, modes and zero slots are written once, each call writes the
    five float columns of the 29 joints and the CRC.
    """

    def __init__(self) -> None:
        self._words = np.zeros(_CRC_WORD + 1, dtype="<u4")
        motor_words = self._words[_MOTORS_START_WORD:_RESERVE_START_WORD].reshape(NUM_MOTOR_SLOTS, _MOTOR_WORDS)
        motor_words[:NUM_BODY_JOINTS, 0] = MOTOR_ENABLE
        self._columns = motor_words.view("<f4")[:NUM_BODY_JOINTS, 1:6].T  # (5, 29) views: q, dq, tau, kp, kd

    def encode(self, command: JointCommand, mode_machine: int, mode_pr: int = MODE_PR) -> bytes:
        """The DDS sample of ``command`` (29 joints, DDS order) with the robot's ``mode_machine``."""
        columns = self._columns
        columns[0], columns[1], columns[2] = command.q, command.dq, command.tau_ff
        columns[3], columns[4] = command.kp, command.kd
        words = self._words
        words[0] = (mode_pr & 0xFF) | (mode_machine & 0xFF) << 8
        words[_CRC_WORD] = _crc_of_words(words)
        return lowcmd_to_cdr(words.tobytes())


@dataclass(frozen=True, eq=False)
class LowCmdFields:
    """The fields of a packed LowCmd; per-motor arrays have 35 slots."""

    mode_pr: int
    mode_machine: int
    mode: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    tau: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    motor_reserve: np.ndarray
    reserve: np.ndarray
    crc: int  # as carried, not checked: compare with lowcmd_crc(packed)


def unpack_lowcmd(packed: bytes) -> LowCmdFields:
    """Read the fields of a packed LowCmd (``LOWCMD_SIZE`` bytes, C layout)."""
    if len(packed) != LOWCMD_SIZE:
        raise ValueError(f"a packed LowCmd has {LOWCMD_SIZE} bytes, got {len(packed)}")
    words = np.frombuffer(packed, dtype="<u4")
    motor_words = words[_MOTORS_START_WORD:_RESERVE_START_WORD].reshape(NUM_MOTOR_SLOTS, _MOTOR_WORDS)
    floats = motor_words.view("<f4")
    return LowCmdFields(
        mode_pr=packed[0], mode_machine=packed[1], mode=(motor_words[:, 0] & 0xFF).astype(np.uint8),
        q=floats[:, 1].copy(), dq=floats[:, 2].copy(), tau=floats[:, 3].copy(), kp=floats[:, 4].copy(),
        kd=floats[:, 5].copy(), motor_reserve=motor_words[:, 6].copy(),
        reserve=words[_RESERVE_START_WORD:_CRC_WORD].copy(), crc=int(words[_CRC_WORD]),
    )


def lowcmd_to_cdr(packed: bytes) -> bytes:
    """The DDS sample (XCDR1 little-endian, with its header) of a packed LowCmd."""
    if len(packed) != LOWCMD_SIZE:
        raise ValueError(f"a packed LowCmd has {LOWCMD_SIZE} bytes, got {len(packed)}")
    # CDR aligns motor_cmd[0].mode to 1 byte, right after mode_machine; from q on both layouts agree.
    return _CDR_LITTLE_ENDIAN[0] + b"\x00\x00" + packed[0:2] + packed[4:5] + b"\x00" + packed[8:]


def lowcmd_from_cdr(sample: bytes) -> bytes:
    """The packed LowCmd (C layout) of a received DDS sample; raises ValueError on a foreign encoding."""
    if len(sample) < LOWCMD_SIZE or sample[0:2] not in _CDR_LITTLE_ENDIAN:
        raise ValueError(f"not a little-endian CDR LowCmd sample: {len(sample)} bytes, header {sample[:4].hex()}")
    body = sample[4:LOWCMD_SIZE]
    return body[0:2] + b"\x00\x00" + body[2:3] + b"\x00\x00\x00" + body[4:]
