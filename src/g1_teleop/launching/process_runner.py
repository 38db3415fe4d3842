"""A thin process supervisor for pip environments (no ros2 launch there).

Starts each node of a resolved graph as its own process (``python -m g1_teleop.nodes.EXE``), prefixes
its output with the node name, stops every node on SIGINT/SIGTERM, and stops everything when a required
node dies. Nodes are stopped with SIGTERM: rclpy shuts down cleanly on it, and a node still importing its
libraries ends silently (a SIGINT there would print a KeyboardInterrupt traceback).
ROS-free: nodes get their parameters through a ``--params-file``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import yaml

from g1_teleop.core.process_lifetime import RUNNER_PID_ENV
from g1_teleop.core.realtime_priority import SCHED_FIFO_ENV
from g1_teleop.launching.dds_discovery import discovery_environment
from g1_teleop.launching.graph_description import NodeSpec, process_name, processes


def process_command(members: Sequence[NodeSpec], params_file: Path, namespace: str = "") -> list[str]:
    """The command line of one process of the graph: a node (:func:`node_command`) or a container's nodes
    (:func:`container_command`); ``params_file`` holds :func:`params_document`."""
    return node_command(members[0], params_file, namespace) if len(members) == 1 else \
        container_command(members, params_file, namespace)


def params_document(members: Sequence[NodeSpec]) -> dict:
    """The params file of one process: a node's parameters, or a section for each node of a container."""
    if len(members) == 1:
        return {"/**": {"ros__parameters": members[0].parameters}}
    return {f"/**/{m.name}": {"ros__parameters": m.parameters} for m in members}


def process_prefix(spec: NodeSpec) -> list[str]:
    """What a process's command line starts with: ``nice`` when it yields the CPU, ``taskset`` when it keeps to some
    cores (each executes the next in its place: the process id stays the node's)."""
    niced = ["nice", "-n", str(spec.nice)] if spec.nice else []
    return [*niced, *(["taskset", "-c", spec.cpus] if spec.cpus else [])]


def container_command(members: Sequence[NodeSpec], params_file: Path, namespace: str = "") -> list[str]:
    """The command line that runs a container's nodes in one process (g1_teleop.nodes.container), each node's name
    and remappings addressed to it."""
    cmd = [*process_prefix(members[0]), sys.executable, "-m", "g1_teleop.nodes.container",
           *(m.executable for m in members), "--ros-args", "--params-file", str(params_file)]
    if namespace:
        cmd += ["-r", f"__ns:={namespace}"]
    for m in members:
        if m.name != m.executable:  # (each node's own name is its executable's)
            cmd += ["-r", f"{m.executable}:__node:={m.name}"]
        for source, target in m.remappings:
            cmd += ["-r", f"{m.name}:{source}:={target}"]
    return cmd


def node_command(spec: NodeSpec, params_file: Path, namespace: str = "") -> list[str]:
    """The command line that runs one node with its parameters and remappings (or a plain process), after its
    :func:`process_prefix`."""
    if not spec.ros:
        return [*process_prefix(spec), sys.executable, "-m", f"g1_teleop.{spec.executable}", *spec.arguments]
    cmd = [*process_prefix(spec), sys.executable, "-m", f"g1_teleop.nodes.{spec.executable}", "--ros-args",
           "-r", f"__node:={spec.name}", "--params-file", str(params_file)]
    if namespace:
        cmd += ["-r", f"__ns:={namespace}"]
    for source, target in spec.remappings:
        cmd += ["-r", f"{source}:={target}"]
    return cmd


@dataclass
class _Child:
    """One process of the graph: a node, or a container's nodes."""

    members: tuple[NodeSpec, ...]
    process: subprocess.Popen
    pump: threading.Thread

    @property
    def name(self) -> str:
        return process_name(self.members)

    @property
    def stop_timeout_s(self) -> float:
        return max(m.stop_timeout_s for m in self.members)


