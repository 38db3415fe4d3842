"""The robot's own DDS interface: one CycloneDDS participant on the robot's domain, bound to one network
interface, and readers and writers of its topics with unitree_sdk2py's IDL types. ROS-free.

A G1 speaks on domain 0 over its Ethernet port (``ChannelFactoryInitialize(0, interface)`` in
unitree_sdk2_python's example/g1/low_level/g1_low_level_example.py); Unitree's simulator uses domain 1 on lo
(unitree_mujoco's simulate_python/config.py). The domain is configured as unitree_sdk2_python's ChannelFactory
does it (unitree_sdk2py/core/channel.py, channel_config.py: CycloneDDS XML naming the interface), but without its
process-wide singleton and its trace file, so that each process opens the domain it is given.

Raw readers and writers move samples as CDR bytes through CycloneDDS's C layer (``ddspy_take`` and
``ddspy_write`` on an entity's ``_ref``: cyclonedds-python 0.10's private API), without the Python
(de)serialiser (~0.4 ms a LowState, ~0.24 ms a LowCmd); :mod:`g1_teleop.hardware.lowcmd` and
:mod:`g1_teleop.hardware.lowstate` (un)pack the bytes. Typed readers and writers carry the SDK's message
objects (the Dex3 hands', the wireless controller's).

Needs unitree_sdk2py (scripts/install_robot_sdk.sh) and CYCLONEDDS_HOME unset (or holding lib/libddsc.so).
"""

from __future__ import annotations

import importlib
import socket
import time
from collections.abc import Callable
from typing import Any, TypeVar
from xml.sax.saxutils import quoteattr

TOPIC_LOWSTATE = "rt/lowstate"
TOPIC_LOWCMD = "rt/lowcmd"
TOPIC_WIRELESS_CONTROLLER = "rt/wirelesscontroller"
MAX_DOMAIN_ID = 232  # the highest id of the standard DDS port mapping
TAKE_MAX = 64  # samples taken at once from a reader that keeps the DDS default history (KeepLast 1)

_SIDES = ("left", "right")
# Each topic's IDL type: (module of unitree_sdk2py, class).
_TOPIC_TYPES = {
    TOPIC_LOWSTATE: ("unitree_sdk2py.idl.unitree_hg.msg.dds_", "LowState_"),
    TOPIC_LOWCMD: ("unitree_sdk2py.idl.unitree_hg.msg.dds_", "LowCmd_"),
    TOPIC_WIRELESS_CONTROLLER: ("unitree_sdk2py.idl.unitree_go.msg.dds_", "WirelessController_"),
    **{f"rt/dex3/{side}/cmd": ("unitree_sdk2py.idl.unitree_hg.msg.dds_", "HandCmd_") for side in _SIDES},
    **{f"rt/dex3/{side}/state": ("unitree_sdk2py.idl.unitree_hg.msg.dds_", "HandState_") for side in _SIDES},
}
_CYCLONEDDS_CONFIG = ('<CycloneDDS><Domain Id="any"><General><Interfaces><NetworkInterface name={name} '
                      'priority="default" multicast="default"/></Interfaces></General></Domain></CycloneDDS>')


E = TypeVar("E", bound="_Endpoint")


class DdsError(RuntimeError):
    """CycloneDDS refused a write or a take (the message has its return code)."""


class RobotDdsUnavailable(RuntimeError):
    """The robot SDK (unitree_sdk2py on CycloneDDS) cannot be imported, or the robot's DDS domain cannot be
    opened; the message says what to do."""


def topic_type(topic: str) -> type:
    """The SDK's IDL type of a robot topic (rt/lowstate, rt/lowcmd, rt/wirelesscontroller, rt/dex3/*/cmd|state)."""
    module, name = _TOPIC_TYPES[topic]
    try:
        return getattr(importlib.import_module(module), name)
    except Exception as exc:  # ImportError, or CycloneDDS's library loader error on a wrong CYCLONEDDS_HOME
        raise RobotDdsUnavailable(
            f"the robot SDK is not usable ({type(exc).__name__}: {exc}); install it with "
            "scripts/install_robot_sdk.sh and leave CYCLONEDDS_HOME unset (or point it at a folder with "
            "lib/libddsc.so)") from exc


class RobotDds:
    """A participant on the robot's DDS domain ``domain_id``, on network interface ``interface``, and the
    endpoints made with it; :meth:`close` deletes them all."""

    def __init__(self, domain_id: int, interface: str) -> None:
        topic_type(TOPIC_LOWSTATE)  # the SDK and CycloneDDS load, or say how to install them
        from cyclonedds.core import DDSException
        from cyclonedds.domain import Domain, DomainParticipant

        try:
            self._domain = Domain(domain_id, _CYCLONEDDS_CONFIG.format(name=quoteattr(interface)))
            self.participant = DomainParticipant(domain_id)
        except DDSException as exc:
            interfaces = ", ".join(name for _, name in socket.if_nameindex())
            raise RobotDdsUnavailable(f"cannot open the robot's DDS domain {domain_id} on interface {interface!r} "
                                      f"({exc}); interfaces here: {interfaces}") from exc
        self._endpoints: list[_Endpoint] = []

    def raw_writer(self, topic: str) -> RawWriter:
        return self._add(RawWriter(self.participant, topic))

    def writer(self, topic: str) -> MessageWriter:
        return self._add(MessageWriter(self.participant, topic))

    def raw_reader(self, topic: str, history: int | None = None,
                   on_samples: Callable[[list[bytes], float], None] | None = None) -> RawReader:
        return self._add(RawReader(self.participant, topic, history, on_samples))

    def reader(self, topic: str, history: int | None = None,
               on_samples: Callable[[list[Any], float], None] | None = None) -> MessageReader:
        return self._add(MessageReader(self.participant, topic, history, on_samples))

    def _add(self, endpoint: E) -> E:
        self._endpoints.append(endpoint)
        return endpoint

    def close(self) -> None:
        """Stop the listeners and delete the endpoints, then the participant."""
        for endpoint in self._endpoints:
            endpoint.close()
        self._endpoints.clear()
        del self.participant, self._domain


