"""The robot's eyes in the headset: the newest stereo camera frame sent to each connected page. ROS-free.

A frame is each eye's JPEG (``put_eyes``: the eyes' ``camera/{left,right}/image_raw/compressed``, paired by stamp
with :class:`EyePairs`), or one JPEG, left | right side by side (``put``: a binocular camera's). The page shows it
as vuer's web client shows a robot's binocular camera (televuer's immersive mode): two ``ImageBackground`` elements
upserted into ``bgChildren``, the left eye's image on three.js layer 1 and the right eye's on layer 2 (the layers
the WebXR left and right eye cameras render; vuer's ImagePlane sets them in immersive sessions), each a plane
``video_height_m`` tall ``video_distance_m`` in front of the viewer, facing it. A side-by-side JPEG is split into
the two eyes' JPEGs (decoded once, each half coded again with the frame's own quantisation tables and subsampling:
6 ms of CPU a 1280×480 frame here) in a coding thread of its own, off the server's event loop, so the headset's pose
stream is never held up by a frame; the eyes' own JPEGs need no coding (their headers are read: their size).

Latency first: only the newest frame is kept (``put`` replaces any frame not yet sent), a page gets at most
``fps`` frames a second, and a busy page gets none: frames wait at the server, where newer ones replace them.
Busy means its last frame is still being written to its socket, or, for a page that answers (the page the server
serves loads ``web/frame_taken.js``), that it has not yet taken ``MAX_UNTAKEN`` of the frames sent to it from its
WebSocket: it answers each binary message it takes with a FRAME_TAKEN event of the message's size (``taken``), and
says FRAME_TAKEN 0 as its socket opens, so that it is held from its first frame (a page slow to start took its
first message seconds after several frames had been sent to it). A
socket alone does not tell: Chromium reads it at once and queues the messages for a page too busy to take them
(seen with software WebGL, where vuer's client spends seconds of its main thread on each frame: 30 frames a second
sent, each taken later than the last, 11 s after it was sent within 10 s). Two frames in flight, not one, so that a
network's round trip does not halve the rate. Frames not taken within ``TAKEN_TIMEOUT_S`` of their sending free
the page anyway (counted). Frames are made ready (split) only while a page is connected.

The event (``webxr_server`` builds it with vuer's classes) is vuer's UPSERT as ``Vuer.send`` packs it (msgpack,
floats as float32, binary ``src``), with one field the client ignores, ``camera``: the frame's ``seq``, its camera
``stamp_ns`` and the server's ``sent_ns`` (wall clock, ns; integers, since vuer's float32 ``ts`` cannot hold a time
to the millisecond), from which a page measures the frames' latency (``webxr_client.video_frame``).

Layers 1 and 2 are drawn only by a headset's eye cameras: a flat page (a laptop's browser, a phone) draws neither,
the plane stays blank (seen in Chromium: white). The ``mono`` layout sends the left eye's image alone on layer 0,
drawn by every camera (both of a headset's eyes see it, without depth).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from PIL import Image as PilImage
from PIL import JpegImagePlugin

from g1_teleop.core.camera_images import SIDES, jpeg_size

VIDEO_PARENT = "bgChildren"  # vuer's node for scene-fixed elements (where the Hands element goes too)
EYE_KEYS = {"left": "robot-eye-left", "right": "robot-eye-right"}
EYE_LAYERS = {"left": 1, "right": 2}  # three.js layers of the WebXR left and right eye cameras
VIDEO_LAYOUTS = ("stereo", "mono")  # each eye its half on its layer; the left half on layer 0 for every camera
FRAME_TAKEN = "FRAME_TAKEN"  # the answering page's event: it took a binary message of ``value`` bytes
MAX_UNTAKEN = 2  # frames sent to an answering page that it has not taken yet: then it is busy
TAKEN_TIMEOUT_S = 5.0  # frames not taken by then: the page is free again (counted)


@dataclass(frozen=True)
class EyeImages:
    """One stereo frame as the page gets it: each eye's JPEG (width × height pixels), the frame's sequence number
    (from 1) and camera stamp (ns)."""

    left: bytes
    right: bytes
    width: int
    height: int
    seq: int
    stamp_ns: int


class BadFrame(ValueError):
    """A frame that cannot be shown (not a JPEG, odd width); the message says why."""


def split_stereo_jpeg(jpeg: bytes, seq: int = 0, stamp_ns: int = 0) -> EyeImages:
    """The two eyes' JPEGs of a side-by-side stereo JPEG (left | right, even width)."""
    try:
        with PilImage.open(io.BytesIO(jpeg)) as image:
            if image.format != "JPEG":
                raise BadFrame(f"a camera frame is not a JPEG but {image.format}")
            if image.width % 2:
                raise BadFrame(f"a side-by-side stereo frame has an even width, got {image.width}")
            options = {"qtables": image.quantization, "subsampling": JpegImagePlugin.get_sampling(image)}
            image.load()
            half = image.width // 2
            halves = [image.crop((0, 0, half, image.height)), image.crop((half, 0, image.width, image.height))]
    except (OSError, SyntaxError) as exc:  # Pillow's errors for unreadable data
        raise BadFrame(f"a camera frame is not a JPEG ({len(jpeg)} bytes): {exc}") from None
    left, right = (_jpeg(h, options) for h in halves)
    return EyeImages(left, right, half, halves[0].height, seq, stamp_ns)


