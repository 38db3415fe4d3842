"""The pip launcher (`g1-teleop launch`): fail fast when a required node dies, forward Ctrl-C, and the
main job's clear errors for bad input."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from g1_teleop.launching.graph_description import load_graph, processes
from g1_teleop.launching.process_runner import GraphProcesses

pytestmark = pytest.mark.integration


def g1_teleop(*args: str) -> list[str]:
    return [sys.executable, "-m", "g1_teleop.tools.cli", *args]


def test_a_required_node_that_dies_stops_the_graph(ros_domain, tmp_path):
    proc = subprocess.run(g1_teleop("launch", "sim", f"scenario:={tmp_path / 'missing.yaml'}"),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout
    assert ("[runner] container control (sim_bridge, policy, retarget, xr_input) exited with code 2: stopping the "
            "graph") in proc.stdout
    assert f"[xr_input]: cannot start: {tmp_path / 'missing.yaml'}: cannot read" in proc.stdout
    assert "Traceback" not in proc.stdout


def test_ctrl_c_stops_every_node_cleanly(ros_domain):
    proc = subprocess.Popen(g1_teleop("launch", "sim"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and sum("ready" in line or "scenario" in line for line in lines) < 3:
        lines.append(proc.stdout.readline())
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    lines.append(out)
    text = "".join(lines)
    assert proc.returncode == 0, text
    assert "did not exit cleanly" not in text and "Traceback" not in text


def test_a_killed_launcher_takes_its_nodes_with_it(ros_domain):
    """SIGKILL cannot be forwarded: the nodes stop by themselves when their launcher is gone (no orphaned
    bridge or simulator keeps running)."""
    proc = subprocess.Popen(g1_teleop("launch", "sim"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and sum("ready" in line or "scenario" in line for line in lines) < 3:
        lines.append(proc.stdout.readline())
    children = [int(pid) for pid in subprocess.run(["ps", "-o", "pid=", "--ppid", str(proc.pid)], capture_output=True,
                                                   text=True).stdout.split()]
    assert len(children) == len(processes(load_graph("sim").resolve())), "".join(lines)  # (a container: one)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 15
    alive = children
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [pid for pid in children if Path(f"/proc/{pid}").exists()
                 and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]]
    assert not alive, f"nodes still running after their launcher was killed: {[command_line(pid) for pid in alive]}"


def command_line(pid: int) -> str:
    """The process's command line (its first 200 characters), for a failure message."""
    try:
        return f"{pid}: " + Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    except OSError:
        return f"{pid}: gone"


def test_sim_job_rejects_a_bad_scenario_before_starting(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("keyframes: []\n")
    proc = subprocess.run(g1_teleop("sim", "--scenario", str(bad), "--out", str(tmp_path / "run")),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"g1-teleop sim: {bad}"), proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_node_prints_where_it_is_and_runs_on(ros_domain):
    """What the runner shows for a node that does not stop on SIGTERM before it kills it: each thread's Python
    stack (SIGUSR1); the node keeps running and still stops cleanly."""
    xr_input = next(spec for spec in load_graph("sim").resolve() if spec.name == "xr_input")
    lines: list[str] = []
    graph = GraphProcesses([xr_input], output=lines.append)
    graph.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any("scenario" in line for line in lines):
            time.sleep(0.1)
        graph.print_stacks(["xr_input"])
        text = "\n".join(lines)
        assert "(most recent call first)" in text and "g1_teleop/ros/node_main.py" in text, text
        assert graph.alive() == ["xr_input"], text
    finally:
        codes = graph.stop()
    assert codes == {"xr_input": 0}, "\n".join(lines)
