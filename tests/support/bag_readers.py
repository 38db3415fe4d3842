"""A bag read by two independent libraries, rosbags and mcap-ros2-support, message for message as plain values."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import numpy as np


def plain(value):
    """A message (rosbags dataclass or mcap-ros2's dynamic class) as nested dicts, lists and Python scalars."""
    if dataclasses.is_dataclass(value):  # (rosbags declares constants as ClassVar fields)
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not str(f.type).startswith("ClassVar")}
    if isinstance(value, SimpleNamespace):
        return {k: plain(getattr(value, k)) for k in value.__slots__}
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def by_rosbags(folder: Path) -> dict[str, list[tuple[int, object]]]:
    """{topic: [(log time, message)]} as rosbags reads the bag folder."""
    from rosbags.rosbag2 import Reader

    from g1_teleop.core.rosbag import TYPESTORE

    out: dict[str, list[tuple[int, object]]] = {}
    with Reader(folder) as reader:
        for connection, log_time, data in reader.messages():
            msg = TYPESTORE.deserialize_cdr(data, connection.msgtype)
            out.setdefault(connection.topic, []).append((log_time, plain(msg)))
    return out


def by_mcap_ros2(mcap_file: Path) -> dict[str, list[tuple[int, object]]]:
    """{topic: [(log time, message)]} as mcap-ros2-support decodes the .mcap file (from its own schemas)."""
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    out: dict[str, list[tuple[int, object]]] = {}
    with open(mcap_file, "rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        for _schema, channel, message, decoded in reader.iter_decoded_messages(log_time_order=True):
            out.setdefault(channel.topic, []).append((message.log_time, plain(decoded)))
    return out


def assert_readers_agree(folder: Path) -> int:
    """Both readers give every topic's messages equal field by field, in the same order; returns the count."""
    a, b = by_rosbags(folder), by_mcap_ros2(next(Path(folder).glob("*.mcap")))
    assert sorted(a) == sorted(b), (sorted(a), sorted(b))
    for topic in a:
        assert len(a[topic]) == len(b[topic]), topic
        for k, (left, right) in enumerate(zip(a[topic], b[topic], strict=True)):
            assert left == right, f"{topic} message {k}: rosbags {left} != mcap-ros2 {right}"
    return sum(len(v) for v in a.values())
