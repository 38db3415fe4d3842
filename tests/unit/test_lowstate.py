import struct

import numpy as np
import pytest

from g1_teleop.hardware.lowcmd import crc32_mpeg2
from g1_teleop.hardware.lowstate import (
    LOWSTATE_SIZE,
    lowstate_crc,
    lowstate_from_cdr,
    lowstate_to_cdr,
    new_lowstate,
    pack_lowstate,
    unpack_lowstate,
)

SDK_MISSING = "unitree_sdk2py not installed (scripts/install_robot_sdk.sh installs it)"
MOTOR_FLOATS = ("q", "dq", "ddq", "tau_est")


def random_values(seed):
    """Every LowState field, random, as plain Python values (floats exactly representable in float32)."""
    rng = np.random.default_rng(seed)

    def floats(n):
        return [float(v) for v in np.float32(rng.normal(0.0, 5.0, n))]

    def ints(n, low, high):
        return [int(v) for v in rng.integers(low, high, n)]

    motors = [{
        "mode": ints(1, 0, 256)[0], **dict(zip((*MOTOR_FLOATS, "vol"), floats(5), strict=True)),
        "temperature": ints(2, -2**15, 2**15), "sensor": ints(2, 0, 2**32), "motorstate": ints(1, 0, 2**32)[0],
        "reserve": ints(4, 0, 2**32),
    } for _ in range(35)]
    return {
        "version": ints(2, 0, 2**32), "mode_pr": 1, "mode_machine": 6, "tick": ints(1, 0, 2**32)[0],
        "quaternion": floats(4), "gyroscope": floats(3), "accelerometer": floats(3), "rpy": floats(3),
        "imu_temperature": ints(1, -2**15, 2**15)[0], "motors": motors,
        "wireless_remote": ints(40, 0, 256), "reserve": ints(4, 0, 2**32),
    }


def record_of(v):
    state = new_lowstate()
    for name in ("version", "mode_pr", "mode_machine", "tick", "wireless_remote", "reserve"):
        state[name] = v[name]
    imu = state["imu_state"]
    for name in ("quaternion", "gyroscope", "accelerometer", "rpy"):
        imu[name] = v[name]
    imu["temperature"] = v["imu_temperature"]
    for i, motor in enumerate(v["motors"]):
        for name, value in motor.items():
            state["motor_state"][name][i] = value
    return state


def c_struct_of(v):
    """The robot's C struct written out field by field, crc excluded (2088 bytes)."""
    out = struct.pack("<2I2B2xI", *v["version"], v["mode_pr"], v["mode_machine"], v["tick"])
    out += struct.pack("<13fh2x", *v["quaternion"], *v["gyroscope"], *v["accelerometer"], *v["rpy"],
                       v["imu_temperature"])
    for m in v["motors"]:
        out += struct.pack("<B3x4f2hf2II4I", m["mode"], *(m[n] for n in MOTOR_FLOATS), *m["temperature"],
                           m["vol"], *m["sensor"], m["motorstate"], *m["reserve"])
    return out + struct.pack("<40B4I", *v["wireless_remote"], *v["reserve"])


def cdr_of(v, crc):
    """The XCDR1 little-endian sample written out: motor_state[0].mode right after the IMU, 1 pad byte."""
    out = bytes.fromhex("00010000")
    out += struct.pack("<2I2B2xI13fh", *v["version"], v["mode_pr"], v["mode_machine"], v["tick"], *v["quaternion"],
                       *v["gyroscope"], *v["accelerometer"], *v["rpy"], v["imu_temperature"])
    for i, m in enumerate(v["motors"]):
        pad = "x" if i == 0 else "3x"
        out += struct.pack(f"<B{pad}4f2hf2II4I", m["mode"], *(m[n] for n in MOTOR_FLOATS), *m["temperature"],
                           m["vol"], *m["sensor"], m["motorstate"], *m["reserve"])
    return out + struct.pack("<40B5I", *v["wireless_remote"], *v["reserve"], crc)


