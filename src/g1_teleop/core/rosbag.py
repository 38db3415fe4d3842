"""rosbag2 bags (MCAP storage) of the graph's topics, written and read without a ROS installation.

A bag is a folder with ``metadata.yaml`` and one ``.mcap`` file, as ``ros2 bag record -s mcap`` makes it:
``ros2 bag info`` and ``ros2 bag play`` (Jazzy and later) open the folder, Foxglove and PlotJuggler the
``.mcap`` file, and the rosbags and mcap-ros2-support libraries read it. Messages are stored as the CDR bytes
they had on the wire, with two times, as rosbag2 stores them: the log time, the recorder's clock when the message
arrived (simulated time in a simulation, as ``ros2 bag record --use-sim-time``), and the publish time, when the
publisher wrote it (DDS's source timestamp, the system clock; the arrival on the system clock where the
middleware does not give it). Message definitions come from rosbags' ROS 2 Kilted type store.

The writer (the ``mcap`` library) closes a chunk at least every ``flush_period_s``, so a recorder that is killed
loses at most that much. The reader walks the MCAP file record by record itself: a bag that was cut (disk
full, recorder killed: no ``metadata.yaml`` or no end of file) or damaged (garbage bytes) is refused with a
:class:`BagError` naming the file, the byte and what is wrong, or, with ``keep_damaged``, read up to that byte
(:class:`BagDamage` says what was left). A bag of another storage (``sqlite3``, Humble's default) is read
with rosbags.
"""

from __future__ import annotations

import mmap
import struct
import time
import zlib
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

import yaml
from rosbags.typesys import Stores, get_typestore

TYPESTORE = get_typestore(Stores.ROS2_KILTED)
"""Message definitions written into the bag's schema (the standard messages the graph uses)."""
METADATA_VERSION: Literal[8] = 8  # rosbag2's metadata.yaml of Jazzy
MCAP_MAGIC = b"\x89MCAP0\r\n"
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
CHUNK_SIZE = 256 * 1024  # bytes of messages per chunk (at most; a chunk is also closed every flush_period_s)


class BagError(ValueError):
    """A bag that cannot be written or read; the message names the path and what to do."""


