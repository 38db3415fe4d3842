"""A listener on the robot's own DDS topics, for tests and benchmarks of the bridge. ROS-free.

It timestamps every rt/lowcmd and rt/lowstate sample on arrival (time.monotonic()), decodes the LowCmds
(:mod:`g1_teleop.hardware.lowcmd`, CRC checked), with ``hands`` also every rt/dex3/{left,right}/cmd, and plays a
wireless remote on rt/wirelesscontroller, which the virtual robot copies into LowState.wireless_remote.
Needs unitree_sdk2py (CycloneDDS 0.10.x).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from g1_teleop.hardware.lowcmd import NUM_BODY_JOINTS, lowcmd_crc, lowcmd_from_cdr, unpack_lowcmd
from g1_teleop.hardware.wireless_remote import BUTTONS


@dataclass(frozen=True)
class HandCmdSample:
    """One HandCmd as it arrived: time.monotonic() (s), and per motor mode, q, kp, kd."""

    t: float
    mode: np.ndarray
    q: np.ndarray
    kp: np.ndarray
    kd: np.ndarray


@dataclass(frozen=True)
class LowCmdSample:
    """One LowCmd as it arrived: time.monotonic() (s), the 29 body motors' targets and gains."""

    t: float
    q: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    mode_machine: int
    crc_ok: bool


class RobotProbe:
    """Every LowCmd and LowState arrival on ``domain_id`` (on ``interface``), and a wireless remote."""

    def __init__(self, domain_id: int, interface: str = "lo", hands: bool = False) -> None:
        from cyclonedds._clayer import ddspy_take
        from cyclonedds.core import Listener
        from cyclonedds.internal import InvalidSample
        from cyclonedds.pub import DataWriter
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import WirelessController_
        from unitree_sdk2py.idl.unitree_hg.msg.dds_ import HandCmd_, LowCmd_, LowState_

        from g1_teleop.tools.virtual_robot import open_dds_participant

        self._take = ddspy_take
        self._invalid = InvalidSample
        self._remote_type = WirelessController_
        self.lowcmds: list[LowCmdSample] = []
        self.lowstate_times: list[float] = []
        self.handcmds: dict[str, list[HandCmdSample]] = {"left": [], "right": []}
        self._domain, self._participant = open_dds_participant(domain_id, interface)
        p = self._participant
        self._remote = DataWriter(p, Topic(p, "rt/wirelesscontroller", WirelessController_))
        self._readers = [
            DataReader(p, Topic(p, "rt/lowcmd", LowCmd_), listener=Listener(on_data_available=self._on_lowcmd)),
            DataReader(p, Topic(p, "rt/lowstate", LowState_),
                       listener=Listener(on_data_available=self._on_lowstate)),
        ]
        if hands:
            self._readers += [DataReader(p, Topic(p, f"rt/dex3/{side}/cmd", HandCmd_), listener=Listener(
                on_data_available=lambda reader, side=side: self._on_handcmd(side, reader))) for side in self.handcmds]

    @property
    def participant(self):
        """The CycloneDDS participant on the robot's domain (for more endpoints)."""
        return self._participant

    def _on_lowcmd(self, reader) -> None:
        t = time.monotonic()
        for data, info in self._take(reader._ref, 64):
            if info.valid_data:
                packed = lowcmd_from_cdr(data)
                f = unpack_lowcmd(packed)
                body = slice(0, NUM_BODY_JOINTS)
                self.lowcmds.append(LowCmdSample(t, f.q[body].astype(float), f.kp[body].astype(float),
                                                 f.kd[body].astype(float), f.mode_machine,
                                                 lowcmd_crc(packed) == f.crc))

    def _on_lowstate(self, reader) -> None:
        t = time.monotonic()
        self.lowstate_times.extend(t for _, info in self._take(reader._ref, 64) if info.valid_data)

    def _on_handcmd(self, side: str, reader) -> None:
        t = time.monotonic()
        for message in reader.take(16):
            if isinstance(message, self._invalid):  # a writer went away
                continue
            values = np.array([(m.mode, m.q, m.kp, m.kd) for m in message.motor_cmd], dtype=float).T
            self.handcmds[side].append(HandCmdSample(t, values[0].astype(int), *values[1:]))

    def press(self, *buttons: str) -> None:
        """The remote's keys: ``buttons`` held (none: all released)."""
        keys = sum(1 << BUTTONS.index(b) for b in buttons)
        self._remote.write(self._remote_type(lx=0.0, ly=0.0, rx=0.0, ry=0.0, keys=keys))

    def close(self) -> None:
        for reader in self._readers:
            reader.set_listener(None)
        del self._readers, self._remote, self._participant, self._domain