class _Endpoint:
    """A reader or writer of one topic (``_entity``: its CycloneDDS DataReader or DataWriter)."""

    topic: str
    _entity: Any

    def stop_listening(self) -> None:
        """No more listener calls (a reader's; a writer has none)."""

    def close(self) -> None:
        """Stop listening and delete the endpoint (unmatched from the others on its topic)."""
        if hasattr(self, "_entity"):
            self.stop_listening()
            del self._entity


class RawWriter(_Endpoint):
    """Writes CDR samples (with their encapsulation header) on one topic as they are (default QoS, as the SDK's
    channels)."""

    def __init__(self, participant: Any, topic: str) -> None:
        from cyclonedds._clayer import ddspy_write
        from cyclonedds.pub import DataWriter
        from cyclonedds.topic import Topic

        self.topic = topic
        self._write = ddspy_write
        self._entity = DataWriter(participant, Topic(participant, topic, topic_type(topic)))

    def write(self, sample: bytes) -> None:
        """Write one sample; raises DdsError when CycloneDDS refuses it."""
        status = self._write(self._entity._ref, sample)
        if status < 0:
            raise DdsError(f"writing {self.topic}: DDS return code {status}")


class MessageWriter(_Endpoint):
    """Writes the SDK's message objects on one topic (default QoS, as the SDK's channels)."""

    def __init__(self, participant: Any, topic: str) -> None:
        from cyclonedds.pub import DataWriter
        from cyclonedds.topic import Topic

        self.topic = topic
        self._entity = DataWriter(participant, Topic(participant, topic, topic_type(topic)))

    def write(self, message: Any) -> None:
        self._entity.write(message)


class _Reader(_Endpoint):
    """One topic's reader. ``history``: the samples it keeps between two takes (KeepLast); None: the DDS default,
    the newest only (as the SDK's channels). With ``on_samples``, CycloneDDS's listener thread calls it on each
    delivery with the valid samples taken (oldest first, never none) and their arrival time (time.monotonic())."""

    def __init__(self, participant: Any, topic: str, history: int | None,
                 on_samples: Callable[[list[Any], float], None] | None) -> None:
        from cyclonedds.core import Listener, Policy, Qos
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic

        self.topic = topic
        self._count = history or TAKE_MAX
        self._on_samples = on_samples
        qos = None if history is None else Qos(Policy.History.KeepLast(history))
        listener = None if on_samples is None else Listener(on_data_available=self._on_data)
        self._entity = DataReader(participant, Topic(participant, topic, topic_type(topic)), qos, listener)

    def take(self) -> list[Any]:
        """The valid samples received since the last take, oldest first."""
        return self._take_from(self._entity)

    def _take_from(self, reader: Any) -> list[Any]:
        raise NotImplementedError

    def _on_data(self, reader: Any) -> None:
        received_s = time.monotonic()
        samples = self._take_from(reader)  # (``reader``: the listener may fire before __init__ returns)
        if samples and self._on_samples is not None:
            self._on_samples(samples, received_s)

    def stop_listening(self) -> None:
        self._entity.set_listener(None)


class RawReader(_Reader):
    """CDR samples (bytes, with their encapsulation header) of one topic."""

    def __init__(self, participant: Any, topic: str, history: int | None,
                 on_samples: Callable[[list[bytes], float], None] | None) -> None:
        from cyclonedds._clayer import ddspy_take

        self._take = ddspy_take  # (before the reader exists: its listener uses it)
        super().__init__(participant, topic, history, on_samples)

    def take_timed(self) -> list[tuple[bytes, float]]:
        """The valid samples received since the last take, oldest first, each with the time its writer wrote it
        (the DDS source timestamp: ``time.time()`` s on the writer's clock)."""
        return [(data, info.source_timestamp * 1e-9) for data, info in self._take_valid(self._entity)]

    def _take_from(self, reader: Any) -> list[bytes]:
        return [data for data, _ in self._take_valid(reader)]

    def _take_valid(self, reader: Any) -> list[tuple[bytes, Any]]:
        taken = self._take(reader._ref, self._count)
        if isinstance(taken, int):  # a DDS return code
            raise DdsError(f"taking {self.topic}: DDS return code {taken}")
        return [(data, info) for data, info in taken if info.valid_data]


class MessageReader(_Reader):
    """The SDK's message objects of one topic."""

    def __init__(self, participant: Any, topic: str, history: int | None,
                 on_samples: Callable[[list[Any], float], None] | None) -> None:
        from cyclonedds.internal import InvalidSample

        self._invalid = InvalidSample  # (before the reader exists: its listener uses it)
        super().__init__(participant, topic, history, on_samples)

    def _take_from(self, reader: Any) -> list[Any]:
        return [s for s in reader.take(self._count) if not isinstance(s, self._invalid)]  # (a writer went away)