class BagWriter:
    """Writes serialized (CDR) messages into a new bag folder ``path``; use as a context manager or close()."""

    def __init__(self, path: str | Path, flush_period_s: float = 1.0) -> None:
        from mcap.writer import CompressionType, Writer

        self.path = Path(path)
        if self.path.exists():
            raise BagError(f"{self.path} exists: a bag is written into a new folder; remove it or choose another")
        self.path.mkdir(parents=True)
        self.mcap_path = self.path / f"{self.path.name}.mcap"
        self._file = self.mcap_path.open("xb")
        self._writer = Writer(self._file, chunk_size=CHUNK_SIZE, compression=CompressionType.NONE)
        self._writer.start(profile="ros2", library="g1_teleop (mcap)")
        self._flush_period_s = flush_period_s
        self._flushed_at = time.monotonic()
        self._schemas: dict[str, int] = {}
        self._channels: dict[str, tuple[int, str]] = {}  # topic → channel id, type
        self._times: list[int] = []  # first and last log time
        self.counts: dict[str, int] = {}
        """Messages written per topic."""

    def write(self, topic: str, msgtype: str, log_time_ns: int, cdr: bytes, publish_time_ns: int | None = None) -> None:
        """One message: its type (e.g. ``sensor_msgs/msg/JointState``; a topic is declared with its first
        message), its CDR bytes (with the encapsulation header), its log time and its publish time (when the
        publisher wrote it, ns on the system clock; default: the log time)."""
        channel = self._channels.get(topic)
        if channel is None:
            channel = self._channels[topic] = (self._declare(topic, msgtype), msgtype)
            self.counts[topic] = 0
        self._writer.add_message(channel[0], log_time=log_time_ns, data=bytes(cdr),
                                 publish_time=log_time_ns if publish_time_ns is None else publish_time_ns,
                                 sequence=self.counts[topic])
        self.counts[topic] += 1
        self._times = [min(self._times[0], log_time_ns), max(self._times[1], log_time_ns)] if self._times \
            else [log_time_ns, log_time_ns]
        now = time.monotonic()
        if now - self._flushed_at >= self._flush_period_s:
            self._flushed_at = now
            self._writer.flush()

    def _declare(self, topic: str, msgtype: str) -> int:
        if msgtype not in TYPESTORE.types:
            raise BagError(f"{self.path}: unknown message type {msgtype!r} on {topic} (standard messages only)")
        if msgtype not in self._schemas:
            msgdef, _ = TYPESTORE.generate_msgdef(msgtype, ros_version=2)
            self._schemas[msgtype] = self._writer.register_schema(msgtype, "ros2msg", msgdef.encode())
        return self._writer.register_channel(topic, "cdr", self._schemas[msgtype],
                                             metadata={"offered_qos_profiles": ""})

    def close(self) -> None:
        """Finish the MCAP file (summary, footer) and write metadata.yaml."""
        if self._file.closed:
            return
        self._writer.finish()
        self._file.close()
        start, end = self._times or [0, 0]
        count = sum(self.counts.values())
        topics = [{"topic_metadata": {"name": topic, "type": msgtype, "serialization_format": "cdr",
                                      "offered_qos_profiles": "",
                                      "type_description_hash": TYPESTORE.hash_rihs01(msgtype)},
                   "message_count": self.counts[topic]} for topic, (_, msgtype) in self._channels.items()]
        info = {"version": METADATA_VERSION, "storage_identifier": "mcap",
                "relative_file_paths": [self.mcap_path.name],
                "duration": {"nanoseconds": end - start}, "starting_time": {"nanoseconds_since_epoch": start},
                "message_count": count, "topics_with_message_count": topics, "compression_format": "",
                "compression_mode": "", "files": [{"path": self.mcap_path.name,
                                                   "starting_time": {"nanoseconds_since_epoch": start},
                                                   "duration": {"nanoseconds": end - start}, "message_count": count}],
                "custom_data": {"publish_time": "DDS source timestamp (system clock)"}, "ros_distro": "g1_teleop"}
        (self.path / "metadata.yaml").write_text(yaml.safe_dump({"rosbag2_bagfile_information": info}, sort_keys=False))

    def __enter__(self) -> BagWriter:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


# -- reading -----------------------------------------------------------------------------------------------


class BagMessage(NamedTuple):
    log_time_ns: int  # the recorder's clock at arrival
    publish_time_ns: int  # when the publisher wrote it (system clock), or the log time
    msg: Any  # the rosbags dataclass of its type (the ROS message's fields)


@dataclass(frozen=True)
class BagDamage:
    """Where and how a bag's MCAP file stops being readable."""

    file: Path
    offset: int  # the byte at which reading stopped
    size: int  # the file's size
    kind: Literal["truncated", "corrupt"]
    detail: str
    messages_before: int  # complete messages before ``offset``

    def __str__(self) -> str:
        if self.kind == "truncated":
            what = (f"{self.file} is truncated at byte {self.offset} of {self.size} ({self.detail}): the recording "
                    "was cut (disk full or the recorder killed?)")
        else:
            what = (f"{self.file} is corrupt at byte {self.offset} of {self.size}: {self.detail} (garbage bytes, a "
                    "damaged disk or copy?)")
        if not self.messages_before:
            return f"{what}; no complete message comes before that point"
        return (f"{what}; the {self.messages_before} messages before that point are readable "
                "(`g1-teleop report` and `g1-teleop latency` read them)")


@dataclass
class Bag:
    """What :func:`read_bag` read: messages per topic (under the names asked for), in log-time order."""

    folder: Path
    file: Path
    topics: dict[str, str]  # every topic of the bag (full name) → its type
    messages: dict[str, list[BagMessage]]
    damage: BagDamage | None = None
    notes: list[str] = field(default_factory=list)  # what else the reader noticed (no metadata.yaml, …)

    def get(self, topic: str) -> list[BagMessage]:
        return self.messages.get(topic, [])


