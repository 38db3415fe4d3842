"""The eye frames' streamer (operator/webxr_video.VideoStreamer) against pages that take their frames slowly: an
answering page (FRAME_TAKEN, as web/frame_taken.js answers) gets at most MAX_UNTAKEN frames it has not taken, each
the newest at its sending, so a frame's age at the page stays bounded; a page that does not answer is only held
back by its socket; an answering page that stops answering is freed after TAKEN_TIMEOUT_S."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from g1_teleop.core.camera_images import encode_jpeg
from g1_teleop.operator import webxr_video
from g1_teleop.operator.webxr_video import MAX_UNTAKEN, VideoStreamer

CAMERA_HZ = 100.0


def _jpegs(count: int = 4) -> list[bytes]:
    rng = np.random.default_rng(0)
    return [encode_jpeg(rng.integers(0, 255, (48, 128, 3), dtype=np.uint8)) for _ in range(count)]


def _event(eyes: webxr_video.EyeImages, sent_ns: int) -> bytes:
    """A frame's event: its sequence number and camera stamp, then the eyes (sizes differ from frame to frame)."""
    return eyes.seq.to_bytes(8, "little") + eyes.stamp_ns.to_bytes(8, "little") + eyes.left + eyes.right


async def _stream(take_s: float | None, duration_s: float, answer_after: int | None = None,
                  fps: float = 60.0) -> tuple[VideoStreamer, list[tuple[float, int, int]], float]:
    """Frames put at CAMERA_HZ for ``duration_s`` to one page that takes each message ``take_s`` after the previous
    one was taken (None: at once, never answering) and answers its first ``answer_after`` messages (None: all).
    Returns the streamer, the frames the page took (monotonic s, seq, camera stamp ns) and the most frames ever sent
    to it and not taken."""
    streamer = VideoStreamer(fps, _event)
    inbox: asyncio.Queue[bytes] = asyncio.Queue()
    taken: list[tuple[float, int, int]] = []
    worst = 0

    async def send(page: str, data: bytes) -> None:
        inbox.put_nowait(data)

    async def page() -> None:
        nonlocal worst
        answered = 0
        if take_s is not None:
            streamer.taken("page", 3)  # (the page answered the server's first message, before any frame)
        while True:
            worst = max(worst, inbox.qsize())
            data = await inbox.get()
            if take_s:
                await asyncio.sleep(take_s)
            taken.append((time.monotonic(), int.from_bytes(data[:8], "little"), int.from_bytes(data[8:16], "little")))
            if take_s is not None and (answer_after is None or answered < answer_after):
                answered += 1
                streamer.taken("page", len(data))

    async def camera() -> None:
        jpegs = _jpegs()
        for k in range(round(duration_s * CAMERA_HZ)):
            streamer.put(jpegs[k % len(jpegs)], time.monotonic_ns())
            await asyncio.sleep(1.0 / CAMERA_HZ)

    tasks = [asyncio.create_task(streamer.run(lambda: ["page"], send)), asyncio.create_task(page())]
    await camera()
    await asyncio.sleep(0.3)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return streamer, taken, worst


def test_a_slow_answering_page_gets_the_newest_frames_and_never_a_queue() -> None:
    streamer, taken, worst = asyncio.run(_stream(take_s=0.1, duration_s=2.0))
    figures = streamer.figures
    assert worst <= MAX_UNTAKEN, worst
    assert 15 <= len(taken) <= 25, len(taken)  # ~10 a second for 2.3 s: the page's own pace, not the camera's 100
    assert figures.frames_taken == len(taken) and figures.taken_timeouts == 0, figures
    ages_ms = [(at - stamp_ns * 1e-9) * 1e3 for at, _, stamp_ns in taken]
    assert max(ages_ms) < (MAX_UNTAKEN + 1) * 100 + 80, ages_ms  # bounded by the page's pace, not growing
    assert np.percentile(list(figures.send_to_taken_ms), 50) < MAX_UNTAKEN * 100 + 50, figures.send_to_taken_ms
    assert [seq for _, seq, _ in taken] == list(range(1, len(taken) + 1))  # every frame sent was taken, in order
    gaps_s = np.diff([stamp_ns * 1e-9 for _, _, stamp_ns in taken])
    assert np.median(gaps_s) > 5 / CAMERA_HZ, gaps_s  # the camera frames in between were replaced, not queued


def test_a_page_that_does_not_answer_gets_the_rate() -> None:
    streamer, taken, _ = asyncio.run(_stream(take_s=None, duration_s=1.0, fps=30.0))
    # video_fps 30 of the camera's 100: nothing waits on answers (the rate over the frames taken: a loaded machine's
    # camera loop runs a little longer than its 1 s)
    rate = (len(taken) - 1) / (taken[-1][0] - taken[0][0])
    assert len(taken) >= 25 and 27 <= rate <= 31, (len(taken), rate)
    assert streamer.figures.frames_taken == 0


def test_a_page_that_stops_answering_is_freed_after_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(webxr_video, "TAKEN_TIMEOUT_S", 0.5)
    streamer, taken, _ = asyncio.run(_stream(take_s=0.01, duration_s=2.0, answer_after=5))
    figures = streamer.figures
    assert figures.frames_taken == 5
    # After the fifth answer: two frames, then none until the timeout frees the page, twice or thrice in 1.5 s.
    assert 2 <= figures.taken_timeouts // MAX_UNTAKEN <= 4, figures
    assert 5 + MAX_UNTAKEN * 2 <= len(taken) <= 5 + MAX_UNTAKEN * 5, len(taken)
