"""The eyes' own JPEGs on their way to the headset (operator/webxr_video): paired by stamp, checked by their headers
only, and sent as they came, never coded again; a frame that cannot be shown says why."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from g1_teleop.core.camera_images import encode_jpeg
from g1_teleop.operator.webxr_video import BadFrame, EyeImages, EyePairs, VideoStreamer, eye_images


def _jpeg(width: int = 64, height: int = 48, seed: int = 0) -> bytes:
    return encode_jpeg(np.random.default_rng(seed).integers(0, 255, (height, width, 3), dtype=np.uint8))


def test_an_eye_waits_for_the_other_eyes_jpeg_of_the_same_stamp() -> None:
    pairs = EyePairs()
    assert pairs.put("left", 10, b"L10") is None
    assert pairs.put("right", 20, b"R20") is None  # another frame's: no pair
    assert pairs.put("left", 20, b"L20") == (b"L20", b"R20", 20)
    assert pairs.unpaired == 1  # L10 was replaced before its right eye came
    assert pairs.put("right", 30, b"R30") is None and pairs.put("left", 30, b"L30") == (b"L30", b"R30", 30)
    assert pairs.unpaired == 1


def test_the_eyes_jpegs_are_taken_as_they_came_with_their_size() -> None:
    left, right = _jpeg(seed=1), _jpeg(seed=2)
    eyes = eye_images(left, right, seq=3, stamp_ns=7)
    assert eyes == EyeImages(left, right, 64, 48, 3, 7)
    with pytest.raises(BadFrame, match="right eye's image is not a JPEG"):
        eye_images(left, b"no jpeg")
    with pytest.raises(BadFrame, match=r"differ in size: \(64, 48\) and \(32, 48\)"):
        eye_images(left, _jpeg(width=32))


def test_the_streamer_sends_the_eyes_jpegs_unchanged() -> None:
    left, right = _jpeg(seed=3), _jpeg(seed=4)
    sent: list[EyeImages] = []

    async def run() -> None:
        streamer = VideoStreamer(60.0, lambda eyes, sent_ns: sent.append(eyes) or b"event")
        task = asyncio.ensure_future(streamer.run(lambda: ["page"], lambda page, data: asyncio.sleep(0)))
        await asyncio.sleep(0.05)
        streamer.put_eyes(left, right, 123)
        await asyncio.sleep(0.2)
        streamer.put_eyes(left, b"broken", 124)
        await asyncio.sleep(0.2)
        task.cancel()
        assert streamer.figures.frames_ready == 1 and streamer.figures.bad_frames == 1

    asyncio.run(run())
    assert [(e.left, e.right, e.width, e.height, e.stamp_ns) for e in sent] == [(left, right, 64, 48, 123)]
