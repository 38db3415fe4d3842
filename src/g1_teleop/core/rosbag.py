"""rosbag2 bags (MCAP storage) of the graph's topics, written and read with the rosbags library: no ROS
installation needed.

A bag is a folder with ``metadata.yaml`` and one ``.mcap`` file, as ``ros2 bag record -s mcap`` makes it:
``ros2 bag info`` and ``ros2 bag play`` (Jazzy and later) open the folder, Foxglove and PlotJuggler the
``.mcap`` file. Messages are stored as the CDR bytes they had on the wire; each one's log time is the
graph's clock when it was received (simulated time in a simulation, as ``ros2 bag record --use-sim-time``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any, Literal

from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

TYPESTORE = get_typestore(Stores.ROS2_KILTED)
"""Message definitions written into the bag's schema (the standard messages the graph uses)."""
METADATA_VERSION: Literal[8] = 8  # rosbag2's metadata.yaml of Jazzy


class BagError(ValueError):
    """A bag that cannot be written or read; the message names the path and what to do."""


class BagWriter:
    """Writes serialized (CDR) messages into a new bag folder ``path``; use as a context manager or close()."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.exists():
            raise BagError(f"{self.path} exists: a bag is written into a new folder; remove it or choose another")
        self._writer = Writer(self.path, version=METADATA_VERSION, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._connections: dict[str, Any] = {}
        self.counts: dict[str, int] = {}
        """Messages written per topic."""

    def write(self, topic: str, msgtype: str, log_time_ns: int, cdr: bytes) -> None:
        """One message: its type (e.g. ``sensor_msgs/msg/JointState``; a topic is declared with its first
        message) and its CDR bytes (with the encapsulation header) at ``log_time_ns``."""
        connection = self._connections.get(topic)
        if connection is None:
            if msgtype not in TYPESTORE.types:
                raise BagError(f"{self.path}: unknown message type {msgtype!r} on {topic} (standard messages only)")
            connection = self._connections[topic] = self._writer.add_connection(topic, msgtype, typestore=TYPESTORE)
            self.counts[topic] = 0
        self._writer.write(connection, log_time_ns, cdr)
        self.counts[topic] += 1

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> BagWriter:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def read_messages(path: str | Path, topics: Collection[str]) -> Iterator[tuple[str, int, Any]]:
    """(topic, log time in ns, message) for the messages of ``topics`` in the bag at ``path`` (its folder or
    its .mcap file), in log-time order. A topic is given relative ("xr/head") and matches the bag's topic of
    that name in any one namespace ("/xr/head", "/g1/xr/head"); it is yielded under the name given.
    Messages are the rosbags dataclasses of their types (the fields of the ROS messages)."""
    path = Path(path)
    folder = path.parent if path.suffix == ".mcap" else path
    if not (folder / "metadata.yaml").is_file():
        raise BagError(f"{path} is not a rosbag2 bag (no metadata.yaml in {folder}): give the bag's folder, "
                       "as `g1-teleop record` or `ros2 bag record` wrote it")
    try:
        reader = Reader(folder)
        reader.open()
    except Exception as exc:  # rosbags raises several types for unreadable bags
        raise BagError(f"cannot read the bag {folder}: {exc}") from None
    try:
        wanted: dict[str, str] = {}  # the bag's topic → the name asked for
        for topic in topics:
            relative = topic.strip("/")
            names = sorted({c.topic for c in reader.connections
                            if c.topic.strip("/") == relative or c.topic.endswith("/" + relative)})
            if len(names) > 1:
                raise BagError(f"{folder}: {topic!r} matches several topics {names}: the bag holds more than one "
                               "robot's graph; record one namespace")
            wanted.update({name: topic for name in names})
        connections = [c for c in reader.connections if c.topic in wanted]
        for connection, log_time_ns, data in reader.messages(connections=connections):
            yield wanted[connection.topic], log_time_ns, TYPESTORE.deserialize_cdr(data, connection.msgtype)
    finally:
        reader.close()
