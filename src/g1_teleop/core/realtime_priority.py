"""Real-time scheduling for the processes that stand between a command and a motor. ROS-free.

Linux only. ``SCHED_FIFO`` at a priority (1–99) runs the process before every normal (``SCHED_OTHER``) task, so
busy cores no longer delay it; the kernel still keeps 5 % of each second for normal tasks
(``/proc/sys/kernel/sched_rt_runtime_us``), so a runaway loop cannot lock the machine. ros2_control's controller
manager runs its update loop the same way (``thread_priority``, 50 by default).

The middleware's housekeeping threads keep normal scheduling: its asynchronous writers, events, watchdogs and
timed events, which hand no data to the control path and may busy-wait (ros2_control leaves every middleware thread
at normal priority). A busy-waiting SCHED_FIFO thread never yields its core to a thread of equal or lower priority.
Measured (docs/timing.md, "Real-time priority and the middleware's threads"), with every thread at SCHED_FIFO: in
the robot's graph with the command chain kept on one core, retarget's Fast DDS asynchronous-writer thread (priority
35) took that core, xr_input (also 35) never ran again, and hw_bridge/start went unanswered. The other threads,
the unnamed ones included, run at the priority: the middleware's receive threads and rclpy's EventsExecutor's timer
thread (the policy's tick) are on the control path.

Such a process also locks its memory (``mlockall``, each page once touched: ``MCL_ONFAULT``), as realtime_tools'
``lock_memory`` does for ros2_control: a page the kernel evicts (proactive reclaim pages out what it deems cold,
libraries' code included; this machine's kernel runs DAMON with a ``pageout`` scheme) costs a disk read, tens of
milliseconds, the next time the loop touches it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
from collections.abc import Iterator
from pathlib import Path

SCHED_FIFO_ENV = "G1_TELEOP_SCHED_FIFO"  # a node's SCHED_FIFO priority: the runners set it from the graph
_MCL_CURRENT, _MCL_FUTURE, _MCL_ONFAULT = 1, 2, 4  # <sys/mman.h> (Linux)
# The middleware's housekeeping threads, by the names Fast DDS (>= 2.13: asynchronous writers dds.asyn.*, events
# dds.ev.*, type lookup dds.tls.*, its shared memory's watchdog dds.shm.wdog) and Cyclone DDS (timed events tev,
# garbage collection gc, leases lease, discovery's delivery queue dq.builtins) give them. Fast DDS 2.6 (Humble)
# names none: there every thread runs at the priority.
HOUSEKEEPING_THREAD_NAMES = re.compile(r"dds\.(asyn|ev|tls)\..+|dds\.shm\.wdog|tev|gc|lease|dq\.builtins")


def control_path_threads() -> list[int]:
    """This process's threads (native ids) that run at its real-time priority: all but the middleware's
    housekeeping threads (``HOUSEKEEPING_THREAD_NAMES``)."""
    chosen = []
    for tid in os.listdir("/proc/self/task"):
        try:
            name = Path(f"/proc/self/task/{tid}/comm").read_text().strip()
        except FileNotFoundError:  # (a thread that ended meanwhile)
            continue
        if not HOUSEKEEPING_THREAD_NAMES.fullmatch(name):
            chosen.append(int(tid))
    return sorted(chosen)


def use_fifo_scheduling(priority: int, what: str) -> str | None:
    """Put the control path's threads (``control_path_threads``) under ``SCHED_FIFO`` at ``priority`` (1–99; threads
    started afterwards inherit the scheduling of the thread that starts them) and lock the process's memory
    (``lock_memory``). Call it once the process's start-up work is done and its middleware's threads exist: a
    start-up at real-time priority (imports, models) would hold a core from every normal task. None when done, else
    the reason, worded for the operator's log."""
    if not 1 <= priority <= 99:
        raise ValueError(f"{what}: a SCHED_FIFO priority is 1–99, got {priority}")
    try:
        for tid in control_path_threads():
            with contextlib.suppress(ProcessLookupError):  # (a thread that ended meanwhile)
                os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(priority))
    except (OSError, AttributeError) as exc:
        return (f"{what} keeps normal scheduling: SCHED_FIFO {priority} refused ({exc}); allow it with "
                f"CAP_SYS_NICE or an rtprio limit (/etc/security/limits.conf: '<user> - rtprio {priority}')")
    return lock_memory(what)


def lock_memory(what: str) -> str | None:
    """Keep this process's pages in memory once touched (``mlockall``: now and later mappings, on fault). None when
    done, else the reason, worded for the operator's log."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mlockall(_MCL_CURRENT | _MCL_FUTURE | _MCL_ONFAULT) == 0:
        return None
    error = os.strerror(ctypes.get_errno())
    return (f"{what} runs without its memory locked (mlockall: {error}): a page the kernel evicts can stall it; "
            f"allow it with CAP_IPC_LOCK or a memlock limit (/etc/security/limits.conf: '<user> - memlock unlimited')")


def fifo_requested() -> bool:
    """Whether this process was started with a SCHED_FIFO priority asked (``SCHED_FIFO_ENV``, not 0)."""
    return os.environ.get(SCHED_FIFO_ENV, "0") not in ("", "0")


def fifo_from_environment(what: str) -> str | None:
    """Apply the priority ``SCHED_FIFO_ENV`` names, if any (a node calls this once constructed, before it spins);
    None when done or not asked, else the reason it was refused."""
    if not fifo_requested():
        return None
    text = os.environ[SCHED_FIFO_ENV]
    try:
        priority = int(text)
    except ValueError:
        return f"{what}: {SCHED_FIFO_ENV}={text!r} is not a priority 1–99: normal scheduling"
    if not 1 <= priority <= 99:
        return f"{what}: {SCHED_FIFO_ENV}={text!r} is not a priority 1–99: normal scheduling"
    return use_fifo_scheduling(priority, what)


@contextlib.contextmanager
def scheduling_kept() -> Iterator[None]:
    """Give the calling thread back the scheduling it had, whatever the code inside does to it. SVT-AV1 (PyAV's
    libsvtav1, the LeRobot export's encoder) puts the thread that opens an encoder at SCHED_FIFO 99 when it may (as
    root): every process started afterwards from that thread inherited it (measured: a whole test suite at FIFO 99
    after one export, its real-time graphs starving each other)."""
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    try:
        yield
    finally:
        if (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority) != (policy, param.sched_priority):
            os.sched_setscheduler(0, policy, param)