def read_messages(path: str | Path, topics: Collection[str]) -> Iterator[tuple[str, int, Any]]:
    """(topic, log time in ns, message) for the messages of ``topics`` in the bag at ``path`` (its folder or
    its .mcap file), in log-time order. A topic is given relative ("xr/head") and matches the bag's topic of
    that name in any one namespace ("/xr/head", "/g1/xr/head"); it is yielded under the name given.
    Messages are the rosbags dataclasses of their types (the fields of the ROS messages). A damaged bag
    raises BagError."""
    bag = read_bag(path, topics)
    merged = sorted(((m.log_time_ns, order, topic, m.msg) for topic, msgs in bag.messages.items()
                     for order, m in enumerate(msgs)), key=lambda row: row[0])
    for log_time_ns, _, topic, msg in merged:
        yield topic, log_time_ns, msg


def read_bag(path: str | Path, topics: Collection[str] | None = None, keep_damaged: bool = False) -> Bag:
    """The messages of ``topics`` (all topics of known types when None; names as in :func:`read_messages`) of
    the bag at ``path``. A damaged bag raises BagError, or with ``keep_damaged`` gives the messages before the
    damage and says where it is (``Bag.damage``)."""
    folder, mcap_file, notes = _locate(Path(path))
    if mcap_file is None:
        return _read_with_rosbags(folder, topics)
    scan = _McapScan(mcap_file)
    try:
        records = list(scan.records())
    finally:
        scan.close()
    if scan.damage is not None and not keep_damaged:
        raise BagError(str(scan.damage))
    schemas: dict[int, str] = {}
    channels: dict[int, tuple[str, str]] = {}  # id → topic, type
    raw: dict[int, list[tuple[int, int, bytes]]] = {}
    for record in records:
        if record[0] == "schema":
            schemas[record[1]] = record[2]
        elif record[0] == "channel":
            channels[record[1]] = (record[3], schemas.get(record[2], ""))
        else:
            raw.setdefault(record[1], []).append(record[2:])
    all_topics = {topic: msgtype for topic, msgtype in channels.values()}
    wanted = _match_topics(folder, all_topics, topics)
    messages: dict[str, list[BagMessage]] = {name: [] for name in (topics or wanted.values())}
    for channel_id, rows in raw.items():
        topic, msgtype = channels.get(channel_id, ("", ""))
        name = wanted.get(topic)
        if name is None:
            continue
        if msgtype not in TYPESTORE.types:
            raise BagError(f"{mcap_file}: {topic} has the message type {msgtype!r}, which is not a standard message "
                           "of ROS 2 Kilted: this reader decodes standard messages only")
        try:
            decoded = [BagMessage(log, pub, TYPESTORE.deserialize_cdr(data, msgtype)) for log, pub, data in rows]
        except Exception as exc:  # rosbags raises several types for bytes that are not the type's CDR
            raise BagError(f"{mcap_file}: a message on {topic} is not a valid {msgtype} ({exc}): the bag is "
                           "corrupt") from None
        messages[name] = sorted(messages[name] + decoded, key=lambda m: m.log_time_ns)
    return Bag(folder, mcap_file, all_topics, messages, scan.damage, notes)


def _locate(path: Path) -> tuple[Path, Path | None, list[str]]:
    """The bag's folder, its MCAP file (None: another storage, for rosbags) and notes."""
    if path.suffix == ".mcap" and path.is_file():
        folder = path.parent
        return folder, path, [] if (folder / "metadata.yaml").is_file() else \
            [f"no metadata.yaml beside {path.name}: the recorder did not close the bag"]
    folder = path
    meta = folder / "metadata.yaml"
    mcaps = sorted(folder.glob("*.mcap")) if folder.is_dir() else []
    if not meta.is_file():
        if len(mcaps) == 1:
            return folder, mcaps[0], [f"no metadata.yaml in {folder}: the recorder did not close the bag "
                                      "(killed?); reading its .mcap file"]
        raise BagError(f"{path} is not a rosbag2 bag (no metadata.yaml in {folder}): give the bag's folder, "
                       "as `g1-teleop record` or `ros2 bag record` wrote it")
    try:
        info = yaml.load(meta.read_text(), Loader=_YAML_LOADER)["rosbag2_bagfile_information"]
        storage, files = info.get("storage_identifier", ""), info.get("relative_file_paths") or []
    except (yaml.YAMLError, KeyError, TypeError, AttributeError) as exc:
        raise BagError(f"{meta} is not rosbag2 metadata ({exc}): the bag is corrupt; its .mcap may still be "
                       "readable (give the .mcap file)") from None
    if storage != "mcap":
        return folder, None, []
    if len(files) != 1:
        raise BagError(f"{folder}: a bag of {len(files)} files (split bags are not read here): record one file")
    mcap_file = folder / files[0]
    if not mcap_file.is_file():
        raise BagError(f"{folder}: its metadata names {files[0]}, which is not there: copy the whole bag folder")
    return folder, mcap_file, []


