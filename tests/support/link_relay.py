"""A network link with a one-way delay and random loss between two network namespaces: the netem this kernel lacks.

Each namespace gets a TUN device (layer 3, no packet information header) with its address; one thread of this
process reads the IP packets each side's kernel routes into its device, drops each with probability ``loss`` and
writes the others into the other side's device ``delay_s`` later, in order. A device set down (``ip link set … down``
in its namespace) is a host that vanished: its kernel routes nothing into it and what arrives for it is dropped.
Root is needed (``setns``, TUN devices).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import heapq
import os
import random
import selectors
import struct
import subprocess
import threading
import time
from dataclasses import dataclass, field

_TUNSETIFF = 0x400454CA  # linux/if_tun.h
_IFF_TUN, _IFF_NO_PI = 0x0001, 0x1000
_CLONE_NEWNET = 0x40000000  # linux/sched.h


@dataclass(frozen=True)
class LinkEnd:
    """One host: its network namespace (``ip netns`` name), TUN device name and address with prefix (10.1.2.1/24)."""

    netns: str
    device: str
    address: str


@dataclass
class LinkCounts:
    """Packets per direction (``"a→b"``, ``"b→a"``): read from the sender's device, and dropped on the way."""

    read: dict[str, int] = field(default_factory=lambda: {"a→b": 0, "b→a": 0})
    dropped: dict[str, int] = field(default_factory=lambda: {"a→b": 0, "b→a": 0})

    def loss(self, direction: str) -> float:
        return self.dropped[direction] / max(1, self.read[direction])


def _open_tun_in(netns: str, device: str) -> int:
    """A TUN device named ``device`` made in network namespace ``netns``; returns its file descriptor."""
    libc = ctypes.CDLL(None, use_errno=True)
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/var/run/netns/{netns}", os.O_RDONLY)
    try:
        if libc.setns(target, _CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {netns}")
        try:
            fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
            fcntl.ioctl(fd, _TUNSETIFF, struct.pack("16sH", device.encode(), _IFF_TUN | _IFF_NO_PI))
        finally:
            if libc.setns(home, _CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back")
    finally:
        os.close(home)
        os.close(target)
    return fd


class LinkRelay:
    """Joins ``a`` and ``b`` with ``delay_s`` each way and independent packet loss ``loss`` (0–1), seeded."""

    def __init__(self, a: LinkEnd, b: LinkEnd, delay_s: float, loss: float, seed: int = 0) -> None:
        if not 0.0 <= loss < 1.0 or delay_s < 0.0:
            raise ValueError(f"loss {loss} must be in [0, 1) and delay_s {delay_s} ≥ 0")
        self.ends, self.delay_s, self.loss = (a, b), delay_s, loss
        self.counts = LinkCounts()
        self._random = random.Random(seed)
        self._fds: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="link_relay", daemon=True)

    def start(self) -> LinkRelay:
        for end in self.ends:
            self._fds.append(_open_tun_in(end.netns, end.device))
            for command in (("addr", "add", end.address, "dev", end.device),
                            ("link", "set", end.device, "multicast", "off", "up")):
                subprocess.run(["ip", "-n", end.netns, *command], check=True, capture_output=True, text=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)
        for fd in self._fds:
            os.close(fd)

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        for side, fd in enumerate(self._fds):
            selector.register(fd, selectors.EVENT_READ, side)
        due: list[tuple[float, int, int, bytes]] = []  # (time.monotonic() to write, order, destination fd, packet)
        order = 0
        while not self._stop.is_set():
            wait = min(0.05, max(0.0, due[0][0] - time.monotonic())) if due else 0.05
            for key, _ in selector.select(wait):
                side = key.data
                direction = "a→b" if side == 0 else "b→a"
                while True:
                    try:
                        packet = os.read(self._fds[side], 65536)
                    except BlockingIOError:
                        break
                    self.counts.read[direction] += 1
                    if self._random.random() < self.loss:
                        self.counts.dropped[direction] += 1
                        continue
                    order += 1
                    heapq.heappush(due, (time.monotonic() + self.delay_s, order, self._fds[1 - side], packet))
            now = time.monotonic()
            while due and due[0][0] <= now:
                _, _, fd, packet = heapq.heappop(due)
                with contextlib.suppress(OSError):  # the receiving device is down: its host vanished
                    os.write(fd, packet)
        selector.close()
