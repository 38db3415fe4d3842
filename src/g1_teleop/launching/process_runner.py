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
from g1_teleop.launching.graph_description import NodeSpec


def node_command(spec: NodeSpec, params_file: Path, namespace: str = "") -> list[str]:
    """The command line that runs one node with its parameters and remappings (or a plain process), under
    ``nice`` when the node yields the CPU (same process id: nice executes the node in its place)."""
    niced = ["nice", "-n", str(spec.nice)] if spec.nice else []
    if not spec.ros:
        return [*niced, sys.executable, "-m", f"g1_teleop.{spec.executable}", *spec.arguments]
    cmd = [*niced, sys.executable, "-m", f"g1_teleop.nodes.{spec.executable}", "--ros-args",
           "-r", f"__node:={spec.name}", "--params-file", str(params_file)]
    if namespace:
        cmd += ["-r", f"__ns:={namespace}"]
    for source, target in spec.remappings:
        cmd += ["-r", f"{source}:={target}"]
    return cmd


@dataclass
class _Child:
    spec: NodeSpec
    process: subprocess.Popen
    pump: threading.Thread


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
        for spec in self.nodes:
            self._children.append(self._spawn(spec))

    def _spawn(self, spec: NodeSpec) -> _Child:
        params_file = Path(self._tmp.name) / f"{spec.name}.yaml"
        params_file.write_text(yaml.safe_dump({"/**": {"ros__parameters": spec.parameters}}))
        process = subprocess.Popen(
            [*self.command_prefix, *node_command(spec, params_file, self.namespace)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**self.env, SCHED_FIFO_ENV: str(spec.priority)} if spec.priority else self.env,
            text=True,
            bufsize=1,
            start_new_session=True,  # our signal handling decides when children stop
        )
        prefix = f"[{spec.name.ljust(max(len(n.name) for n in self.nodes))}] "
        pump = threading.Thread(target=self._pump, args=(process.stdout, prefix), daemon=True)
        pump.start()
        return _Child(spec, process, pump)

    def restart(self, name: str, timeout_s: float = 5.0) -> None:
        """Start one node again, as at start (after it died or was killed; a running one is stopped first):
        the rest of the graph runs on."""
        index = next((k for k, c in enumerate(self._children) if c.spec.name == name), None)
        if index is None:
            raise KeyError(f"no node {name!r} in this graph; nodes: {[c.spec.name for c in self._children]}")
        old = self._children[index]
        if old.process.poll() is None:
            self.kill(name, signal.SIGTERM)
            try:
                old.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.kill(name)
                old.process.wait()
        old.pump.join(timeout=1.0)
        self._children[index] = self._spawn(old.spec)
        self._killed.discard(name)

    def _pump(self, stream: IO[str], prefix: str) -> None:
        for line in stream:
            self.output(prefix + line.rstrip("\n"))

    def alive(self) -> list[str]:
        return [c.spec.name for c in self._children if c.process.poll() is None]

    def check(self) -> str | None:
        """Name the first required node that exited, with its exit code, or None."""
        for child in self._children:
            code = child.process.poll()
            if code is not None and child.spec.required and child.spec.name not in self._killed:
                self.failure = f"required node {child.spec.name} exited with code {code}"
                return self.failure
        return None

    def pid(self, name: str) -> int:
        """The process id of one node (its process group's too: a node's own processes share it)."""
        child = next((c for c in self._children if c.spec.name == name), None)
        if child is None:
            raise KeyError(f"no node {name!r} in this graph; nodes: {[c.spec.name for c in self._children]}")
        return child.process.pid

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to one node's process group, the processes it started included (fault injection: a
        policy that dies, a process starved by SIGSTOP and SIGCONT); from then on its exit is not a failure."""
        pid = self.pid(name)
        self._killed.add(name)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, sig)

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
                    self.output(f"[runner] {child.spec.name} did not stop within {child.spec.stop_timeout_s:g} s of "
                                "SIGTERM; its threads' Python stacks follow, then SIGKILL")
                self.print_stacks([c.spec.name for c in running])
            for child in running:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.process.pid, sig)
            sent = time.monotonic()
            for child in running:
                wait_s = child.spec.stop_timeout_s if sig == signal.SIGTERM else 2.0
                if wait_s > 10.0 and child.process.poll() is None:
                    self.output(f"[runner] waiting up to {wait_s:g} s for {child.spec.name} to finish")
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.process.wait(max(0.0, sent + wait_s - time.monotonic()))
        for child in self._children:
            child.pump.join(timeout=1.0)
        self._tmp.cleanup()
        return {c.spec.name: c.process.poll() for c in self._children}

    def print_stacks(self, names: Sequence[str], settle_s: float = 0.5) -> None:
        """Have ROS nodes print their threads' Python stacks into the output (SIGUSR1, g1_teleop.ros.node_main;
        they run on; other processes are left alone); wait ``settle_s`` for the lines."""
        for child in self._children:
            if child.spec.name in names and child.spec.ros:
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
