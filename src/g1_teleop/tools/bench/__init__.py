"""Benchmarks for `g1-teleop bench NAME --json`: each returns flat figures named quantity_stat_unit.

Each benchmark lives in its own module, imported only when it runs (some start ROS or the robot's DDS).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

# name -> (module, function, what it measures)
BENCHMARKS: dict[str, tuple[str, str, str]] = {
    "ik": ("ik", "bench_ik", "dual-arm IK solve time and accuracy, with mink on the same cases"),
    "retarget": ("retarget", "bench_retarget", "retargeting on known motions (whole body: GMR's method), with mink"),
    "hands": ("hands", "bench_hands", "Dex3 hand retargeting (25 landmarks → 7 joints) per second per hand, pinch"),
    "sim": ("sim", "bench_sim", "simulator core: control period time, real-time factor"),
    "graph": ("graph", "bench_graph", "lockstep graph: real-time factor, each hop's wall time and each process's CPU "
              "time per control period; the same with a process per node"),
    "policy": ("policy", "bench_policy", "50 Hz lower-body step and the real-time command period"),
    "lowcmd": ("lowcmd", "bench_lowcmd", "hw_bridge's LowCmd path against the virtual robot"),
    "damping": ("damping", "bench_damping", "policy killed / ROS side stopped → first damping LowCmd at the robot"),
    "publish": ("publish", "bench_publish", "how long a ROS publish stalls when a subscriber dies"),
    "xr": ("xr", "bench_xr", "headset event → operator sample in the WebXR server (hands, controllers)"),
    "xr-video": ("xr_video", "bench_xr_video", "the robot's stereo frames from ROS to the headset page (fps, latency), "
                 "hand events meanwhile"),
    "xr-eyes": ("xr_eyes", "bench_xr_eyes", "the real-time sim graph's rendered eyes to the headset page (fps, "
                "render → page latency), the simulation's speed with and without the eyes"),
    "fuzz": ("g1_teleop.tools.fuzz", "bench_fuzz", "10⁴ fuzzed messages per input topic into the running sim graph"),
    "eyes": ("eyes", "bench_eyes", "eye cameras: render, JPEG, frames delivered, latency, sim speed with and without"),
}


def benchmark(name: str) -> Callable[[], dict[str, float]]:
    """The function that runs benchmark ``name``."""
    module, function, _ = BENCHMARKS[name]
    full = module if "." in module else f"g1_teleop.tools.bench.{module}"  # a dotted name: a module elsewhere
    return getattr(importlib.import_module(full), function)