class GraphProcesses:
    """The running processes of one graph."""

    def __init__(
        self,
        nodes: Sequence[NodeSpec],
        *,
        namespace: str = "",
        env: dict[str, str] | None = None,
        output: Callable[[str], None] | None = None,
        command_prefix: Sequence[str] = (),
    ) -> None:
        """``command_prefix`` goes before every node's command line, e.g. ``ip netns exec NAME`` to run the graph in
        a network namespace (a second host)."""
        self.nodes = list(nodes)
        self.namespace = namespace
        self.command_prefix = list(command_prefix)
        self.env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1", RUNNER_PID_ENV: str(os.getpid())}
        self.env.update(discovery_environment(self.env))
        self.output = output or (lambda line: print(line, flush=True))
        self._children: list[_Child] = []
        self._killed: set[str] = set()  # nodes stopped on purpose (fault injection): their exit is no failure
        self._tmp = tempfile.TemporaryDirectory(prefix="g1_teleop_params_")
        self.failure: str | None = None

    def start(self) -> None:
        for members in processes(self.nodes):
            self._children.append(self._spawn(members))

    def _spawn(self, members: tuple[NodeSpec, ...]) -> _Child:
        spec = members[0]
        name = process_name(members)
        params_file = Path(self._tmp.name) / f"{name}.yaml"
        params_file.write_text(yaml.safe_dump(params_document(members)))
        process = subprocess.Popen(
            [*self.command_prefix, *process_command(members, params_file, self.namespace)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**self.env, SCHED_FIFO_ENV: str(spec.priority)} if spec.priority else self.env,
            text=True,
            bufsize=1,
            start_new_session=True,  # our signal handling decides when children stop
        )
        width = max(len(process_name(m)) for m in processes(self.nodes))
        pump = threading.Thread(target=self._pump, args=(process.stdout, f"[{name.ljust(width)}] "), daemon=True)
        pump.start()
        return _Child(members, process, pump)

    def _child(self, name: str) -> _Child:
        """The process of node ``name`` (or of container ``name``)."""
        child = next((c for c in self._children if name in (c.name, *(m.name for m in c.members))), None)
        if child is None:
            raise KeyError(f"no node {name!r} in this graph; nodes: {[n.name for n in self.nodes]}")
        return child

    def restart(self, name: str, timeout_s: float = 5.0) -> None:
        """Start one node again, as at start (after it died or was killed; a running one is stopped first):
        the rest of the graph runs on. A container's node: the container's nodes, all of them."""
        old = self._child(name)
        if old.process.poll() is None:
            self.kill(name, signal.SIGTERM)
            try:
                old.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.kill(name)
                old.process.wait()
        old.pump.join(timeout=1.0)
        self._children[self._children.index(old)] = self._spawn(old.members)
        self._killed.difference_update(m.name for m in old.members)

    def _pump(self, stream: IO[str], prefix: str) -> None:
        for line in stream:
            self.output(prefix + line.rstrip("\n"))

    def alive(self) -> list[str]:
        """The nodes whose process runs."""
        return [m.name for c in self._children if c.process.poll() is None for m in c.members]

    def check(self) -> str | None:
        """Name the first required node that exited, with its exit code, or None."""
        for child in self._children:
            code = child.process.poll()
            required = [m.name for m in child.members if m.required and m.name not in self._killed]
            if code is not None and required:
                what = f"required node {child.name}" if len(child.members) == 1 else \
                    f"container {child.name} ({', '.join(m.name for m in child.members)})"
                self.failure = f"{what} exited with code {code}"
                return self.failure
        return None

    def pid(self, name: str) -> int:
        """The process id of one node, a container's for its nodes (its process group's too: a node's own
        processes share it)."""
        return self._child(name).process.pid

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to one node's process group, the processes it started included (fault injection: a
        policy that dies, a process starved by SIGSTOP and SIGCONT; a container's node: the container's nodes);
        from then on its exit is not a failure."""
        child = self._child(name)
        self._killed.update(m.name for m in child.members)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.process.pid, sig)

    def stop(self) -> dict[str, int | None]:
        """SIGTERM every node, then SIGKILL what is left after its ``stop_timeout_s`` (first printing where a
        node is stuck: SIGUSR1 makes a node print its Python stacks, g1_teleop.ros.node_main); return the exit
        codes."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            running = [c for c in self._children if c.process.poll() is None]
            if not running:
                break
            if sig == signal.SIGKILL:
                for child in running:
                    self.output(f"[runner] {child.name} did not stop within {child.stop_timeout_s:g} s of "
                                "SIGTERM; its threads' Python stacks follow, then SIGKILL")
                self.print_stacks([c.name for c in running])
            for child in running:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.process.pid, sig)
            sent = time.monotonic()
            for child in running:
                wait_s = child.stop_timeout_s if sig == signal.SIGTERM else 2.0
                if wait_s > 10.0 and child.process.poll() is None:
                    self.output(f"[runner] waiting up to {wait_s:g} s for {child.name} to finish")
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.process.wait(max(0.0, sent + wait_s - time.monotonic()))
        for child in self._children:
            child.pump.join(timeout=1.0)
        self._tmp.cleanup()
        return {m.name: c.process.poll() for c in self._children for m in c.members}

    def print_stacks(self, names: Sequence[str], settle_s: float = 0.5) -> None:
        """Have ROS nodes print their threads' Python stacks into the output (SIGUSR1, g1_teleop.ros.node_main;
        they run on; other processes are left alone); wait ``settle_s`` for the lines."""
        for child in self._children:
            if set(names) & {child.name, *(m.name for m in child.members)} and child.members[0].ros:
                with contextlib.suppress(ProcessLookupError):
                    child.process.send_signal(signal.SIGUSR1)
        time.sleep(settle_s)

    def wait(self, poll_s: float = 0.2) -> int:
        """Run until a required node dies or a signal arrives; stop everything; return an exit code."""
        stop = threading.Event()
        previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            while not stop.wait(poll_s):
                if self.check():
                    self.output(f"[runner] {self.failure}: stopping the graph")
                    break
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            codes = self.stop()
        unclean = {name: code for name, code in codes.items() if code not in (0, -signal.SIGTERM)}
        if unclean and not self.failure:
            self.output(f"[runner] nodes that did not exit cleanly: {unclean}")
        return 1 if self.failure else 0
