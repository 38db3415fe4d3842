"""`g1-teleop report`: one HTML page (PNG plots embedded) of what the robot did in a run and how fast the graph ran.

From a run directory (summary.json, bag/ and recording.npz of `g1-teleop sim`) or from a bag alone. The figures
come from the bag's messages whenever there is a bag (tools/bag_analysis.py reads them with the main job's
recorder's rules), so the report of a run directory and of its bag agree; recording.npz serves a run without a bag,
and summary.json gives the run's facts (controller, wall time, failure). The bag holds the messages up to the
graph's stop, the recording up to the run's duration: the report may count a last command more. Plots: wrist
tracking error over time; targets against measured angles of chosen joints (arms, a leg, the waist); the mode
timeline with the safety and diagnostics events; the loop periods of joint_command and joint_states (jitter); the
real-time factor; per-hop latency histograms (tools/latency.py). A table of the figures, the run's facts and the
events. A bag that was cut or damaged is read up to the damage, and the report says so at its top.
"""

from __future__ import annotations

import base64
import html
import io
import json
import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from g1_teleop.core.rosbag import Bag, BagError
from g1_teleop.tools.bag_analysis import (
    Event,
    Periods,
    RealTime,
    diagnostics_events,
    mode_timeline,
    periods,
    read_run_bag,
    real_time,
    recording_from_bag,
    shift_recording,
    time_origin_ns,
)
from g1_teleop.tools.latency import GOALS_MS, HOPS, HopLatencies, hop_latencies
from g1_teleop.tools.run_analysis import summarize, wrist_error_series
from g1_teleop.tools.run_recording import Recording

REPORT_JOINTS = ("left_shoulder_pitch_joint", "left_elbow_joint", "right_shoulder_pitch_joint", "right_elbow_joint",
                 "left_hip_pitch_joint", "left_knee_joint", "waist_yaw_joint", "waist_pitch_joint")
PLOTS = {  # file stem → caption; every report has each of them (a plot says when its data are missing)
    "wrist_error": "Wrist tracking error over time",
    "joints": "Joint targets against measured angles",
    "modes_events": "Mode timeline and safety events",
    "loop_periods": "Loop periods (jitter)",
    "realtime": "Real-time factor",
    "latency": "Per-hop latency",
}
LEVELS = {0: "OK", 1: "WARN", 2: "ERROR", 3: "STALE"}


@dataclass
class ReportData:
    """Everything the report shows, read from a run directory or a bag."""

    source: Path
    recording: Recording
    joint_names: tuple[str, ...]
    fk: object
    summary: dict = field(default_factory=dict)  # summary.json of a run directory
    bag: Bag | None = None
    origin_ns: int = 0
    problems: list[str] = field(default_factory=list)  # shown at the top: damage, missing parts


def default_output(source: Path) -> Path:
    """report.html in a run directory; <bag>_report.html beside a bag folder (or .mcap file)."""
    source = Path(source)
    if _is_run_dir(source):
        return source / "report.html"
    folder = source.parent if source.suffix == ".mcap" else source
    return folder.parent / f"{folder.name}_report.html"


def _is_run_dir(path: Path) -> bool:
    return path.is_dir() and ((path / "summary.json").is_file() or (path / "recording.npz").is_file())


