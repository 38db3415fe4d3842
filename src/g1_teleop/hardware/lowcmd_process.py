"""hw_bridge's LowCmd process: the robot side of the bridge in a process of its own, and the ROS side's handle on
it. ROS-free.

The process runs :class:`~g1_teleop.hardware.lowcmd_loop.LowCmdLoop`, which owns the robot's DDS. The ROS side
starts it with :class:`LowCmdProcess` and they talk over a :class:`~g1_teleop.hardware.bridge_link.Link`.

Why a process of its own: rclpy holds Python's GIL while it publishes, and a DDS publish can block (Fast
DDS's shared memory, a subscriber killed: about a second, measured). In one process that stopped every
Python thread, the LowCmd loop and its damping included (seen in the real.launch test). Here a ROS side that
stands still only starves the commands: the loop damps on their timeout, and the remote's e-stop still acts.

It ends on :class:`~g1_teleop.hardware.bridge_link.Stop`, on SIGTERM, or when the ROS side's end of the link closes
(hw_bridge died): the loop e-stops, writes damping for ``lowcmd_loop.SHUTDOWN_DAMP_S`` and exits. SIGINT is ignored
(a terminal's Ctrl-C reaches the whole process group; the ROS side then says Stop).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

from g1_teleop.core.realtime_priority import use_fifo_scheduling
from g1_teleop.hardware import bridge_link as msg
from g1_teleop.hardware.bridge_config import Setup
from g1_teleop.hardware.bridge_link import Link, LinkClosed
from g1_teleop.hardware.bridge_safety import OperatorEvent
from g1_teleop.hardware.robot_dds import RobotDdsUnavailable

START_TIMEOUT_S = 60.0  # the ROS side's wait for Ready (imports and DDS discovery on a loaded machine)
GIL_SWITCH_INTERVAL_S = 0.0005  # so a thread waits at most this long for another (Python's default: 5 ms)


class StartError(RuntimeError):
    """The LowCmd process could not start; the message says what to do."""


@dataclass
class _Waiting:
    """A request on its way: the link's reader sets ``answer``, then ``done``."""

    done: threading.Event = field(default_factory=threading.Event)
    answer: msg.Answer | None = None


class LowCmdProcess:
    """The ROS side's handle: starts the LowCmd process with ``setup`` and waits until its loop runs (StartError
    says why not). What the process sends goes to ``on_message`` in the link's reader thread (the reports and
    problems it sent while starting too), except the answers, which :meth:`request` waits for; if the process
    exits, ``on_message`` gets a :class:`~g1_teleop.hardware.bridge_link.Failed`."""

    def __init__(self, setup: Setup, on_message: Callable[[object], None]) -> None:
        self._on_message = on_message
        self._closing = False
        self._waiting: dict[int, _Waiting] = {}  # by request id
        self._request_ids = itertools.count(1)
        self.process, self.link, early = _start(setup)
        self.pid = self.process.pid
        for message in early:
            on_message(message)
        self._reader = threading.Thread(target=self._read, name="bridge_link", daemon=True)
        self._reader.start()

    @property
    def dropped(self) -> int:
        """Messages not sent because the LowCmd process was not reading."""
        return self.link.dropped

    def send(self, message: object) -> None:
        """Send without waiting: a message the process cannot take now (it stands still) is dropped and counted,
        which leaves the loop with a stale command (it damps). If it has exited, ``on_message`` says so."""
        with contextlib.suppress(LinkClosed):
            self.link.send(message, block=False)

    def request(self, event: OperatorEvent, timeout_s: float) -> msg.Answer | None:
        """Send an operator request and wait for the loop's answer (None: none within ``timeout_s``)."""
        request_id = next(self._request_ids)
        waiting = self._waiting[request_id] = _Waiting()
        self.send(msg.Request(event, request_id))
        waiting.done.wait(timeout=timeout_s)
        del self._waiting[request_id]
        return waiting.answer

    def _read(self) -> None:
        while True:
            try:
                message = self.link.receive()
            except LinkClosed:
                if not self._closing:
                    self._on_message(msg.Failed(f"the LowCmd process exited (code {self.process.wait()}): the "
                                                "robot is no longer commanded; its output is above"))
                return
            except OSError:  # the link was closed by this process: shutting down
                return
            if isinstance(message, msg.Answer):
                waiting = self._waiting.get(message.request_id)
                if waiting is not None:
                    waiting.answer = message
                    waiting.done.set()
            else:
                self._on_message(message)

    def stop(self, timeout_s: float) -> None:
        """Stop the process (it damps, then exits; killed after ``timeout_s``) and the link's reader. The
        reader hands on what arrives until the process has exited."""
        self._closing = True
        self.send(msg.Stop())
        try:
            self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reader.join(timeout=1.0)
        self.link.close()


def _start(setup: Setup) -> tuple[subprocess.Popen, Link, list[object]]:
    """Start the LowCmd process and wait until its loop runs; also returns the reports and problems it sent
    before (states are dropped). Raises StartError with its reason."""
    link, theirs = Link.pair()
    process = subprocess.Popen([sys.executable, "-m", "g1_teleop.hardware.lowcmd_process", str(theirs.fileno())],
                               pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)
    theirs.close()
    early: list[object] = []
    reply = None
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        link.send(setup)
        while not isinstance(reply, msg.Ready | msg.Failed) and time.monotonic() < deadline:
            reply = link.receive(max(0.0, deadline - time.monotonic()))
            if not isinstance(reply, msg.Ready | msg.Failed | msg.RobotState | msg.HandState | None):
                early.append(reply)
    except LinkClosed:
        reply = None
    if isinstance(reply, msg.Ready):
        return process, link, early
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    process.wait()
    link.close()
    if isinstance(reply, msg.Failed):
        raise StartError(reply.reason)
    if process.returncode is not None and process.returncode > 0:
        raise StartError(f"the LowCmd process exited with code {process.returncode} while starting (its output "
                         "is above)")
    raise StartError(f"the LowCmd process did not start within {START_TIMEOUT_S:g} s (its output is above)")


def main(fd: int) -> int:
    """The LowCmd process: read the Setup from the link, open the robot's DDS, run the loop."""
    from g1_teleop.hardware.lowcmd_loop import LowCmdLoop

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    link = Link(socket.socket(fileno=fd))
    try:
        setup = link.receive()
    except LinkClosed:
        return 1
    assert isinstance(setup, Setup)  # the ROS side's first message
    try:
        loop = LowCmdLoop(link, setup)
    except Exception as exc:  # a reason for the operator: a missing SDK, a wrong interface, a bad model
        link.send(msg.Failed(str(exc) if isinstance(exc, RobotDdsUnavailable | ValueError | OSError)
                             else "".join(traceback.format_exception(exc))))
        return 2
    priority = setup.bridge.lowcmd_priority  # (once the robot DDS's threads are started)
    if priority and (refused := use_fifo_scheduling(priority, "the LowCmd process")) is not None:
        loop.problem("sched_fifo", refused)
    signal.signal(signal.SIGTERM, lambda *_: loop.stop("bridge shutdown"))
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)  # the loop waits at most this long for another thread (Dex3's)
    link.send(msg.Ready(os.getpid()))
    try:
        loop.run()
    except Exception as exc:  # a bug: damp once, then tell the ROS side (it raises it)
        loop.damp_once()
        with contextlib.suppress(LinkClosed):
            link.send(msg.Failed("the LowCmd loop failed (one damping LowCmd was attempted):\n"
                                 + "".join(traceback.format_exception(exc))), block=False)
        return 1
    finally:
        loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
