"""Episodes the operator marks during a recording with two buttons of sensor_msgs/Joy, ROS-free.

The buttons are those the graph leaves free on both joy layouts (core/xr_input_contract.py's headset controllers and an
Xbox pad through ROS's joy driver): X (button 2) starts an episode and, pressed again, ends it; Y (button 3)
discards the open episode or, when none is open, the last one ended. A press counts on its rising edge (a held
button is one press), edges taken per Joy source (its frame_id): on a robot, joy also carries the G1's wireless
remote (hw_bridge, frame ``wireless_remote``), whose messages interleave with the operator's device's and whose
buttons 2 and 3 are its start and select: the remote marks no episode (it is the safety operator's), and its
messages never break a held button of the operator's device into presses. An episode still open when the
recording ends ends there. A recording without any start press is one episode, whole. Times are the graph's clock
in integer ns (the Joy messages' stamps).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from g1_teleop.hardware.wireless_remote import REMOTE_FRAME


@dataclass(frozen=True)
class EpisodeButtons:
    """Joy button indices: ``toggle`` starts and ends an episode, ``discard`` drops one."""

    toggle: int = 2
    discard: int = 3

    def __post_init__(self) -> None:
        if min(self.toggle, self.discard) < 0 or self.toggle == self.discard:
            raise ValueError(f"episode buttons must be two different indices >= 0, got {self.toggle}, {self.discard}")


def parse_episode_buttons(text: str) -> EpisodeButtons:
    """``"TOGGLE,DISCARD"`` (e.g. ``"2,3"``) → the buttons; ValueError says what to write."""
    try:
        toggle, discard = (int(part) for part in text.split(","))
    except ValueError:
        raise ValueError(f"episode buttons {text!r}: write TOGGLE,DISCARD (Joy button indices), e.g. 2,3") from None
    return EpisodeButtons(toggle, discard)


class EpisodeMarks:
    """Feed every Joy sample in stamp order to :meth:`press`; :meth:`windows` gives the episodes kept."""

    def __init__(self, buttons: EpisodeButtons) -> None:
        self.buttons = buttons
        self.ended: list[tuple[int, int]] = []  # (start, end) ns of the episodes ended and kept
        self.open_ns: int | None = None  # the open episode's start
        self.started = 0  # start presses so far
        self._down: defaultdict[str, dict[int, bool]] = defaultdict(lambda: dict.fromkeys(
            (buttons.toggle, buttons.discard), False))  # per Joy source (frame_id): is each button held

    def press(self, stamp_ns: int, pressed: Sequence[int], source: str = "") -> str | None:
        """One Joy sample's buttons from ``source`` (its frame_id); what it did ("episode 2 started", …), None
        when nothing (and always for the wireless remote)."""
        if source == REMOTE_FRAME:
            return None
        event, down_before = None, self._down[source]
        for button, action in ((self.buttons.toggle, self._toggle), (self.buttons.discard, self._discard)):
            down = button < len(pressed) and pressed[button] != 0
            if down and not down_before[button]:
                event = action(int(stamp_ns)) or event
            down_before[button] = down
        return event

    def _toggle(self, stamp_ns: int) -> str:
        if self.open_ns is None:
            self.open_ns, self.started = stamp_ns, self.started + 1
            return f"episode {len(self.ended) + 1} started"
        self.ended.append((self.open_ns, stamp_ns))
        self.open_ns = None
        return f"episode {len(self.ended)} ended ({(self.ended[-1][1] - self.ended[-1][0]) / 1e9:.1f} s)"

    def _discard(self, _stamp_ns: int) -> str | None:
        if self.open_ns is not None:
            self.open_ns = None
            return f"episode {len(self.ended) + 1} discarded (it was open)"
        if self.ended:
            self.ended.pop()
            return f"episode {len(self.ended) + 1} discarded"
        return None

    def windows(self, end_ns: int) -> list[tuple[int, int]] | None:
        """The episodes kept, (start, end) ns, an open one ending at ``end_ns``; None when no episode was ever
        started (the whole recording is one)."""
        if not self.started:
            return None
        return [*self.ended, *([(self.open_ns, end_ns)] if self.open_ns is not None else [])]
