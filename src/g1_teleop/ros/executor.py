"""The executor every node and recorder of the project spins on: rclpy's EventsExecutor where it exists.

rclpy's EventsExecutor (``rclpy.experimental``, in the Kilted wheels; not in Humble) waits and dispatches in C++,
where the SingleThreadedExecutor rebuilds its wait set in Python for every callback. Measured on the lockstep graph
(`g1-teleop bench graph`, 2 idle cores): the nodes' CPU time per 20 ms control period 30.8 → 25.0 ms in all (policy
9.3 → 6.9, retarget 6.7 → 4.7, sim_bridge 4.7 → 4.1, xr_input 3.5 → 2.9) and the real-time factor 0.97 → 1.09. What
differs for the code: it ignores callback groups (``ros.polled_subscription`` allows for that), ``spin_once()``
without a timeout runs no timer, so loops spin with ``SPIN_WAIT_S``, and a callback that takes the message's info
(``(msg, info)``: the DDS source timestamp) makes its spin raise SystemError ("null argument to internal routine",
the Kilted wheels), so the bag recorder takes its messages with their info itself (ros.polled_subscription). The
recorders spin on it too: on the SingleThreadedExecutor, `g1-teleop sim`'s recorder could not keep up with the
faster graph (a fifth of each topic's messages lost), and the sim job ran at 0.73× real time against 1.08× with
both. It has no guard conditions: hw_bridge's link thread leaves what the LowCmd process reports for a timer.
``G1_TELEOP_EXECUTOR=single`` chooses the SingleThreadedExecutor (where rclpy lacks the other, it is the one).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from rclpy.context import Context
from rclpy.executors import Executor, SingleThreadedExecutor

EXECUTOR_VARIABLE = "G1_TELEOP_EXECUTOR"  # events (the default) or single
SPIN_WAIT_S = 0.1  # the longest a spin loop waits for a callback before it looks at its stop conditions again


def _events_executor() -> Callable[..., Executor] | None:
    """rclpy's EventsExecutor, unless it is missing or turned off (G1_TELEOP_EXECUTOR). Raises ValueError for
    another value of the variable."""
    choice = os.environ.get(EXECUTOR_VARIABLE, "events")
    if choice not in ("events", "single"):
        raise ValueError(f"{EXECUTOR_VARIABLE}={choice!r}: use events or single")
    if choice == "single":
        return None
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:  # Humble's rclpy
        return None
    return EventsExecutor


def make_executor(context: Context | None = None) -> Executor:
    """rclpy's EventsExecutor where it exists and is not turned off, else its SingleThreadedExecutor."""
    make = _events_executor()
    return SingleThreadedExecutor(context=context) if make is None else make(context=context)

