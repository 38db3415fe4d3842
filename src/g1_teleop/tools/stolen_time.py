"""The host's steal time: how much CPU time the host of a virtual machine gave to others while this machine's cores
were ready to run (Linux's ``steal`` in /proc/stat, through psutil; 0 on bare metal). The context of a timing figure
on a shared machine, where a late tick may be the host's, not the code's."""

from __future__ import annotations

import time

import psutil


class StolenTime:
    """The steal time summed over the cores, from one reading to the next."""

    def __init__(self) -> None:
        self._mono_s, self._steal_s = time.monotonic(), _steal_s()

    def cpu_percent(self) -> float:
        """The steal time since the last reading (construction or call), in % of one core over that wall time (100:
        a whole core's worth of time taken by the host)."""
        mono_s, steal_s = time.monotonic(), _steal_s()
        wall_s = mono_s - self._mono_s
        percent = 100.0 * (steal_s - self._steal_s) / wall_s if wall_s > 0 else 0.0
        self._mono_s, self._steal_s = mono_s, steal_s
        return round(percent, 2)


def _steal_s() -> float:
    return float(getattr(psutil.cpu_times(), "steal", 0.0))  # (the field exists on Linux only)