def _match_topics(folder: Path, bag_topics: Collection[str], topics: Collection[str] | None) -> dict[str, str]:
    """The bag's topic → the name asked for (every topic of a known type, under its own name, for None)."""
    if topics is None:
        return {t: t for t in bag_topics}
    wanted: dict[str, str] = {}
    for topic in topics:
        relative = topic.strip("/")
        names = sorted(t for t in bag_topics if t.strip("/") == relative or t.endswith("/" + relative))
        if len(names) > 1:
            raise BagError(f"{folder}: {topic!r} matches several topics {names}: the bag holds more than one "
                           "robot's graph; record one namespace")
        wanted.update({name: topic for name in names})
    return wanted


def _read_with_rosbags(folder: Path, topics: Collection[str] | None) -> Bag:
    from rosbags.rosbag2 import Reader

    try:
        reader = Reader(folder)
        reader.open()
    except Exception as exc:  # rosbags raises several types for unreadable bags
        raise BagError(f"cannot read the bag {folder}: {exc}") from None
    try:
        all_topics = {c.topic: c.msgtype for c in reader.connections}
        wanted = _match_topics(folder, all_topics, topics)
        messages: dict[str, list[BagMessage]] = {name: [] for name in (topics or wanted.values())}
        connections = [c for c in reader.connections if c.topic in wanted and c.msgtype in TYPESTORE.types]
        for connection, log_time_ns, data in reader.messages(connections=connections):
            msg = TYPESTORE.deserialize_cdr(data, connection.msgtype)
            messages[wanted[connection.topic]].append(BagMessage(log_time_ns, log_time_ns, msg))
    except BagError:
        raise
    except Exception as exc:
        raise BagError(f"cannot read the bag {folder}: {exc}") from None
    finally:
        reader.close()
    return Bag(folder, folder, all_topics, messages)


_KNOWN_OPCODES = set(range(0x01, 0x10))  # Header … DataEnd (0x80 and up: user records, skipped)