def test_packed_layout_is_the_c_struct_with_the_crc_of_its_522_words():
    v = random_values(1)
    packed, crc = pack_lowstate(record_of(v))
    expected = c_struct_of(v)
    assert len(packed) == LOWSTATE_SIZE == len(expected) + 4
    assert packed[:2088] == expected
    words_big_endian = struct.pack(">522I", *struct.unpack("<522I", expected))
    assert crc == crc32_mpeg2(words_big_endian) == struct.unpack_from("<I", packed, 2088)[0]
    assert lowstate_crc(packed) == crc
    changed = bytearray(packed)
    changed[2087] ^= 0x80  # the last covered byte (reserve[3])
    assert lowstate_crc(bytes(changed)) != crc


def test_unpack_reads_back_every_field():
    v = random_values(2)
    packed, crc = pack_lowstate(record_of(v))
    state = unpack_lowstate(packed)
    assert (int(state["tick"]), int(state["mode_machine"]), int(state["crc"])) == (v["tick"], 6, crc)
    assert state["imu_state"]["quaternion"].tolist() == v["quaternion"]
    assert state["imu_state"]["temperature"] == v["imu_temperature"]
    motors = state["motor_state"]
    assert motors["q"].tolist() == [m["q"] for m in v["motors"]]
    assert motors["reserve"].tolist() == [m["reserve"] for m in v["motors"]]
    assert motors["temperature"][34].tolist() == v["motors"][34]["temperature"]
    assert state["wireless_remote"].tolist() == v["wireless_remote"]
    with pytest.raises(ValueError):
        state["tick"] = 1  # a view of the received bytes, read-only


def test_cdr_sample_moves_the_first_motor_mode_next_to_the_imu():
    v = random_values(3)
    packed, crc = pack_lowstate(record_of(v))
    expected = cdr_of(v, crc)
    assert len(expected) == 2092
    assert lowstate_to_cdr(packed) == expected
    assert lowstate_from_cdr(expected) == packed
    assert lowstate_from_cdr(bytes.fromhex("00070000") + expected[4:] + b"\x00" * 4) == packed  # XCDR2, padded
    with pytest.raises(ValueError, match="not a little-endian CDR"):
        lowstate_from_cdr(bytes.fromhex("00000000") + expected[4:])  # big-endian
    with pytest.raises(ValueError, match="2092 bytes"):
        lowstate_to_cdr(packed[:-4])


def test_pack_refuses_anything_but_a_lowstate_record():
    with pytest.raises(ValueError, match="new_lowstate"):
        pack_lowstate(np.zeros(2092, dtype=np.uint8))


def sdk_message_of(v):
    from unitree_sdk2py.idl.default import unitree_hg_msg_dds__LowState_

    msg = unitree_hg_msg_dds__LowState_()
    msg.version, msg.mode_pr, msg.mode_machine, msg.tick = v["version"], v["mode_pr"], v["mode_machine"], v["tick"]
    for name in ("quaternion", "gyroscope", "accelerometer", "rpy"):
        setattr(msg.imu_state, name, v[name])
    msg.imu_state.temperature = v["imu_temperature"]
    for motor, values in zip(msg.motor_state, v["motors"], strict=True):
        for name, value in values.items():
            setattr(motor, name, value)
    msg.wireless_remote, msg.reserve = bytes(v["wireless_remote"]), v["reserve"]  # uint8[] as the SDK reads it
    return msg


def test_bytes_and_crc_equal_the_sdk_serialiser_and_crc_helper():
    pytest.importorskip("unitree_sdk2py", reason=SDK_MISSING)
    from unitree_sdk2py.idl.unitree_hg.msg.dds_ import LowState_
    from unitree_sdk2py.utils.crc import CRC

    for seed in (4, 5, 6):
        v = random_values(seed)
        packed, crc = pack_lowstate(record_of(v))
        msg = sdk_message_of(v)
        assert CRC().Crc(msg) == crc
        msg.crc = crc
        assert lowstate_to_cdr(packed) == msg.serialize()
        assert LowState_.deserialize(lowstate_to_cdr(packed)) == msg
        assert lowstate_from_cdr(msg.serialize()) == packed