def eye_images(left: bytes, right: bytes, seq: int = 0, stamp_ns: int = 0) -> EyeImages:
    """The two eyes' JPEGs as they came, once their headers say they are JPEGs of one size."""
    sizes = []
    for side, jpeg in zip(SIDES, (left, right), strict=True):
        try:
            sizes.append(jpeg_size(jpeg))
        except ValueError as exc:
            raise BadFrame(f"the {side} eye's image is {exc}") from None
    if sizes[0] != sizes[1]:
        raise BadFrame(f"the eyes' images differ in size: {sizes[0]} and {sizes[1]}")
    return EyeImages(left, right, sizes[0][0], sizes[0][1], seq, stamp_ns)


def _eye_images(frame: bytes | tuple[bytes, bytes], seq: int, stamp_ns: int) -> EyeImages:
    return split_stereo_jpeg(frame, seq, stamp_ns) if isinstance(frame, bytes) else eye_images(*frame, seq, stamp_ns)


class EyePairs:
    """The two eyes' newest JPEGs, each kept until the other eye's with the same stamp comes (a stereo camera stamps
    both eyes of a frame alike); ``unpaired``: JPEGs replaced before their pair came."""

    def __init__(self) -> None:
        self._newest: dict[str, tuple[int, bytes]] = {}
        self.unpaired = 0

    def put(self, side: str, stamp_ns: int, jpeg: bytes) -> tuple[bytes, bytes, int] | None:
        """An eye's JPEG (``side`` left or right; stamp, ns); the pair (left, right, stamp) once both have it."""
        self.unpaired += side in self._newest
        self._newest[side] = (stamp_ns, jpeg)
        other = self._newest.get("right" if side == "left" else "left")
        if other is None or other[0] != stamp_ns:
            return None
        (_, left), (_, right) = self._newest.pop("left"), self._newest.pop("right")
        return left, right, stamp_ns


def _jpeg(image: PilImage.Image, options: dict) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", **options)
    return buffer.getvalue()


@dataclass
class VideoFigures:
    """Counts since the start: frames handed over, frames made ready to send (split, or their eyes' JPEGs checked),
    events sent (one per page and frame), frames a busy page skipped (while another page took them), frames that
    could not be shown (and the last reason); frames an answering page took, frames sent to a page that had not
    answered yet (before its first FRAME_TAKEN), answers that did not come in time, and the last
    ``send_to_taken_ms`` (send → taken, ms)."""

    frames_in: int = 0
    frames_ready: int = 0
    events_sent: int = 0
    skipped_busy: int = 0
    bad_frames: int = 0
    last_bad: str = ""
    frames_taken: int = 0
    sent_unanswered: int = 0
    taken_timeouts: int = 0
    send_to_taken_ms: deque = field(default_factory=lambda: deque(maxlen=1000))


