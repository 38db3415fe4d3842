"""A listener on the robot's own DDS topics, for tests and benchmarks of the bridge. ROS-free.

It timestamps every rt/lowcmd and rt/lowstate sample on arrival (time.monotonic()), decodes the LowCmds
(:mod:`g1_teleop.hardware.lowcmd`, CRC checked), with ``hands`` also every rt/dex3/{left,right}/cmd, and plays a
wireless remote on rt/wirelesscontroller, which the virtual robot copies into LowState.wireless_remote.
Needs unitree_sdk2py (CycloneDDS 0.10.x): :mod:`g1_teleop.hardware.robot_dds`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from g1_teleop.core.dex3_description import SIDES
from g1_teleop.hardware.lowcmd import NUM_BODY_JOINTS, lowcmd_crc, lowcmd_from_cdr, unpack_lowcmd
from g1_teleop.hardware.robot_dds import TOPIC_LOWCMD, TOPIC_LOWSTATE, TOPIC_WIRELESS_CONTROLLER, RobotDds, topic_type
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
        self.lowcmds: list[LowCmdSample] = []
        self.lowstate_times: list[float] = []
        self.handcmds: dict[str, list[HandCmdSample]] = {side: [] for side in SIDES}
        self.dds = RobotDds(domain_id, interface)  # (for more endpoints on the robot's domain)
        self._remote_type = topic_type(TOPIC_WIRELESS_CONTROLLER)
        self._remote = self.dds.writer(TOPIC_WIRELESS_CONTROLLER)
        self.dds.raw_reader(TOPIC_LOWCMD, on_samples=self._on_lowcmds)
        self.dds.raw_reader(TOPIC_LOWSTATE, on_samples=self._on_lowstates)
        if hands:
            for side in SIDES:
                self.dds.reader(f"rt/dex3/{side}/cmd", on_samples=functools.partial(self._on_handcmds, side))

    def _on_lowcmds(self, samples: list[bytes], t: float) -> None:
        for sample in samples:
            packed = lowcmd_from_cdr(sample)
            f = unpack_lowcmd(packed)
            body = slice(0, NUM_BODY_JOINTS)
            self.lowcmds.append(LowCmdSample(t, f.q[body].astype(float), f.kp[body].astype(float),
                                             f.kd[body].astype(float), f.mode_machine, lowcmd_crc(packed) == f.crc))

    def _on_lowstates(self, samples: list[bytes], t: float) -> None:
        self.lowstate_times.extend(t for _ in samples)

    def _on_handcmds(self, side: str, messages: list[Any], t: float) -> None:
        for message in messages:
            values = np.array([(m.mode, m.q, m.kp, m.kd) for m in message.motor_cmd], dtype=float).T
            self.handcmds[side].append(HandCmdSample(t, values[0].astype(int), *values[1:]))

    def press(self, *buttons: str) -> None:
        """The remote's keys: ``buttons`` held (none: all released)."""
        keys = sum(1 << BUTTONS.index(b) for b in buttons)
        self._remote.write(self._remote_type(lx=0.0, ly=0.0, rx=0.0, ry=0.0, keys=keys))

    def close(self) -> None:
        self.dds.close()
