"""The link between hw_bridge's ROS side and its LowCmd process: the messages and the socket. ROS-free.

The two processes share one AF_UNIX SOCK_SEQPACKET socket pair: each message is one pickled record, sent
and received whole, in order. Neither side waits on a send (:meth:`Link.send` with ``block=False`` drops the
message and says so when the other side has stopped reading), so a ROS side that stands still cannot stop
the LowCmd loop; the ROS side waits only in its own reader thread.

Times are ``time.monotonic()`` seconds (CLOCK_MONOTONIC: one clock for every process of the machine).
"""

from __future__ import annotations

import pickle
import select
import socket
from dataclasses import dataclass

import numpy as np

from g1_teleop.hardware.bridge_safety import Notice, OperatorEvent, SafetyState, Transition
from g1_teleop.hardware.dex3 import HandTarget
from g1_teleop.hardware.wireless_remote import WirelessRemote

MAX_MESSAGE_BYTES = 65536  # larger than any message below (a 29-joint command pickles to ~2 kB)


# -- ROS side → LowCmd process (first bridge_config.Setup; then bridge_safety.CommandSample: a valid
#    joint_command, and these) -----------------------------------------------------------------------
@dataclass(frozen=True)
class Request:
    """An operator event; ``request_id`` > 0 wants an :class:`Answer` (a service waits for it)."""

    event: OperatorEvent
    request_id: int = 0


@dataclass(frozen=True)
class HandCommand:
    """A valid teleop/hand_target for one hand ("left" or "right")."""

    side: str
    target: HandTarget


@dataclass(frozen=True)
class CommandPublishers:
    """How many publishers joint_command has (sent on each change): 0 after a policy left means it is gone."""

    count: int


@dataclass(frozen=True)
class Stop:
    """Damp, then exit (the bridge shuts down)."""


# -- LowCmd process → ROS side ----------------------------------------------------------------------
@dataclass(frozen=True)
class Ready:
    """The robot's DDS is open and the loop runs; ``pid`` is the LowCmd process's."""

    pid: int


@dataclass(frozen=True)
class Failed:
    """The LowCmd process could not start (``reason`` says what to do) or its loop failed."""

    reason: str


@dataclass(frozen=True)
class Answer:
    request_id: int
    success: bool
    message: str


@dataclass(frozen=True)
class Report:
    """What the safety state machine did this tick (transitions, notices) and the state after it."""

    state: SafetyState
    transitions: tuple[Transition, ...]
    notices: tuple[Notice, ...]


@dataclass(frozen=True, eq=False)
class RobotState:
    """One LowState for joint_states and imu (``imu``: the IMU record of LowState, None when not due) and
    the wireless remote for joy (None when not due), decimated by the LowCmd process."""

    q: np.ndarray  # rad, motor order
    dq: np.ndarray  # rad/s
    tau: np.ndarray  # N·m (tau_est)
    imu: np.ndarray | None
    remote: WirelessRemote | None


@dataclass(frozen=True, eq=False)
class HandState:
    side: str
    q: np.ndarray
    dq: np.ndarray
    tau: np.ndarray


@dataclass(frozen=True)
class Problem:
    """A problem of a kind (logged once by the ROS side, counted after)."""

    kind: str
    message: str


@dataclass(frozen=True)
class Figures:
    """The LowCmd process's diagnostic values (counters, loop timing, state), about once a second."""

    values: dict[str, object]


class LinkClosed(ConnectionError):
    """The other process closed its end (it exited)."""


class Link:
    """One end of the socket pair."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.dropped = 0  # messages not sent because the other side's buffer was full

    @staticmethod
    def pair() -> tuple[Link, socket.socket]:
        """This process's end and the socket to hand to the other process (inheritable)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        theirs.set_inheritable(True)
        return Link(ours), theirs

    def send(self, message: object, block: bool = True) -> bool:
        """Send one message; without ``block``, a full buffer drops it (returns False, counts it).
        Raises LinkClosed when the other end has gone."""
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.sock.send(data, 0 if block else socket.MSG_DONTWAIT)
        except BlockingIOError:
            self.dropped += 1
            return False
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise LinkClosed("the other process closed the link") from exc
        return True

    def receive(self, timeout_s: float | None = None) -> object | None:
        """The next message; None if none arrived within ``timeout_s`` (0: do not wait; None: wait as
        long as it takes). Raises LinkClosed at the end of the stream."""
        if timeout_s is not None:
            ready, _, _ = select.select([self.sock], [], [], timeout_s)
            if not ready:
                return None
        try:
            data = self.sock.recv(MAX_MESSAGE_BYTES, socket.MSG_DONTWAIT if timeout_s == 0 else 0)
        except BlockingIOError:
            return None
        except ConnectionResetError as exc:
            raise LinkClosed("the other process closed the link") from exc
        if not data:
            raise LinkClosed("the other process closed the link")
        return pickle.loads(data)

    def close(self) -> None:
        self.sock.close()