def load(source: str | Path, model: str = "") -> ReportData:
    """The report's data from a run directory or a bag (folder or .mcap). BagError, OSError, ValueError name
    what cannot be read."""
    from g1_teleop.core.pinocchio_model import build_pinocchio_model
    from g1_teleop.core.robot_description import load_robot
    from g1_teleop.retarget.arm_ik import DualArmIK

    source = Path(source)
    if not source.exists():
        raise FileNotFoundError(f"{source} does not exist: give a run directory (g1-teleop sim --out) or a bag")
    problems: list[str] = []
    summary: dict = {}
    bag_path: Path | None = source
    if _is_run_dir(source):
        if (source / "summary.json").is_file():
            summary = json.loads((source / "summary.json").read_text())
        bag_path = source / "bag" if (source / "bag").exists() else None
        if bag_path is None:
            problems.append(f"{source} has no bag/: no loop periods, real-time factor, modes, events or latency")
    robot = load_robot(model=model or summary.get("model") or None)
    fk = DualArmIK(build_pinocchio_model(robot, floating_base=False), robot.joint_names).end_effector_poses
    bag = None
    if bag_path is not None:
        bag = read_run_bag(bag_path, keep_damaged=True)
        if bag.damage is not None and not any(bag.messages.values()):
            raise BagError(str(bag.damage))  # nothing to report
        problems += [str(bag.damage)] if bag.damage is not None else []
        problems += bag.notes
    origin = time_origin_ns(bag) if bag is not None else 0
    if bag is not None and bag.get("joint_states"):  # the bag has every message: a run's report is its bag's
        recording = shift_recording(recording_from_bag(bag, robot.joint_names), origin / 1e9)
    elif (source / "recording.npz").is_file():
        recording = Recording.load(source / "recording.npz")
    else:
        where = f"no joint_states in {bag_path}" if bag_path is not None else "no bag/"
        raise BagError(f"{source}: {where} and no recording.npz: nothing to report (did the run start? "
                       f"{'summary.json says: ' + str(summary.get('failure')) if summary.get('failure') else ''})")
    return ReportData(source, recording, robot.joint_names, fk, summary, bag, origin, problems)


def figures(data: ReportData, latency: HopLatencies | None, loops: list[Periods], rt: RealTime | None) -> dict:
    """The figures table: the run's tracking figures (run_analysis.summarize), loops, real time, latency p99s."""
    out: dict[str, object] = {k: v for k, v in summarize(data.recording, data.fk).items()
                              if k != "operator_to_command_p50_s"}
    if data.origin_ns:
        out["sim_time_s"] = float(data.recording.state_t[-1] - data.recording.state_t[0]) \
            if len(data.recording.state_t) else 0.0
        out["time_origin_unix_s"] = data.origin_ns / 1e9
    for loop in loops:
        out.update(loop.figures())
    if rt is not None and rt.overall is not None:
        out["realtime_factor"] = round(rt.overall, 3)
        if len(rt.factor):
            out["realtime_factor_min_1s"] = round(float(rt.factor.min()), 3)
    if latency is not None:
        out["latency_clock"] = latency.clock
        for hop, entry in latency.figures()["hops"].items():
            if entry["measured"]:
                out[f"{hop}_p50_ms"] = entry["p50_ms"]
                out[f"{hop}_p99_ms"] = entry["p99_ms"]
    return out


