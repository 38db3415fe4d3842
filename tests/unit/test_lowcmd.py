import struct

import numpy as np
import pytest

from g1_teleop.core.limits import JointCommand
from g1_teleop.hardware.lowcmd import (
    LOWCMD_SIZE,
    MODE_PR,
    LowCmdEncoder,
    crc32_mpeg2,
    lowcmd_crc,
    lowcmd_from_cdr,
    lowcmd_to_cdr,
    motor_slots,
    pack_lowcmd,
    unpack_lowcmd,
)

SDK_MISSING = "unitree_sdk2py not installed (scripts/install_robot_sdk.sh installs it)"


def reference_crc(words):
    """The robot's CRC written out bit by bit: poly 0x04C11DB7, init 0xFFFFFFFF, each word MSB first."""
    crc = 0xFFFFFFFF
    for word in words:
        for bit in range(31, -1, -1):
            feedback = (crc >> 31) ^ (word >> bit & 1)
            crc = (crc << 1) & 0xFFFFFFFF
            if feedback:
                crc ^= 0x04C11DB7
    return crc


def random_slots(rng):
    return {
        "mode": rng.integers(0, 256, 35),
        **{name: rng.normal(0.0, 10.0, 35) for name in ("q", "dq", "tau", "kp", "kd")},
        "motor_reserve": rng.integers(0, 2**32, 35),
        "reserve": rng.integers(0, 2**32, 4),
    }


def test_crc_check_value_of_crc32_mpeg2():
    assert crc32_mpeg2(b"123456789") == 0x0376E6E7
    assert crc32_mpeg2(b"") == 0xFFFFFFFF


def test_packed_layout_puts_every_field_at_its_c_offset():
    rng = np.random.default_rng(1)
    s = random_slots(rng)
    packed, crc = pack_lowcmd(0, 5, **s)
    assert len(packed) == LOWCMD_SIZE == 1004
    assert packed[0] == 0 and packed[1] == 5 and packed[2:4] == b"\x00\x00"
    for i in range(35):
        base = 4 + 28 * i
        assert packed[base] == s["mode"][i]
        assert packed[base + 1:base + 4] == b"\x00\x00\x00"
        floats = struct.unpack_from("<5f", packed, base + 4)
        expected = [s[name][i] for name in ("q", "dq", "tau", "kp", "kd")]
        np.testing.assert_array_equal(floats, np.float32(expected))
        assert struct.unpack_from("<I", packed, base + 24)[0] == s["motor_reserve"][i]
    assert list(struct.unpack_from("<4I", packed, 984)) == list(s["reserve"])
    assert struct.unpack_from("<I", packed, 1000)[0] == crc


def test_crc_covers_the_250_words_before_the_crc_field():
    rng = np.random.default_rng(2)
    for _ in range(3):
        packed, crc = pack_lowcmd(1, 7, **random_slots(rng))
        words = struct.unpack("<251I", packed)
        assert crc == reference_crc(words[:250])
        assert lowcmd_crc(packed) == crc
        changed = bytearray(packed)
        changed[999] ^= 0x01  # the last covered byte (reserve[3])
        assert lowcmd_crc(bytes(changed)) != crc


def test_pack_refuses_a_wrong_number_of_slots():
    s = random_slots(np.random.default_rng(3))
    s["kp"] = np.zeros(29)
    with pytest.raises(ValueError, match="kp needs 35"):
        pack_lowcmd(0, 0, **s)
    with pytest.raises(ValueError, match="1004 bytes"):
        lowcmd_crc(bytes(1000))


def test_unpack_reads_back_every_packed_field():
    s = random_slots(np.random.default_rng(8))
    packed, crc = pack_lowcmd(1, 200, **s)
    fields = unpack_lowcmd(packed)
    assert (fields.mode_pr, fields.mode_machine, fields.crc) == (1, 200, crc)
    np.testing.assert_array_equal(fields.mode, s["mode"])
    for name in ("q", "dq", "tau", "kp", "kd"):
        np.testing.assert_array_equal(getattr(fields, name), np.float32(s[name]))
    np.testing.assert_array_equal(fields.motor_reserve, s["motor_reserve"])
    np.testing.assert_array_equal(fields.reserve, s["reserve"])


