"""Bags (g1_teleop.core.rosbag), ROS-free: publish times kept, two independent readers agree, a bag cut in the
middle or with garbage bytes is refused with the file, the byte and the cause, and read up to that byte on
request; a bag whose recorder was killed (no metadata.yaml, no summary) still reads."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from rosbags.typesys.stores.ros2_kilted import builtin_interfaces__msg__Time as Time
from rosbags.typesys.stores.ros2_kilted import sensor_msgs__msg__JointState as JointState
from rosbags.typesys.stores.ros2_kilted import std_msgs__msg__Header as Header
from rosbags.typesys.stores.ros2_kilted import std_msgs__msg__String as String

from g1_teleop.core.rosbag import TYPESTORE, BagError, BagWriter, read_bag, read_messages
from support.bag_readers import assert_readers_agree

JS = "sensor_msgs/msg/JointState"
MESSAGES = 200


def joint_state(k: int) -> bytes:
    msg = JointState(header=Header(stamp=Time(sec=k // 50, nanosec=(k % 50) * 20_000_000), frame_id=""),
                     name=["a", "b"], position=np.array([0.001 * k, -1.5]), velocity=np.array([0.5, 0.25]),
                     effort=np.zeros(0))
    return TYPESTORE.serialize_cdr(msg, JS)


def write_bag(path, flush_period_s=1.0, close=True):
    """MESSAGES joint states (log time k ms, publish time k ms + 7 µs) and one latched string."""
    writer = BagWriter(path, flush_period_s=flush_period_s)
    writer.write("/robot_description", "std_msgs/msg/String", 0,
                 TYPESTORE.serialize_cdr(String(data="<robot name='g1'/>"), "std_msgs/msg/String"))
    for k in range(MESSAGES):
        writer.write("/joint_states", JS, k * 1_000_000, joint_state(k), k * 1_000_000 + 7_000)
    if close:
        writer.close()
    return writer


def test_messages_keep_their_log_and_publish_times_and_two_readers_agree(tmp_path):
    write_bag(tmp_path / "bag")
    bag = read_bag(tmp_path / "bag")
    states = bag.get("/joint_states")
    assert len(states) == MESSAGES and bag.damage is None
    assert [m.log_time_ns for m in states] == [k * 1_000_000 for k in range(MESSAGES)]
    assert [m.publish_time_ns - m.log_time_ns for m in states] == [7_000] * MESSAGES
    assert states[123].msg.position.tolist() == [0.123, -1.5]
    assert bag.get("/robot_description")[0].msg.data == "<robot name='g1'/>"
    assert [t for _, t, _ in read_messages(tmp_path / "bag", ["joint_states"])][:3] == [0, 1_000_000, 2_000_000]
    assert assert_readers_agree(tmp_path / "bag") == MESSAGES + 1


def cut_copy(tmp_path, name, mutate):
    """A copy of a closed bag of many chunks whose .mcap went through ``mutate``; the .mcap's path."""
    src = tmp_path / "src"
    if not src.exists():
        write_bag(src, flush_period_s=0.0)  # a chunk per message
    dst = tmp_path / name
    shutil.copytree(src, dst)
    mcap = dst / "src.mcap"
    mcap.write_bytes(mutate(mcap.read_bytes()))
    return mcap


def test_a_bag_cut_in_the_middle_is_refused_naming_the_byte_and_reads_up_to_it(tmp_path):
    mcap = cut_copy(tmp_path, "cut", lambda data: data[: len(data) // 2])
    size = mcap.stat().st_size
    with pytest.raises(BagError) as error:
        read_bag(mcap.parent)
    message = str(error.value)
    assert str(mcap) in message and "is truncated at byte " in message and f"of {size}" in message
    assert "the recording was cut (disk full or the recorder killed?)" in message
    assert "`g1-teleop report`" in message
    bag = read_bag(mcap.parent, keep_damaged=True)
    kept = bag.get("/joint_states")
    assert bag.damage is not None and bag.damage.kind == "truncated" and bag.damage.offset < size
    assert 0.3 * MESSAGES < len(kept) < MESSAGES  # every complete message before the cut
    assert [m.msg.position[0] for m in kept] == pytest.approx([0.001 * k for k in range(len(kept))])
    assert f"the {bag.damage.messages_before} messages before that point" in message


def test_garbage_bytes_in_the_middle_are_a_corrupt_bag(tmp_path):
    def garbage(data: bytes) -> bytes:
        middle = len(data) // 2
        return data[:middle] + b"\xde\xad\xbe\xef" * 16 + data[middle + 64:]

    mcap = cut_copy(tmp_path, "garbage", garbage)
    with pytest.raises(BagError, match=rf"{mcap} is corrupt at byte \d+ of {mcap.stat().st_size}: .*\(garbage bytes, "):
        read_bag(mcap.parent)
    bag = read_bag(mcap.parent, keep_damaged=True)
    assert bag.damage.kind == "corrupt" and 0 < len(bag.get("/joint_states")) < MESSAGES

    inserted = cut_copy(tmp_path, "inserted", lambda data: data[:5000] + b"garbage!" + data[5000:])
    with pytest.raises(BagError, match="is corrupt at byte"):
        read_bag(inserted.parent)


def test_not_an_mcap_file_and_an_empty_one(tmp_path):
    mcap = cut_copy(tmp_path, "text", lambda data: b"this is not a bag" + data[17:])
    with pytest.raises(BagError, match="does not start with the MCAP magic bytes: not an MCAP file"):
        read_bag(mcap.parent)
    empty = cut_copy(tmp_path, "empty", lambda data: b"")
    with pytest.raises(BagError, match=r"truncated at byte 0 of 0 .*no complete message"):
        read_bag(empty.parent)


def test_a_bag_whose_recorder_was_killed_reads_up_to_its_last_flush(tmp_path):
    writer = write_bag(tmp_path / "killed", flush_period_s=0.0, close=False)  # no summary, no metadata.yaml
    writer._file.flush()
    with pytest.raises(BagError, match="ends there without its summary and footer"):
        read_bag(tmp_path / "killed")
    bag = read_bag(tmp_path / "killed", keep_damaged=True)
    assert len(bag.get("/joint_states")) == MESSAGES  # (a chunk per message: every one was flushed)
    assert any("no metadata.yaml" in note for note in bag.notes)
    writer._file.close()
