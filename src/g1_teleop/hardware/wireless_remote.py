"""The G1's wireless remote as LowState carries it (``wireless_remote``, 40 bytes), ROS-free.

Layout (little-endian): bytes 0–1 head, 2–3 keys (uint16 bitfield, bit i = ``BUTTONS[i]``), then float32
lx (4–7), rx (8–11), ry (12–15), L2 analog (16–19), ly (20–23); bytes 24–39 unused. Sticks are in [-1, 1]
with up/forward and right positive; the L2 trigger in [0, 1].
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

WIRELESS_REMOTE_SIZE = 40
BUTTONS = ("R1", "L1", "start", "select", "R2", "L2", "F1", "F2",
           "A", "B", "X", "Y", "up", "right", "down", "left")
AXES = ("lx", "ly", "rx", "ry", "l2")  # the order of WirelessRemote.axes (e.g. sensor_msgs/Joy axes)
REMOTE_FRAME = "wireless_remote"  # frame_id of the remote's sensor_msgs/Joy (hw_bridge's joy; never a Joy device's)
_LAYOUT = struct.Struct("<2sH5f16x")  # head, keys, lx, rx, ry, L2, ly, unused


@dataclass(frozen=True)
class WirelessRemote:
    """One reading of the remote: stick axes, the L2 trigger and the names of the pressed buttons."""

    lx: float = 0.0
    ly: float = 0.0
    rx: float = 0.0
    ry: float = 0.0
    l2: float = 0.0
    pressed: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        unknown = sorted(set(self.pressed) - set(BUTTONS))
        if unknown:
            raise ValueError(f"unknown remote buttons {unknown}; the remote has {list(BUTTONS)}")
        object.__setattr__(self, "pressed", frozenset(self.pressed))

    @property
    def keys(self) -> int:
        """The uint16 key bitfield."""
        return sum(1 << bit for bit, name in enumerate(BUTTONS) if name in self.pressed)

    @property
    def axes(self) -> tuple[float, ...]:
        """Axis values in ``AXES`` order."""
        return self.lx, self.ly, self.rx, self.ry, self.l2

    @property
    def buttons(self) -> tuple[bool, ...]:
        """Pressed state of every button in ``BUTTONS`` order."""
        return tuple(name in self.pressed for name in BUTTONS)


def parse_wireless_remote(data: bytes | Sequence[int]) -> WirelessRemote:
    """Decode LowState.wireless_remote (40 bytes, or 40 ints as the SDK gives them).

    Raises ValueError on a wrong size or a non-finite axis (a corrupted reading must not move anything).
    """
    raw = bytes(data)
    if len(raw) != WIRELESS_REMOTE_SIZE:
        raise ValueError(f"wireless_remote has {WIRELESS_REMOTE_SIZE} bytes, got {len(raw)}")
    _head, keys, lx, rx, ry, l2, ly = _LAYOUT.unpack(raw)
    if not all(math.isfinite(v) for v in (lx, rx, ry, l2, ly)):
        raise ValueError(f"wireless_remote has a non-finite axis: lx {lx}, ly {ly}, rx {rx}, ry {ry}, L2 {l2}")
    pressed = frozenset(name for bit, name in enumerate(BUTTONS) if keys >> bit & 1)
    return WirelessRemote(lx=lx, ly=ly, rx=rx, ry=ry, l2=l2, pressed=pressed)


def encode_wireless_remote(remote: WirelessRemote, head: bytes = b"\x00\x00") -> bytes:
    """The 40 bytes LowState.wireless_remote carries for ``remote`` (the virtual robot's side)."""
    return _LAYOUT.pack(head, remote.keys, remote.lx, remote.rx, remote.ry, remote.l2, remote.ly)


def parse_combo(text: str) -> frozenset[str]:
    """A button combination written as names joined by '+', e.g. ``"L1+B"``."""
    names = frozenset(name.strip() for name in text.split("+"))
    unknown = sorted(names - set(BUTTONS))
    if not text.strip() or unknown:
        raise ValueError(f"button combination {text!r}: unknown buttons {unknown}; the remote has {list(BUTTONS)}")
    return names


def combo_pressed(previous: WirelessRemote | None, current: WirelessRemote, combo: Iterable[str]) -> bool:
    """True on the reading where every button of ``combo`` is first held together (a rising edge)."""
    combo = frozenset(combo)
    held_before = previous is not None and combo <= previous.pressed
    return combo <= current.pressed and not held_before
