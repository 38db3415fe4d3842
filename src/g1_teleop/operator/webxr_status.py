"""The state of the headset link as a small typed record with one line for a human. ROS-free.

``LinkMonitor`` is told what happens (server up or failed, a WebSocket opened or closed, a sample arrived) and
answers ``status(now_s)``: an ``XrLinkStatus`` whose ``text`` says in one line what is going on and what to
check. Logging it (rate-limited, on change) is the caller's job. Times are time.monotonic() seconds.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from enum import Enum


class LinkState(Enum):
    """FAILED: the server is not running. NO_CLIENT: no headset has connected yet. CONNECTED: a headset sends
    tracked samples. STALE: a headset is connected but its samples stopped, never started, or do not track both
    hands (or controllers). DROPPED: the headset's WebSocket closed and none is connected now."""

    FAILED = "failed"
    NO_CLIENT = "no client"
    CONNECTED = "connected"
    STALE = "stale"
    DROPPED = "dropped"


@dataclass(frozen=True)
class XrLinkStatus:
    """The link at one moment. clients: open WebSockets; operator: the address of the headset whose samples are
    used; sample_age_s: time since the last sample (None: none yet), tracked_age_s: since the last one whose head
    and both wrists were tracked; rate_hz: samples per second recently;
    head_poses: CAMERA_MOVE events received from any page (a page streams its camera even before the immersive
    session starts: proof that it loaded and talks); malformed: events dropped because their payload did not have
    the vuer client's layout, the last one's problem in ``last_malformed``."""

    state: LinkState
    text: str
    clients: int
    operator: str | None
    sample_age_s: float | None
    tracked_age_s: float | None
    rate_hz: float
    head_poses: int = 0
    malformed: int = 0
    last_malformed: str | None = None


class LinkMonitor:
    """Follows the link of the server at ``url`` (its page ``page_url``), whose samples are the headset's
    ``what`` ("hands" or "controllers"); samples older than ``stale_after_s`` make the link STALE."""

    def __init__(self, url: str, page_url: str, what: str, stale_after_s: float) -> None:
        self.url, self.page_url, self.what, self.stale_after_s = url, page_url, what, stale_after_s
        self.failure: str | None = None
        self.clients: dict[object, str] = {}  # connection → peer address
        self.operator: object | None = None  # the connection whose samples are used
        self.dropped: tuple[str, float] | None = None  # the last closed connection's peer and time
        self.last_sample_s: float | None = None
        self.last_tracked_s: float | None = None
        self.recent: deque[float] = deque(maxlen=64)  # receive times of the operator's latest samples
        self.head_poses = 0
        self.malformed_count = 0
        self.last_malformed: str | None = None

    def failed(self, reason: str) -> None:
        self.failure = reason

    def head_pose(self) -> None:
        self.head_poses += 1

    def malformed(self, problem: str) -> None:
        self.malformed_count += 1
        self.last_malformed = problem

    def opened(self, connection: object, peer: str) -> None:
        self.clients[connection] = peer

    def closed(self, connection: object, now_s: float) -> None:
        self.dropped = (self.clients.pop(connection, "?"), now_s)
        if connection == self.operator:
            self.operator, self.last_sample_s, self.last_tracked_s = None, None, None
            self.recent.clear()

    def sample(self, connection: object, received_s: float, tracked: bool) -> bool:
        """A sample from ``connection`` arrived (``tracked``: its head and both wrists are tracked); True when it is
        the operator's (the first connection to send samples, until it closes): the samples of any other client
        are not used."""
        if self.operator is None:
            self.operator = connection
        if connection != self.operator:
            return False
        self.last_sample_s = received_s
        if tracked:
            self.last_tracked_s = received_s
        self.recent.append(received_s)
        return True

    def status(self, now_s: float) -> XrLinkStatus:
        age = None if self.last_sample_s is None else now_s - self.last_sample_s
        tracked_age = None if self.last_tracked_s is None else now_s - self.last_tracked_s
        rate = 0.0
        if len(self.recent) > 1 and now_s - self.recent[-1] <= self.stale_after_s:
            rate = (len(self.recent) - 1) / max(self.recent[-1] - self.recent[0], 1e-9)
        state, text = self._describe(now_s, age, tracked_age, rate)
        return XrLinkStatus(state, text, len(self.clients), self._operator_peer(), age, tracked_age, rate,
                            self.head_poses, self.malformed_count, self.last_malformed)

    def _operator_peer(self) -> str | None:
        return None if self.operator is None else self.clients.get(self.operator)

    def _describe(self, now_s: float, age: float | None, tracked_age: float | None,
                  rate: float) -> tuple[LinkState, str]:
        if self.failure is not None:
            return LinkState.FAILED, self.failure
        if not self.clients:
            if self.dropped is None:
                return LinkState.NO_CLIENT, (
                    f"no headset connected at {self.url}: open {self.page_url} in the headset's browser, trust the "
                    "certificate (g1-teleop xr-cert), then press Virtual Reality or Pass-through")
            peer, at = self.dropped
            return LinkState.DROPPED, (
                f"headset {peer} disconnected {now_s - at:.1f} s ago (WebSocket closed): check the Wi-Fi and that "
                f"the page is still open in the headset; reload {self.page_url} to reconnect")
        hold = "keep both hands in the headset's view" if self.what == "hands" else "wake both controllers"
        if age is None:
            peers = ", ".join(sorted(set(self.clients.values())))
            return LinkState.STALE, (
                f"headset {peers} connected but sends no {self.what} data: press Virtual Reality or Pass-through "
                f"in the page and {hold}")
        peer = self._operator_peer()
        if age > self.stale_after_s:
            return LinkState.STALE, f"headset {peer}: no {self.what} data for {age:.1f} s: {hold}"
        if tracked_age is None or tracked_age > self.stale_after_s:
            since = "" if tracked_age is None else f" for {tracked_age:.1f} s"
            return LinkState.STALE, (f"headset {peer} sends {self.what} at {rate:.0f} Hz but not both tracked{since} "
                                     f"(out of view, or the head pose missing): {hold}")
        others = len(self.clients) - 1
        extra = f"; {others} other client(s) connected, not followed" if others > 0 else ""
        return LinkState.CONNECTED, f"headset {peer} connected: {self.what} at {rate:.0f} Hz{extra}"


class StatusLog:
    """Which statuses of the link to log: every change of state (or of the followed headset) without flooding. A
    change after a quiet ``min_interval_s`` is logged at once; further changes within the interval wait for its
    end, and one line then gives the newest status and how many changes it stands for (a page that reconnects
    over and over). Call ``update`` regularly with the current status; times are monotonic seconds. ``link`` names
    the link in the lines ("WebXR", "Vision Pro")."""

    def __init__(self, min_interval_s: float = 2.0, link: str = "WebXR") -> None:
        self.min_interval_s, self.link = min_interval_s, link
        self._seen: tuple[LinkState, str | None] | None = None
        self._changes = 0
        self._last_line_s: float | None = None

    def update(self, now_s: float, status: XrLinkStatus) -> str | None:
        """The line to log now for ``status``, if any."""
        key = (status.state, status.operator)
        if key != self._seen:
            self._seen, self._changes = key, self._changes + 1
        if self._changes == 0 or (self._last_line_s is not None and now_s - self._last_line_s < self.min_interval_s):
            return None
        since = None if self._last_line_s is None else now_s - self._last_line_s
        changes, self._changes, self._last_line_s = self._changes, 0, now_s
        more = f" ({changes} status changes in the last {since:.0f} s)" if changes > 1 and since is not None else ""
        return f"{self.link} {status.state.value}: {status.text}{more}"
