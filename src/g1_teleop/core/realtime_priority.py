"""Real-time scheduling for the processes that stand between a command and a motor. ROS-free.

Linux only. ``SCHED_FIFO`` at a priority (1–99) runs the process before every normal (``SCHED_OTHER``) task, so
busy cores no longer delay it; the kernel still keeps 5 % of each second for normal tasks
(``/proc/sys/kernel/sched_rt_runtime_us``), so a runaway loop cannot lock the machine. ros2_control's controller
manager runs its update loop the same way (``thread_priority``, 50 by default).
"""

from __future__ import annotations

import os


def use_fifo_scheduling(priority: int, what: str) -> str | None:
    """Put the calling thread under ``SCHED_FIFO`` at ``priority`` (1–99; threads it starts afterwards, DDS's
    among them, inherit it). None when done, else the reason, worded for the operator's log."""
    if not 1 <= priority <= 99:
        raise ValueError(f"{what}: a SCHED_FIFO priority is 1–99, got {priority}")
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (OSError, AttributeError) as exc:
        return (f"{what} keeps normal scheduling: SCHED_FIFO {priority} refused ({exc}); allow it with "
                f"CAP_SYS_NICE or an rtprio limit (/etc/security/limits.conf: '<user> - rtprio {priority}')")
    return None
