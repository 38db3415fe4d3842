"""A process started by the pip runner stops when the runner dies, even by SIGKILL (Linux). ROS-free."""

from __future__ import annotations

import os
import signal
import sys

RUNNER_PID_ENV = "G1_TELEOP_RUNNER_PID"  # set for the runner's children: the pid they stop with
_PR_SET_PDEATHSIG = 1  # prctl option (Linux)


def stop_with_runner() -> None:
    """In a node the runner started, on Linux: SIGTERM to this process when the runner dies, even by SIGKILL,
    so that no node outlives it (a bridge still talking to a robot, a simulator using the cores). Outside the
    runner (ros2 launch, ros2 run) and elsewhere: nothing."""
    runner_pid = os.environ.get(RUNNER_PID_ENV)
    if not runner_pid or not sys.platform.startswith("linux"):
        return
    import ctypes

    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != int(runner_pid):  # the runner died before this process got here
        os.kill(os.getpid(), signal.SIGTERM)
