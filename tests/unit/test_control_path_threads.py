"""Which threads a process puts at its real-time priority: all but the middleware's housekeeping threads
(asynchronous writers, events, watchdogs, timed events), which may busy-wait."""

from __future__ import annotations

import threading

import pytest

from g1_teleop.core.realtime_priority import HOUSEKEEPING_THREAD_NAMES, control_path_threads


def test_the_python_threads_are_on_the_control_path():
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, daemon=True)
    worker.start()
    try:
        chosen = control_path_threads()
        assert threading.get_native_id() in chosen
        assert worker.native_id in chosen
    finally:
        stop.set()
        worker.join()


@pytest.mark.parametrize("name", ["dds.asyn.0.1", "dds.ev.0", "dds.shm.wdog", "dds.tls.replies", "tev", "gc", "lease",
                                  "dq.builtins"])
def test_the_middleware_housekeeping_threads_are_not(name):
    assert HOUSEKEEPING_THREAD_NAMES.fullmatch(name)


@pytest.mark.parametrize("name", ["dds.udp.7411", "dds.shm.65417", "recv", "recvUC", "recvMC", "dq.user", "python",
                                  "dds.asyn"])
def test_the_receive_threads_and_unnamed_ones_are(name):
    assert not HOUSEKEEPING_THREAD_NAMES.fullmatch(name)