def test_cdr_sample_drops_only_the_padding_after_mode_machine():
    s = random_slots(np.random.default_rng(9))
    packed, crc = pack_lowcmd(0, 5, **s)
    motors = [(int(s["mode"][i]), *(s[n][i] for n in ("q", "dq", "tau", "kp", "kd")), int(s["motor_reserve"][i]))
              for i in range(35)]
    expected = (bytes.fromhex("00010000") + struct.pack("<BBBx5fI", 0, 5, *motors[0])
                + b"".join(struct.pack("<B3x5fI", *m) for m in motors[1:])
                + struct.pack("<5I", *s["reserve"], crc))
    sample = lowcmd_to_cdr(packed)
    assert len(sample) == 1004 and sample == expected
    assert lowcmd_from_cdr(sample) == packed
    assert lowcmd_from_cdr(bytes.fromhex("00070000") + sample[4:] + b"\x00" * 4) == packed  # XCDR2, padded
    with pytest.raises(ValueError, match="not a little-endian CDR"):
        lowcmd_from_cdr(bytes.fromhex("00000000") + sample[4:])  # big-endian


def joint_command(rng):
    return JointCommand(*(rng.normal(0.0, 1.0, 29) for _ in range(5)))


def test_motor_slots_enable_the_29_joints_and_zero_the_rest():
    command = joint_command(np.random.default_rng(4))
    slots = motor_slots(command)
    np.testing.assert_array_equal(slots["mode"], [1] * 29 + [0] * 6)
    np.testing.assert_array_equal(slots["tau"][:29], np.float32(command.tau_ff))
    for name in ("q", "dq", "tau", "kp", "kd"):
        np.testing.assert_array_equal(slots[name][29:], 0.0)
    command.kd = np.zeros(28)
    with pytest.raises(ValueError, match="kd needs 29"):
        motor_slots(command)


def sdk_lowcmd(slots, mode_pr, mode_machine):
    """The SDK's unitree_hg LowCmd_ carrying per-slot arrays (``motor_slots`` or ``random_slots``), CRC unset."""
    from unitree_sdk2py.idl.default import unitree_hg_msg_dds__LowCmd_

    msg = unitree_hg_msg_dds__LowCmd_()
    msg.mode_pr, msg.mode_machine = mode_pr, mode_machine
    for i, motor in enumerate(msg.motor_cmd):
        motor.mode = int(slots["mode"][i])
        motor.q, motor.dq, motor.tau, motor.kp, motor.kd = (float(slots[n][i]) for n in ("q", "dq", "tau", "kp", "kd"))
        motor.reserve = int(slots["motor_reserve"][i]) if "motor_reserve" in slots else 0
    msg.reserve = [int(v) for v in slots.get("reserve", [0, 0, 0, 0])]
    return msg


def test_crc_equals_the_sdk_helper_on_random_messages():
    pytest.importorskip("unitree_sdk2py", reason=SDK_MISSING)
    from unitree_sdk2py.utils.crc import CRC

    rng = np.random.default_rng(6)
    for _ in range(20):
        s = random_slots(rng)
        mode_pr, mode_machine = int(rng.integers(0, 2)), int(rng.integers(0, 256))
        _, crc = pack_lowcmd(mode_pr, mode_machine, **s)
        assert crc == CRC().Crc(sdk_lowcmd(s, mode_pr, mode_machine))


def test_cdr_sample_is_what_the_sdk_serialises():
    pytest.importorskip("unitree_sdk2py", reason=SDK_MISSING)
    from unitree_sdk2py.idl.unitree_hg.msg.dds_ import LowCmd_
    from unitree_sdk2py.utils.crc import CRC

    slots = motor_slots(joint_command(np.random.default_rng(10)))
    packed, crc = pack_lowcmd(0, 5, **slots)
    msg = sdk_lowcmd(slots, 0, 5)
    msg.crc = CRC().Crc(msg)
    assert msg.crc == crc
    assert lowcmd_to_cdr(packed) == msg.serialize()
    assert LowCmd_.deserialize(lowcmd_to_cdr(packed)) == msg


def test_the_encoder_writes_what_the_sdk_serialises_and_reuses_nothing_stale():
    """hw_bridge's 500 Hz path: the same bytes as packing each command afresh, and as Unitree's SDK serialises them
    (its CRC included); a command after another leaves nothing of the first."""
    encoder = LowCmdEncoder()
    rng = np.random.default_rng(11)
    for mode_machine in (0, 5, 255):
        command = joint_command(rng)
        sample = encoder.encode(command, mode_machine)
        assert sample == lowcmd_to_cdr(pack_lowcmd(MODE_PR, mode_machine, **motor_slots(command))[0])
        packed = lowcmd_from_cdr(sample)
        assert unpack_lowcmd(packed).crc == lowcmd_crc(packed)
    pytest.importorskip("unitree_sdk2py", reason=SDK_MISSING)
    from unitree_sdk2py.utils.crc import CRC

    slots = motor_slots(command)
    msg = sdk_lowcmd(slots, MODE_PR, 255)
    msg.crc = CRC().Crc(msg)
    assert sample == msg.serialize()