def write_report(source: str | Path, out: str | Path | None = None, model: str = "") -> Path:
    """Read ``source`` (a run directory or a bag) and write its HTML report; returns its path."""
    data = load(source, model)
    out = Path(out) if out else default_output(Path(source))
    bag = data.bag
    latency = hop_latencies(bag, joint_names=data.joint_names) if bag is not None else None
    loops = [periods(bag, topic, data.origin_ns) for topic in ("joint_command", "joint_states")] if bag else []
    rt = real_time(bag, data.origin_ns) if bag is not None else None
    modes = mode_timeline(bag, data.origin_ns) if bag is not None else []
    events = diagnostics_events(bag, data.origin_ns) if bag is not None else []
    table = figures(data, latency, loops, rt)
    images = {
        "wrist_error": _plot_wrist_error(data),
        "joints": _plot_joints(data),
        "modes_events": _plot_modes_events(data, modes, events),
        "loop_periods": _plot_periods(loops),
        "realtime": _plot_realtime(rt),
        "latency": _plot_latency(latency),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(_html(data, table, images, events, latency))
    return out


def write_run_report(run_dir: str | Path, log=print) -> Path | None:
    """The main job's call after a run: run_dir/report.html; a report that cannot be made is logged in one
    line and the run goes on (None)."""
    try:
        path = write_report(run_dir)
    except (BagError, OSError, ValueError) as exc:
        log(f"no report: {exc}")
        return None
    except Exception as exc:  # a report never fails a run
        log(f"no report for {run_dir}: {type(exc).__name__}: {exc} (a bug: `g1-teleop report {run_dir}` shows "
            "where)")
        return None
    log(f"report: {path}")
    return path


# -- plots ------------------------------------------------------------------------------------------------------


def _figure(rows: int = 1, cols: int = 1, size: tuple[float, float] = (11, 4), **kwargs):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(rows, cols, figsize=size, squeeze=False, **kwargs)


def _png(fig) -> bytes:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    return buffer.getvalue()


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


def _plot_wrist_error(data: ReportData) -> bytes:
    fig, axes = _figure(size=(11, 3.5))
    ax = axes[0, 0]
    t, left, right = wrist_error_series(data.recording, data.fk)
    if len(t):
        ax.plot(t, left * 1e3, "C0", lw=1.0, label="left wrist")
        ax.plot(t, right * 1e3, "C3", lw=1.0, label="right wrist")
        ax.set_xlabel("time [s]")
        ax.set_ylabel("error [mm]")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right")
    else:
        _empty(ax, "no wrist targets with measured joints after the first second")
    ax.set_title("wrist position error (target − reached by forward kinematics of the measured joints)")
    return _png(fig)


def _plot_joints(data: ReportData) -> bytes:
    rec = data.recording
    fig, axes = _figure(4, 2, size=(11, 9), sharex=True)
    for k, name in enumerate(REPORT_JOINTS):
        ax = axes[k % 4, k // 4]
        if name in data.joint_names and len(rec.state_t):
            j = data.joint_names.index(name)
            if len(rec.command_t):
                ax.plot(rec.command_t, rec.command_q[:, j], "k--", lw=1.0, label="target (joint_command)")
            ax.plot(rec.state_t, rec.state_q[:, j], "C1", lw=1.0, label="measured (joint_states)")
            ax.grid(alpha=0.3)
        else:
            _empty(ax, "no data")
        ax.set_ylabel(f"{name.removesuffix('_joint')} [rad]", fontsize=8)
    axes[0, 0].legend(loc="best", fontsize=7)
    for col in range(2):
        axes[-1, col].set_xlabel("time [s]")
    fig.suptitle("targets against measured angles: arms, the left leg, the waist")
    return _png(fig)


def _plot_modes_events(data: ReportData, modes: list[tuple[float, str]], events: list[Event]) -> bytes:
    fig, axes = _figure(2, 1, size=(11, 4.5), sharex=True, gridspec_kw={"height_ratios": [1, 2]})
    ax_mode, ax_events = axes[0, 0], axes[1, 0]
    rec = data.recording
    end = float(rec.state_t[-1]) if len(rec.state_t) else (modes[-1][0] if modes else 1.0)
    if modes:
        names = sorted({m for _, m in modes})
        for i, (t, mode) in enumerate(modes):
            t_next = modes[i + 1][0] if i + 1 < len(modes) else end
            ax_mode.axvspan(t, max(t_next, t + 1e-3), color=f"C{names.index(mode)}", alpha=0.35)
            ax_mode.text(t, 0.5, f" {mode}", va="center", fontsize=8)
        ax_mode.set_yticks([])
        ax_mode.set_xlim(min(0.0, modes[0][0]), end)
    else:
        _empty(ax_mode, "no teleop/mode message")
    ax_mode.set_title("teleop/mode")
    if events:
        sources = sorted({e.source for e in events})
        colors = {0: "C2", 1: "C1", 2: "C3", 3: "0.5"}
        for level in sorted({e.level for e in events}):
            chosen = [e for e in events if e.level == level]
            ax_events.scatter([e.t_s for e in chosen], [sources.index(e.source) for e in chosen], s=18,
                              color=colors.get(level, "k"), label=LEVELS.get(level, str(level)))
        ax_events.set_yticks(range(len(sources)), [s.lstrip("/") for s in sources], fontsize=8)
        ax_events.legend(loc="upper right", fontsize=7)
        ax_events.grid(alpha=0.3)
    else:
        _empty(ax_events, "no diagnostics in the source")
    ax_events.set_title("diagnostics: each change of a node's level or message (hw_bridge: its safety state)")
    ax_events.set_xlabel("time [s]")
    return _png(fig)


def _plot_periods(loops: list[Periods]) -> bytes:
    fig, axes = _figure(len(loops) or 1, 2, size=(11, 3.2 * max(len(loops), 1)),
                        gridspec_kw={"width_ratios": [3, 1]})
    if not loops:
        _empty(axes[0, 0], "no bag: no loop periods")
        _empty(axes[0, 1], "")
    for row, loop in enumerate(loops):
        ax_t, ax_h = axes[row, 0], axes[row, 1]
        if len(loop.wall_ms):
            ax_t.plot(loop.t_s, loop.wall_ms, ".", ms=2, color=f"C{row}")
            ax_t.axhline(loop.nominal_ms, color="k", ls=":", lw=1, label=f"stamps' period {loop.nominal_ms:.1f} ms")
            ax_t.set_ylabel("period [ms]")
            ax_t.legend(loc="upper right", fontsize=7)
            ax_t.grid(alpha=0.3)
            ax_h.hist(loop.wall_ms, bins=50, color=f"C{row}")
            ax_h.set_xlabel("period [ms]")
            ax_h.set_yscale("log")
        else:
            _empty(ax_t, f"no {loop.topic} in the bag")
            _empty(ax_h, "")
        ax_t.set_title(f"{loop.topic}: time between publications of successive stamps (system clock)")
    axes[-1, 0].set_xlabel("time [s]")
    return _png(fig)


def _plot_realtime(rt: RealTime | None) -> bytes:
    fig, axes = _figure(1, 2, size=(11, 3.5))
    ax_tt, ax_f = axes[0, 0], axes[0, 1]
    if rt is None or not len(rt.wall_s):
        _empty(ax_tt, "no /clock or joint_states in the source")
        _empty(ax_f, "")
        return _png(fig)
    ax_tt.plot(rt.wall_s, rt.graph_s, "C0", lw=1.2, label="graph clock")
    ax_tt.plot(rt.wall_s, rt.wall_s, "k:", lw=1, label="real time")
    ax_tt.set_xlabel("wall time [s] (publish times)")
    ax_tt.set_ylabel("graph time [s]")
    ax_tt.legend(loc="upper left", fontsize=8)
    ax_tt.grid(alpha=0.3)
    ax_tt.set_title(f"graph clock against wall time (overall factor {rt.overall:.3f})")
    if len(rt.factor):
        ax_f.plot(rt.factor_t_s, rt.factor, "C0.-", ms=3)
        ax_f.axhline(1.0, color="k", ls=":", lw=1)
        ax_f.set_ylim(0, max(1.2, float(rt.factor.max()) * 1.1))
        ax_f.grid(alpha=0.3)
    else:
        _empty(ax_f, "shorter than one window")
    ax_f.set_xlabel("time [s]")
    ax_f.set_title(f"real-time factor over {rt.window_s:g} s windows")
    return _png(fig)


def _plot_latency(latency: HopLatencies | None) -> bytes:
    hops = [h for h in HOPS if latency is not None and len(latency.ms.get(h, ()))]
    cols = 2
    rows = max(1, (len(hops) + cols - 1) // cols)
    fig, axes = _figure(rows, cols, size=(11, 2.6 * rows))
    if not hops:
        why = "no bag" if latency is None else next(iter(latency.unmeasured.values()), "no sample")
        _empty(axes[0, 0], f"not measured: {why}"[:110])
        _empty(axes[0, 1], "")
        return _png(fig)
    for k, hop in enumerate(hops):
        ax = axes[k // cols, k % cols]
        values = latency.ms[hop]
        low, high = float(values.min()), float(values.max())
        span = (low - 0.5, high + 0.5) if high - low < 0.05 else (low, high)  # (a constant: one bar, few ticks)
        ax.hist(values, bins=40, range=span, color="C0")
        for p, style in ((50, "-"), (99, "--")):
            value = float(np.percentile(values, p))
            ax.axvline(value, color="k", ls=style, lw=1, label=f"p{p} {value:.2f} ms")
        if hop in GOALS_MS:
            ax.axvline(GOALS_MS[hop], color="C3", lw=1.5, label=f"goal p99 ≤ {GOALS_MS[hop]:g} ms")
        ax.set_title(HOPS[hop], fontsize=8)
        ax.set_xlabel("ms")
        ax.legend(loc="upper right", fontsize=7)
    for k in range(len(hops), rows * cols):
        axes[k // cols, k % cols].axis("off")
    fig.suptitle(f"per-hop latency ({latency.clock})")
    return _png(fig)


# -- page -------------------------------------------------------------------------------------------------------


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


def _rows(items) -> str:
    return "".join(f"<tr><td>{html.escape(str(k))}</td><td>{html.escape(_fmt(v))}</td></tr>" for k, v in items)


def _html(data: ReportData, table: dict, images: dict[str, bytes], events: list[Event],
          latency: HopLatencies | None) -> str:
    e = html.escape
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>g1_teleop report: {e(data.source.name)}"
             "</title><style>body{font-family:sans-serif;margin:1.5em;max-width:1150px}table{border-collapse:"
             "collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;font-size:13px;text-align:left}"
             ".problem{background:#fee;border:1px solid #c00;padding:.5em}img{max-width:100%}</style></head><body>",
             f"<h1>g1_teleop report</h1><p>source: <code>{e(str(data.source.resolve()))}</code>; written "
             f"{datetime.now().isoformat(timespec='seconds')}</p>"]
    for problem in data.problems:
        parts.append(f"<p class='problem'>{e(problem)}</p>")
    if data.summary:
        keys = ("controller", "scenario", "lockstep", "gantry", "sim_time_s", "wall_time_s", "realtime_factor",
                "fell", "nodes_alive", "nodes_total", "failure", "model")
        parts.append("<h2>Run</h2><table>" + _rows((k, data.summary[k]) for k in keys if k in data.summary)
                     + "</table>")
    parts.append("<h2 id='figures'>Figures</h2><table class='figures'>" + _rows(table.items()) + "</table>")
    if latency is not None:
        rows = []
        for entry in latency.figures()["hops"].values():
            if entry["measured"]:
                goal = (f" (goal ≤ {entry['goal_p99_ms']:g}: {'met' if entry['goal_met'] else 'NOT met'})"
                        if "goal_p99_ms" in entry else "")
                rows.append(f"<tr><td>{e(entry['hop'])}</td><td>{entry['count']}</td><td>{entry['p50_ms']}</td>"
                            f"<td>{entry['p95_ms']}</td><td>{entry['p99_ms']}{e(goal)}</td></tr>")
            else:
                rows.append(f"<tr><td>{e(entry['hop'])}</td><td colspan='4'>not measured: {e(entry['why'])}</td></tr>")
        parts.append(f"<h2>Latency per hop ({e(latency.clock)})</h2><table><tr><th>hop</th><th>n</th><th>p50 ms"
                     "</th><th>p95 ms</th><th>p99 ms</th></tr>" + "".join(rows) + "</table>")
        parts += [f"<p>{e(note)}</p>" for note in latency.notes]
    for stem, caption in PLOTS.items():
        encoded = base64.b64encode(images[stem]).decode()
        parts.append(f"<h2>{e(caption)}</h2><img id='{stem}' alt='{e(caption)}' src='data:image/png;base64,{encoded}'>")
    if events:
        parts.append("<h2>Events (diagnostics changes)</h2><table><tr><th>t [s]</th><th>node</th><th>level</th>"
                     "<th>message</th></tr>" + "".join(
                         f"<tr><td>{ev.t_s:.3f}</td><td>{e(ev.source)}</td><td>{LEVELS.get(ev.level, ev.level)}</td>"
                         f"<td>{e(ev.message)}</td></tr>" for ev in events[:500]) + "</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def main_from_args(args) -> int:
    """`g1-teleop report` (cli.py)."""
    try:
        path = write_report(args.source, args.out, args.model)
    except (BagError, OSError, ValueError) as exc:
        print(f"g1-teleop report: {exc}", file=sys.stderr)
        return 1
    print(f"report: {path.resolve()}")
    return 0