class VideoStreamer:
    """The newest frame to every page, at most ``fps`` a second each (module docstring). ``put`` from any thread;
    ``run`` in the server's event loop with ``pages()`` (the open pages' ids) and ``send(page, bytes)``;
    ``event(eyes, sent_ns)`` packs a frame's event (the server's, with vuer's classes)."""

    def __init__(self, fps: float, event: Callable[[EyeImages, int], bytes]) -> None:
        self.fps, self.event = fps, event
        self.figures = VideoFigures()
        self._lock = threading.Lock()
        self._newest: tuple[bytes | tuple[bytes, bytes], int] | None = None  # (a stereo JPEG or both eyes', stamp)
        self._seq = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._answering: set[Hashable] = set()  # pages that answer FRAME_TAKEN
        self._untaken: dict[Hashable, deque[tuple[int, float]]] = {}  # page → its frames' (bytes, monotonic send s)

    def put(self, jpeg: bytes, stamp_ns: int) -> None:
        """A new side-by-side stereo JPEG (camera stamp ``stamp_ns``); it replaces one not sent yet. Returns at
        once."""
        self._put(jpeg, stamp_ns)

    def put_eyes(self, left: bytes, right: bytes, stamp_ns: int) -> None:
        """A new frame as each eye's JPEG (camera stamp ``stamp_ns``); it replaces one not sent yet."""
        self._put((left, right), stamp_ns)

    def _put(self, frame: bytes | tuple[bytes, bytes], stamp_ns: int) -> None:
        with self._lock:
            self._newest = (frame, stamp_ns)
            self.figures.frames_in += 1
            loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the server's loop has ended
                loop.call_soon_threadsafe(wake.set)

    def taken(self, page: Hashable, size: int) -> None:
        """``page`` took a binary message of ``size`` bytes from its WebSocket (its FRAME_TAKEN); in the server's
        event loop. If it is the page's oldest frame not yet taken (a page takes its messages in order), that frame
        is taken; other messages (vuer's own events) are not frames."""
        self._answering.add(page)
        untaken = self._untaken.get(page)
        if not untaken or untaken[0][0] != size:
            return
        _, sent_s = untaken.popleft()
        self.figures.frames_taken += 1
        self.figures.send_to_taken_ms.append((time.monotonic() - sent_s) * 1e3)
        if self._wake is not None:
            self._wake.set()

    def _busy(self, page: Hashable, sending: dict[Hashable, asyncio.Task], now_s: float) -> bool:
        """Still writing the page's last frame to its socket, or the page (an answering one) has ``MAX_UNTAKEN``
        frames not taken, the oldest sent less than ``TAKEN_TIMEOUT_S`` ago."""
        if page in sending and not sending[page].done():
            return True
        untaken = self._untaken.get(page)
        if not untaken or page not in self._answering:
            return False
        if now_s - untaken[0][1] >= TAKEN_TIMEOUT_S:
            self.figures.taken_timeouts += len(untaken)
            untaken.clear()
        return len(untaken) >= MAX_UNTAKEN

    def _take(self) -> tuple[bytes | tuple[bytes, bytes], int] | None:
        with self._lock:
            newest, self._newest = self._newest, None
            return newest

    async def run(self, pages: Callable[[], list[Hashable]],
                  send: Callable[[Hashable, bytes], Awaitable[object]]) -> None:
        """Until cancelled: each new frame made ready (split) in the coding thread and sent to every page not still
        busy; while every page is busy, the frame waits (a newer one replaces it)."""
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()
        with self._lock:
            self._loop, self._wake = loop, wake
        sending: dict[Hashable, asyncio.Task] = {}
        period_s, next_s = 1.0 / self.fps, 0.0
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="webxr-video") as coder:
            try:
                while True:
                    with contextlib.suppress(asyncio.TimeoutError):  # (waiting on answers: look again when one is late)
                        await asyncio.wait_for(wake.wait(), TAKEN_TIMEOUT_S if any(self._untaken.values()) else None)
                    wake.clear()
                    await asyncio.sleep(max(0.0, next_s - time.monotonic()))  # the rate; a newer frame may come
                    open_pages = pages()
                    for page in set(self._untaken) - set(open_pages):
                        del self._untaken[page]
                    self._answering &= set(open_pages)
                    now_s = time.monotonic()
                    free = [page for page in open_pages if not self._busy(page, sending, now_s)]
                    if not free:
                        continue
                    frame = self._take()
                    if frame is None:
                        continue
                    next_s = time.monotonic() + period_s
                    self._seq += 1
                    try:
                        eyes = await loop.run_in_executor(coder, _eye_images, frame[0], self._seq, frame[1])
                    except BadFrame as exc:
                        self.figures.bad_frames, self.figures.last_bad = self.figures.bad_frames + 1, str(exc)
                        continue
                    self.figures.frames_ready += 1
                    data = self.event(eyes, time.time_ns())
                    self.figures.skipped_busy += len(open_pages) - len(free)
                    for page in free:
                        self.figures.sent_unanswered += page not in self._answering
                        self._untaken.setdefault(page, deque(maxlen=16)).append((len(data), time.monotonic()))
                        sending[page] = loop.create_task(self._send(send, page, data))
                    for page in [p for p, task in sending.items() if task.done()]:
                        del sending[page]
            finally:
                with self._lock:
                    self._loop = self._wake = None
                for task in sending.values():
                    task.cancel()

    async def _send(self, send: Callable[[Hashable, bytes], Awaitable[object]], page: Hashable, data: bytes) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError, KeyError):  # the page went away meanwhile
            await send(page, data)
            self.figures.events_sent += 1
