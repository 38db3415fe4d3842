"""A graph's cores reach its processes, every thread of each: a node that keeps cores (``cpus``, as real.yaml's
``control_cpus`` gives the command chain) runs on them only, and a process that names none (here the virtual robot,
a plain process) on the cores left only. The pip runner starts each under ``taskset -c``."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from g1_teleop.core.cpu_affinity import cpu_list, parse_cpu_list, usable_cpus
from g1_teleop.launching.graph_description import load_graph
from g1_teleop.launching.process_runner import GraphProcesses

pytestmark = pytest.mark.integration


def _threads_cpus(pid: int) -> set[frozenset[int]]:
    """The cores each thread of a process may run on (its Cpus_allowed_list)."""
    out = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines()
        except (FileNotFoundError, ProcessLookupError):  # (a thread that ended meanwhile)
            continue
        line = next(line for line in status if line.startswith("Cpus_allowed_list:"))
        out.add(parse_cpu_list(line.split(":", 1)[1].strip()))
    return out


def test_a_node_keeps_its_cores_and_the_other_processes_keep_off_them(tmp_path, ros_domain):
    usable = usable_cpus()
    if len(usable) < 2:
        pytest.skip(f"one usable core ({cpu_list(usable)}): there is none to keep apart")
    kept = max(usable)
    path = tmp_path / "graph.yaml"
    path.write_text(
        "nodes:\n"
        "  - executable: tools.virtual_robot\n    name: virtual_robot\n    ros: false\n"
        f"    arguments: ['--domain-id', '{ros_domain % 100 + 1}', '--interface', 'lo', '--gantry']\n"
        f"  - executable: robot_state\n    cpus: '{kept}'\n")
    lines: list[str] = []
    graph = GraphProcesses(load_graph(str(path)).resolve(), output=lines.append)
    graph.start()
    try:
        deadline = time.monotonic() + 60.0
        while not (any("virtual_robot ready" in line for line in lines)
                   and any("frames rooted at pelvis" in line for line in lines)):
            assert graph.check() is None and time.monotonic() < deadline, "\n".join(lines[-20:])
            time.sleep(0.1)
        # every thread, DDS's and MuJoCo's started after the process's start included
        assert _threads_cpus(graph.pid("robot_state")) == {frozenset({kept})}, "\n".join(lines[-20:])
        assert _threads_cpus(graph.pid("virtual_robot")) == {usable - {kept}}, "\n".join(lines[-20:])
        assert graph.check() is None
    finally:
        graph.stop()