class _McapScan:
    """Walks an MCAP file's records: ("schema", id, name), ("channel", id, schema_id, topic) and
    ("message", channel_id, log_time, publish_time, data); stops at the first damage (``damage``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.damage: BagDamage | None = None
        self._file = path.open("rb")
        self.size = path.stat().st_size
        self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) if self.size else None
        self._messages = 0

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
        self._file.close()

    def _stop(self, offset: int, kind: Literal["truncated", "corrupt"], detail: str) -> None:
        self.damage = BagDamage(self.path, offset, self.size, kind, detail, self._messages)

    def records(self) -> Iterator[tuple]:
        data, size = self._map, self.size
        if data is None or size < len(MCAP_MAGIC) or data[:8] != MCAP_MAGIC:
            if size < len(MCAP_MAGIC) and MCAP_MAGIC.startswith(bytes(data[:size]) if data is not None else b""):
                self._stop(0, "truncated", "it ends before its first record")
            else:
                self._stop(0, "corrupt", "it does not start with the MCAP magic bytes: not an MCAP file")
            return
        closed = size >= 16 and data[size - 8:] == MCAP_MAGIC  # the writer finished it
        offset = 8
        while True:
            if offset + 9 > size:
                if offset == size:
                    self._stop(offset, "truncated", "it ends there without its summary and footer")
                else:
                    self._stop(offset, "truncated", "in the middle of a record's header")
                return
            opcode, length = data[offset], struct.unpack_from("<Q", data, offset + 1)[0]
            if opcode not in _KNOWN_OPCODES and opcode < 0x80:
                self._stop(offset, "corrupt", f"a record of unknown type 0x{opcode:02x}")
                return
            body_start, body_end = offset + 9, offset + 9 + length
            if body_end > size:
                if closed:
                    self._stop(offset, "corrupt", f"a record claims {length} bytes, past the end of the file")
                else:
                    self._stop(offset, "truncated", f"in the middle of a record of {length} bytes")
                return
            body = memoryview(data)[body_start:body_end]
            try:
                if opcode == 0x06:  # chunk
                    yield from self._chunk(body)
                elif opcode in (0x03, 0x04, 0x05):
                    yield self._record(opcode, body)
                    self._messages += opcode == 0x05
                elif opcode in (0x0F, 0x02):  # data end, footer: the messages are all read
                    return
            except _Corrupt as exc:
                self._stop(offset, "corrupt", str(exc))
                return
            finally:
                body.release()
            offset = body_end

    def _chunk(self, body: memoryview) -> Iterator[tuple]:
        try:
            _start, _end, size, crc = struct.unpack_from("<QQQI", body, 0)
            name_len = struct.unpack_from("<I", body, 28)[0]
            compression = bytes(body[32:32 + name_len]).decode()
            records_len = struct.unpack_from("<Q", body, 32 + name_len)[0]
        except (struct.error, UnicodeDecodeError):
            raise _Corrupt("a chunk's header is not readable") from None
        payload = body[40 + name_len:40 + name_len + records_len]
        if len(payload) != records_len:
            raise _Corrupt("a chunk is shorter than its header says")
        if compression == "zstd":
            try:
                import zstandard
                inner = zstandard.ZstdDecompressor().decompress(bytes(payload), max_output_size=size)
            except Exception as exc:  # zstandard.ZstdError and friends
                raise _Corrupt(f"a zstd chunk does not decompress ({exc})") from None
        elif compression == "lz4":
            try:
                import lz4.frame
                inner = lz4.frame.decompress(bytes(payload))
            except Exception as exc:
                raise _Corrupt(f"an lz4 chunk does not decompress ({exc})") from None
        elif compression == "":
            inner = bytes(payload)
        else:
            raise _Corrupt(f"a chunk compressed with {compression!r}, which this reader does not know")
        if len(inner) != size or (crc and zlib.crc32(inner) != crc):
            raise _Corrupt("a chunk's bytes do not match its CRC")
        offset, out = 0, []
        while offset < len(inner):
            if offset + 9 > len(inner):
                raise _Corrupt("a chunk ends in the middle of a record")
            opcode, length = inner[offset], struct.unpack_from("<Q", inner, offset + 1)[0]
            end = offset + 9 + length
            if end > len(inner):
                raise _Corrupt("a record runs past the end of its chunk")
            if opcode in (0x03, 0x04, 0x05):
                out.append(self._record(opcode, memoryview(inner)[offset + 9:end]))
            offset = end
        for record in out:  # yielded once the whole chunk is known good
            self._messages += record[0] == "message"
            yield record

    @staticmethod
    def _record(opcode: int, body: memoryview) -> tuple:
        try:
            if opcode == 0x05:
                channel, _seq, log_time, publish_time = struct.unpack_from("<HIQQ", body, 0)
                return "message", channel, log_time, publish_time, bytes(body[22:])
            if opcode == 0x03:
                schema_id, n = struct.unpack_from("<HI", body, 0)
                return "schema", schema_id, bytes(body[6:6 + n]).decode()
            channel_id, schema_id, n = struct.unpack_from("<HHI", body, 0)
            return "channel", channel_id, schema_id, bytes(body[8:8 + n]).decode()
        except (struct.error, UnicodeDecodeError):
            raise _Corrupt(f"a record of type 0x{opcode:02x} is not readable") from None


class _Corrupt(Exception):
    pass
