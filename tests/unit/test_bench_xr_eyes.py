import numpy as np
import pytest

from g1_teleop.tools.bench.xr_eyes import sim_speed, video_figures

T0 = 1_800_000_000_000_000_000  # wall ns
MS = 1_000_000


def real_time_clock(seconds: float, speed: float) -> np.ndarray:
    """/clock every 5 ms of simulated time, published at ``speed`` simulated seconds per wall second."""
    sim = np.arange(0, int(seconds * 1e9), 5 * MS, dtype=np.int64)
    return np.stack([T0 + (sim / speed).astype(np.int64), sim], axis=1)


def test_sim_speed_over_the_window_only():
    clock = real_time_clock(10.0, 0.8)
    assert sim_speed(clock, (T0 + 1_000 * MS, T0 + 6_000 * MS)) == pytest.approx(0.8, abs=1e-3)
    assert sim_speed(clock, (T0 + 20_000 * MS, T0 + 30_000 * MS)) == 0.0  # nothing in it


def test_frames_rate_and_latencies():
    clock = real_time_clock(10.0, 1.0)
    # a frame every 40 ms of simulated time showing the state at its stamp; published 30 ms later (render, JPEG),
    # sent by the server 5 ms after that, received 2 ms after the send
    stamps = np.arange(1_000 * MS, 9_000 * MS, 40 * MS, dtype=np.int64)
    published = {int(s): int(T0 + s + 30 * MS) for s in stamps}
    frames = np.stack([np.arange(len(stamps)), stamps, T0 + stamps + 35 * MS, T0 + stamps + 37 * MS], axis=1)
    del published[int(stamps[40])]  # one frame this process did not hear (stamp 2.6 s)
    figures = video_figures(frames, published, clock, (T0 + 2_000 * MS, T0 + 7_000 * MS))
    assert figures["video_page_fps"] == pytest.approx(25.0)
    assert figures["video_published_fps"] == pytest.approx(25.0, abs=0.2)
    assert figures["video_render_to_page_p50_ms"] == pytest.approx(7.0)
    assert figures["video_render_to_page_p99_ms"] == pytest.approx(7.0)
    assert figures["video_state_to_page_p50_ms"] == pytest.approx(37.0)
    assert figures["video_send_to_page_max_ms"] == pytest.approx(2.0)
    assert figures["video_render_stamps_matched"] == pytest.approx(124 / 125, abs=1e-3)


def test_no_frames():
    figures = video_figures(np.zeros((0, 4), dtype=np.int64), {}, real_time_clock(1.0, 1.0), (T0, T0 + 1_000 * MS))
    assert figures == {"video_page_fps": 0.0, "video_published_fps": 0.0}
