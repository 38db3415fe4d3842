"""What every benchmark shares: its error, its check for the robot SDK, and its percentile figures, named
quantity_stat_unit."""

from __future__ import annotations

from typing import Any

import numpy as np


class BenchError(RuntimeError):
    """A benchmark could not run (its message says why and what to do)."""


def require_robot_sdk() -> None:
    """Raise BenchError, saying how to install it, unless unitree_sdk2py (the virtual robot's and hw_bridge's) can
    be imported: before a benchmark that runs them starts anything."""
    try:
        import unitree_sdk2py  # noqa: F401
    except ImportError:
        raise BenchError("unitree_sdk2py is not installed: run scripts/install_robot_sdk.sh (./run test does)") \
            from None


def percentiles(prefix: str, samples_s: list[float], unit: str = "ms", digits: int = 4,
                with_max: bool = True) -> dict[str, float]:
    """p50, p99 (and max) of samples given in seconds, in ``unit`` ("ms" or "us"): ``{prefix}_p50_ms`` …"""
    values = np.asarray(samples_s) * {"ms": 1e3, "us": 1e6}[unit]
    out = {f"{prefix}_p50_{unit}": round(float(np.percentile(values, 50)), digits),
           f"{prefix}_p99_{unit}": round(float(np.percentile(values, 99)), digits)}
    if with_max:
        out[f"{prefix}_max_{unit}"] = round(float(values.max()), digits)
    return out


def jitter_p99_ms(periods_s: np.ndarray, period_s: float, digits: int = 3) -> float:
    """The 99th percentile of |period − ``period_s``| (ms) of a loop's periods given in seconds."""
    return round(float(np.percentile(np.abs(np.asarray(periods_s) - period_s), 99)) * 1e3, digits)


def across_runs(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Several runs of one benchmark as one result: ``runs`` (how many); ``median``, ``min`` and ``max`` of each
    numeric figure every run gave (a goal is judged on the spread, not on one run: a 10 s real-time figure varies
    several-fold from run to run on a shared machine); ``each``: every run's figures, in order."""
    if not runs:
        raise ValueError("across_runs needs at least one run")
    names = [name for name in runs[0] if all(_numeric(run.get(name)) for run in runs)]
    values = {name: np.array([float(run[name]) for run in runs]) for name in names}
    return {"runs": len(runs),
            "median": {name: round(float(np.median(v)), 4) for name, v in values.items()},
            "min": {name: float(v.min()) for name, v in values.items()},
            "max": {name: float(v.max()) for name, v in values.items()},
            "each": runs}


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
