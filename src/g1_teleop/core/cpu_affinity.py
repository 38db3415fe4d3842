"""CPU lists, as ``taskset -c`` and the kernel's ``Cpus_allowed_list`` write them ("1", "0-3,6"). ROS-free.

A graph keeps its command chain on cores of its own (g1_teleop.launching.graph_description): a Python process that
sleeps 20 ms between ticks finds its code and data evicted from the core's caches by whatever ran there meanwhile,
and runs its tick cold, two to four times slower than hot (measured here, the built-in controller's step: 0.3–0.6 ms
back to back, 1.2 ms after a 20 ms sleep, and 0.6 ms after the same sleep when the step ran once more first).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

_RANGE = re.compile(r"(\d+)(?:-(\d+))?")


def parse_cpu_list(text: str) -> frozenset[int]:
    """The cores of a CPU list ("" → none); ValueError names what is wrong with it."""
    cpus: set[int] = set()
    for part in text.replace(" ", "").split(",") if text.strip() else ():
        match = _RANGE.fullmatch(part)
        if match is None:
            raise ValueError(f"{text!r} is not a CPU list ({part!r}: use core numbers and ranges, e.g. 1 or 2-3,6)")
        first, last = int(match.group(1)), int(match.group(2) or match.group(1))
        if last < first:
            raise ValueError(f"{text!r} is not a CPU list (range {part!r} runs backwards)")
        cpus.update(range(first, last + 1))
    return frozenset(cpus)


def cpu_list(cpus: Iterable[int]) -> str:
    """The shortest CPU list of ``cpus`` ("0-2,5")."""
    ranges: list[list[int]] = []
    for cpu in sorted(set(cpus)):
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


def usable_cpus() -> frozenset[int]:
    """The cores this process may run on (its affinity: what it starts inherits it)."""
    return frozenset(os.sched_getaffinity(0))


def isolated_cpus() -> frozenset[int]:
    """The cores the kernel keeps out of every process's default affinity (``isolcpus=``; none when not told):
    a process runs there only when put there, as a real-time loop is."""
    try:
        return parse_cpu_list(Path("/sys/devices/system/cpu/isolated").read_text().strip())
    except (OSError, ValueError):
        return frozenset()
