"""g1-teleop: the command-line entry point (sim, launch, record, dataset, report, latency, soak, call, topic,
teleop-keys, xr-cert, bench)."""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import signal
import sys
from pathlib import Path

from g1_teleop.control.learned.policy_files import PolicyFileError
from g1_teleop.launching.dds_discovery import discovery_environment


def _cmd_sim(args: argparse.Namespace) -> int:
    from g1_teleop.tools.sim_job import SimJobConfig, run_sim_job

    gantry = args.gantry if args.gantry is not None else args.controller == "hold"
    cfg = SimJobConfig(duration_s=args.duration, scenario=args.scenario, replay=args.replay,
                       body_stream=args.body_stream, body_squat=args.body_squat, out_dir=args.out, model=args.model,
                       lockstep=not args.realtime, gantry=gantry, viewer=args.viewer, controller=args.controller,
                       policy_dir=args.policy_dir, squat_config=args.squat_config, loco_config=args.loco_config,
                       pushes="; ".join(args.push), report=args.report)
    run_dir, summary = run_sim_job(cfg, log=lambda line: print(line, flush=True))
    keys = ("sim_time_s", "wall_time_s", "realtime_factor", "controller", "gantry", "pushes", "fell", "pelvis_min_z_m",
            "commands_published", "nodes_alive", "left_wrist_err_p95_m", "right_wrist_err_p95_m")
    print(json.dumps({k: summary[k] for k in keys}, indent=2))
    if summary["failure"]:
        unusable = summary["failure"].removeprefix("cannot start: ")
        print(f"g1-teleop sim: {unusable}" if unusable != summary["failure"] else f"run failed: {summary['failure']}",
              file=sys.stderr)
    print(f"run directory: {run_dir.resolve()}")
    if not summary["failure"]:
        return 0
    return 2 if summary["failure"].startswith("cannot start") else 1  # 2: the input was not usable


def _cmd_body_stream(args: argparse.Namespace) -> int:
    from g1_teleop.tools.body_stream_demo import write_demo_body_stream

    try:
        write_demo_body_stream(args.out, args.rate)
    except (ValueError, OSError) as exc:
        print(f"g1-teleop body-stream: {exc}", file=sys.stderr)
        return 2
    return 0


def _cmd_launch(args: argparse.Namespace) -> int:
    from g1_teleop.launching.graph_description import load_graph
    from g1_teleop.launching.process_runner import GraphProcesses

    graph = load_graph(args.graph)
    values = {}
    for item in args.arguments:
        name, sep, value = item.partition(":=")
        if not sep:
            raise ValueError(f"launch arguments are written name:=value, got {item!r}")
        values[name] = value
    if args.show_args:
        for arg in graph.arguments:
            kind = " | ".join(arg.choices) if arg.choices else arg.type
            print(f"{arg.name}:={arg.default}  ({kind}) {arg.description}")
        return 0
    processes = GraphProcesses(graph.resolve(values), namespace=args.namespace)
    try:
        processes.start()
    except KeyboardInterrupt:  # Ctrl-C while the nodes start: stop those already started
        processes.stop()
        return 0
    return processes.wait()


def _cmd_record(args: argparse.Namespace) -> int:
    import threading
    import time
    from datetime import datetime

    import rclpy
    from rclpy.signals import SignalHandlerOptions

    from g1_teleop.ros.executor import make_executor
    from g1_teleop.tools.bag_recorder import BagRecorder
    from g1_teleop.tools.lerobot_export import config_from_args

    try:
        buttons = config_from_args(args).episode_buttons
    except ValueError as exc:
        print(f"g1-teleop record: {exc}", file=sys.stderr)
        return 2
    out = args.out or Path("bags") / datetime.now().strftime("%Y%m%d-%H%M%S")
    stop = threading.Event()  # Ctrl-C or the graph stopping (SIGINT, SIGTERM): close the bag, then export
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    recorder = BagRecorder(out, topics=args.topics, use_sim_time=args.use_sim_time, namespace=args.namespace)
    if buttons is not None:
        recorder.watch_episodes(buttons, lambda event: print(f"  {event}", flush=True))
    executor = make_executor()
    executor.add_node(recorder)
    print(f"recording into {out} (Ctrl-C stops)", flush=True)
    start = last = time.monotonic()
    try:
        while not stop.is_set() and (args.duration is None or time.monotonic() - start < args.duration):
            executor.spin_once(timeout_sec=0.1)
            if time.monotonic() - last >= 2.0:
                last = time.monotonic()
                counts = recorder.writer.counts
                print(f"  {sum(counts.values())} messages on {len(counts)} topics", flush=True)
    finally:
        counts = recorder.close()
        executor.shutdown()
        recorder.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    for topic, count in sorted(counts.items()):
        print(f"  {topic}: {count}")
    print(f"bag: {out.resolve()}", flush=True)
    if args.dataset is not None:
        from g1_teleop.tools.lerobot_export import run_export

        for sig in (signal.SIGINT, signal.SIGTERM):  # the graph stopping again: the export finishes first
            signal.signal(sig, lambda *_: print("g1-teleop record: exporting the dataset first", flush=True))
        print("exporting the dataset …", flush=True)
        dataset = Path(args.dataset) if args.dataset else Path("datasets") / out.name
        return run_export([out], dataset, config_from_args(args), prog="g1-teleop record")
    return 0


def _cmd_dataset(args: argparse.Namespace) -> int:
    from g1_teleop.tools.lerobot_export import main_from_args

    return main_from_args(args)


def _cmd_policies(args: argparse.Namespace) -> int:
    from g1_teleop.control.learned.policy_files import OPENWBT_FILES, fetch, resolve_policy_dir, verify

    folder = resolve_policy_dir(args.dir)
    if args.action == "list":
        return _list_presets(folder)
    if args.action == "fetch":
        kwargs = {"base_url": args.base_url} if args.base_url else {}
        for path in fetch(folder, progress=lambda line: print(line, flush=True), **kwargs):
            print(f"ok  {path}")
        return 0
    for file in OPENWBT_FILES:  # verify
        print(f"ok  {verify(folder / file.name, file.sha256)}")
    return 0


def _list_presets(folder: Path) -> int:
    from g1_teleop.control.learned.inference import TORCH_INSTALL
    from g1_teleop.control.learned.policy_presets import summarize_presets

    rows = [("preset", "layout", "parameter", "policy file", "in the folder", "needs")]
    summaries = summarize_presets(folder)
    rows += [(s.name, s.layout, s.parameter, s.policy_file.name, "present" if s.present else "missing", s.needs or "-")
             for s in summaries]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print(f"policy folder: {folder}")
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    if any(s.needs == "PyTorch (not installed)" for s in summaries):
        print(f"TorchScript policies: {TORCH_INSTALL}")
    print("use one as loco_config:=NAME (launch) or --loco-config NAME (g1-teleop sim); its policy file goes in "
          "the policy folder")
    return 0


def _cmd_virtual_robot(args: argparse.Namespace) -> int:
    from g1_teleop.tools.virtual_robot import run_from_args

    return run_from_args(args)


def _cmd_call(args: argparse.Namespace) -> int:
    from g1_teleop.tools.service_call import run_from_args

    return run_from_args(args)


def _cmd_topic(args: argparse.Namespace) -> int:
    from g1_teleop.tools.topic_tools import run_from_args

    return run_from_args(args)


def _cmd_teleop_keys(args: argparse.Namespace) -> int:
    from g1_teleop.tools.keyboard_teleop import run_from_args

    return run_from_args(args)


def _cmd_xr_cert(args: argparse.Namespace) -> int:
    from g1_teleop.tools.xr_cert import run_from_args

    return run_from_args(args)


def _cmd_report(args: argparse.Namespace) -> int:
    from g1_teleop.tools.run_report import main_from_args

    return main_from_args(args)


def _cmd_soak(args: argparse.Namespace) -> int:
    from g1_teleop.tools.soak import ROBOT_DOMAIN_ID, ROS_DOMAIN_ID, SoakConfig, parse_duration, run_soak

    cfg = SoakConfig(duration_s=parse_duration(args.duration), interval_s=parse_duration(args.interval),
                     controller=args.controller, scenario=args.scenario,
                     ros_domain_id=ROS_DOMAIN_ID if args.ros_domain_id is None else args.ros_domain_id,
                     robot_domain_id=ROBOT_DOMAIN_ID if args.robot_domain_id is None else args.robot_domain_id,
                     state_timeout_s=args.state_timeout, stress_workers=args.stress, priority=args.priority,
                     control_cpus=args.control_cpus)
    try:
        result = run_soak(cfg, emit=lambda line: print(line, flush=True))
    except RuntimeError as exc:
        print(f"g1-teleop soak: {exc}", file=sys.stderr)
        return 1
    summary = result["summary"]
    print(json.dumps(summary) if args.json else json.dumps(summary, indent=2))
    return 0 if summary["safety_trips"] == 0 and not summary["nodes_dead"] else 1


def _cmd_latency(args: argparse.Namespace) -> int:
    from g1_teleop.tools.latency import main_from_args

    return main_from_args(args)


def _cmd_bench(args: argparse.Namespace) -> int:
    from g1_teleop.tools.bench import benchmark
    from g1_teleop.tools.bench.figures import BenchError

    runs: list[dict[str, float]] = []
    for n in range(1, args.runs + 1):
        which = f"g1-teleop bench {args.name}" + (f" (run {n} of {args.runs})" if args.runs > 1 else "")
        if args.runs > 1:
            print(which, file=sys.stderr, flush=True)
        try:
            runs.append(benchmark(args.name)())
        except BenchError as exc:
            print(f"{which}: {exc}", file=sys.stderr)
            if runs:  # (minutes of runs that did finish are kept: their figures, then exit 1)
                print(f"g1-teleop bench {args.name}: the figures of the {len(runs)} run(s) before it on stdout",
                      file=sys.stderr)
                _print_figures(runs, args.json)
            return 1
    _print_figures(runs, args.json)
    return 0


def _print_figures(runs: list[dict[str, float]], as_json: bool) -> None:
    """One run's figures as they are; several runs' median, min, max and each run (figures.across_runs)."""
    from g1_teleop.tools.bench.figures import across_runs

    figures = runs[0] if len(runs) == 1 else across_runs(runs)
    print(json.dumps(figures) if as_json else json.dumps(figures, indent=2))


def _positive_int(text: str) -> int:
    """An argument that is a whole number ≥ 1."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, got {text!r}")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    from g1_teleop.tools.bench import BENCHMARKS

    parser = argparse.ArgumentParser(prog="g1-teleop", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    sim = sub.add_parser("sim", help="run the simulation graph headless on a scenario and write a run directory",
                         description="Run the simulation graph (xr_input → retarget → policy → sim_bridge, composed in "
                                     "one process, and robot_state) headless, record it, and write summary.json, "
                                     "recording.npz and plots.")
    sim.add_argument("--duration", type=float, default=None,
                     help="simulated seconds (default: the scenario's duration, 38 s for the default one)")
    sim.add_argument("--scenario", default="default", help="scenario name in config/scenarios/ or a YAML path")
    sim.add_argument("--replay", default="", metavar="BAG",
                     help="replay the operator input (xr/*, joy) recorded in a bag (a run's bag/, or `g1-teleop "
                          "record`) instead of a scenario; in lockstep a run replayed into the same graph repeats")
    sim.add_argument("--body-stream", default="", metavar="NPZ",
                     help="the operator's whole body from a body stream file (`g1-teleop body-stream demo` writes "
                          "one) instead of a scenario: body_retarget drives the waist and arms, the legs stay with "
                          "the controller")
    sim.add_argument("--body-squat", action="store_true",
                     help="with --body-stream: the operator's pelvis height drives the squat height (body_squat)")
    sim.add_argument("--out", type=Path, default=None, help="run directory (default runs/sim-DATE-TIME)")
    sim.add_argument("--model", default="", help="robot model file (URDF or MJCF) instead of the project's")
    sim.add_argument("--realtime", action="store_true", help="run in real time instead of lockstep")
    sim.add_argument("--controller", choices=["builtin", "hold", "openwbt"], default="builtin",
                     help="legs: builtin (model-based standing and squat, balances, no weights), hold (the default "
                          "pose by joint PD, on the gantry) or openwbt (OpenWBT's squat/locomotion policies; see "
                          "`g1-teleop policies fetch`)")
    sim.add_argument("--policy-dir", default="", help="policy folder (default $G1_TELEOP_POLICY_DIR)")
    sim.add_argument("--loco-config", default="", metavar="NAME_OR_YAML",
                     help="walking (LOCOMOTION): a locomotion policy's configuration, a preset name (`g1-teleop "
                          "policies list`) or a YAML path; its policy file from the policy folder (default: "
                          "OpenWBT's with --controller openwbt, none with builtin)")
    sim.add_argument("--squat-config", default="", metavar="NAME_OR_YAML",
                     help="with --controller openwbt: the squat policy's configuration (default OpenWBT's)")
    sim.add_argument("--gantry", action=argparse.BooleanOptionalAction, default=None,
                     help="hold the torso with a virtual gantry (default: on with --controller hold, else off)")
    sim.add_argument("--push", action="append", default=[], metavar="START,FX,FY,FZ,DURATION",
                     help="push the pelvis with FX, FY, FZ newtons (world frame) from START for DURATION simulated "
                          "seconds, e.g. --push 5,0,40,0,0.2 (repeatable)")
    sim.add_argument("--viewer", action="store_true", help="open MuJoCo's viewer (needs a display)")
    sim.add_argument("--report", action=argparse.BooleanOptionalAction, default=True,
                     help="write report.html into the run directory (a few seconds after the run; same as "
                          "`g1-teleop report RUN_DIR`)")
    sim.set_defaults(func=_cmd_sim)

    body = sub.add_parser("body-stream", help="write a body stream file (the operator's 24 body points over time)",
                          description="demo: known G1 motions (standing still 2 s to calibrate, arm swings, waist "
                                      "turns, a squat, turning) as the body points of a 1.8 m operator, for "
                                      "`g1-teleop sim --body-stream` and source:=body")
    body.add_argument("kind", choices=["demo"], help="what to write")
    body.add_argument("out", type=Path, help="the .npz file to write")
    body.add_argument("--rate", type=float, default=30.0, help="frames per second (default 30, PICO's body rate "
                                                               "order)")
    body.set_defaults(func=_cmd_body_stream)

    launch = sub.add_parser("launch", help="run a node graph (the pip-environment launcher)",
                            description="Start every node of config/graphs/GRAPH.yaml as its own process; "
                                        "stops all when a required node dies or on Ctrl-C.")
    launch.add_argument("graph", help="graph name (sim, real) or a graph YAML path")
    launch.add_argument("arguments", nargs="*", help="launch arguments as name:=value")
    launch.add_argument("--namespace", default="", help="ROS namespace for every node, e.g. /g1")
    launch.add_argument("--show-args", action="store_true", help="list the graph's arguments and exit")
    launch.set_defaults(func=_cmd_launch)

    policies = sub.add_parser("policies", help="download or check OpenWBT's policies, list the presets",
                              description="fetch: download OpenWBT's ONNX policies and configs from upstream and "
                                          "check their sha256; verify: check the files already there; list: the "
                                          "policy presets (name, layout, policy file, what it needs) and whether "
                                          "their policy files are in the folder. The folder is --dir, else "
                                          "$G1_TELEOP_POLICY_DIR, else the user data folder.")
    policies.add_argument("action", choices=["fetch", "verify", "list"])
    policies.add_argument("--dir", default=None, help="policy folder")
    policies.add_argument("--base-url", default=None, help="download from this base URL instead of upstream")
    policies.set_defaults(func=_cmd_policies)

    record = sub.add_parser("record", help="record the graph's topics into a rosbag2 bag (MCAP)",
                            description="Subscribe to every topic of the topic contract (or --topics) and write "
                                        "them into a new bag folder until Ctrl-C: `ros2 bag record` for pip "
                                        "environments. Foxglove and PlotJuggler open the .mcap; `g1-teleop sim "
                                        "--replay` and xr_input source:=bag replay its operator topics.")
    record.add_argument("--out", type=Path, default=None, help="bag folder, new (default bags/DATE-TIME)")
    record.add_argument("--topics", nargs="+", default=None, help="record only these topics (default: all)")
    record.add_argument("--namespace", default="", help="the graph's ROS namespace, e.g. /g1")
    record.add_argument("--use-sim-time", action="store_true", help="log times from /clock (a simulation)")
    record.add_argument("--duration", type=float, default=None, help="stop after this many wall seconds")
    record.add_argument("--dataset", nargs="?", const="", default=None, metavar="OUT",
                        help="after recording (Ctrl-C, or the graph stopping), export the bag as a LeRobot dataset "
                             "into OUT (default datasets/ and the bag's name; the episodes marked with the joy "
                             "buttons X start/end, Y discard, or the whole bag as one; the options of `g1-teleop "
                             "dataset`: --task, --fps, --episode-buttons, …)")
    from g1_teleop.tools.lerobot_export import add_arguments as add_dataset_arguments

    add_dataset_arguments(record, with_sources=False)
    record.set_defaults(func=_cmd_record)

    dataset = sub.add_parser("dataset", help="export bags as a LeRobot dataset (the episodes marked in them, or "
                             "one per bag)",
                             description="Resample each bag (a run directory, a bag folder or .mcap) on a fixed "
                                         "grid of the graph's clock (50 Hz) and write the episodes the operator "
                                         "marked with the joy buttons (X start/end, Y discard; none: the whole bag) "
                                         "into a new LeRobot dataset (v3.0): observation.state (29 measured "
                                         "positions), observation.velocity, action (the 29 joint_command "
                                         "positions), the operator's wrists and head and the eyes' images as AV1 video "
                                         "when recorded.")
    add_dataset_arguments(dataset)
    dataset.set_defaults(func=_cmd_dataset)

    from g1_teleop.tools.virtual_robot import add_arguments as add_virtual_robot_arguments

    virtual = sub.add_parser("virtual-robot", help="a MuJoCo G1 behind the robot's own DDS interface",
                             description="Publish rt/lowstate at 500 Hz, apply rt/lowcmd (CRC checked) with PD "
                                         "every physics step, read rt/wirelesscontroller; Ctrl-C or SIGTERM stops it.")
    add_virtual_robot_arguments(virtual)
    virtual.set_defaults(func=_cmd_virtual_robot)

    from g1_teleop.tools import keyboard_teleop, service_call, topic_tools

    call = sub.add_parser("call", help="call an operator service (std_srvs/Trigger) of the running graph",
                          description="`ros2 service call … std_srvs/srv/Trigger` for pip environments: prints the "
                                      "answer; exit 0 accepted, 1 refused (the reason printed), 2 no server answered.")
    service_call.add_arguments(call)
    call.set_defaults(func=_cmd_call)

    topic = sub.add_parser("topic", help="list the graph's topics, print one's messages or measure its rate",
                           description="`ros2 topic list/echo/hz` for pip environments: types come from the graph, "
                                       "subscriptions match their publishers' QoS.")
    topic_tools.add_arguments(topic)
    topic.set_defaults(func=_cmd_topic)

    keys = sub.add_parser("teleop-keys", help="drive cmd_vel and the modes from the keyboard",
                          description="teleop_twist_keyboard for the policy's LOCOMOTION: cmd_vel at 20 Hz from "
                                      "keys shown on screen, mode and e-stop requests, zero velocity on exit.")
    keyboard_teleop.add_arguments(keys)
    keys.set_defaults(func=_cmd_teleop_keys)

    from g1_teleop.tools import xr_cert

    cert = sub.add_parser("xr-cert", help="make the WebXR server's certificate and show how a headset trusts it",
                          description="A local CA and a server certificate for this machine's addresses (the CA is "
                                      "kept when made again), and the steps for Vision Pro, Quest and PICO.")
    xr_cert.add_arguments(cert)
    cert.set_defaults(func=_cmd_xr_cert)

    report = sub.add_parser("report", help="an HTML report of a run directory or a bag (plots and figures)",
                            description="Wrist tracking error, joint targets against measured angles, modes and "
                                        "safety events, loop periods, real-time factor and per-hop latency of a "
                                        "run directory (g1-teleop sim) or a bag, as one HTML page with its plots.")
    report.add_argument("source", type=Path, help="a run directory (g1-teleop sim) or a bag (folder or .mcap)")
    report.add_argument("--out", type=Path, default=None, help="the HTML file (default: RUN_DIR/report.html, or "
                        "<bag>_report.html beside a bag)")
    report.add_argument("--model", default="", help="the robot model of a bag alone (default: the run's, else "
                        "urdf/g1_29dof.urdf)")
    report.set_defaults(func=_cmd_report)
    lat = sub.add_parser("latency", help="per-hop latency p50/p95/p99 from a bag or the running graph",
                         description="operator sample → xr/* → teleop/arm_target → joint_command (→ LowCmd with "
                                     "--robot-interface), from a bag's publish times and stamps or live for "
                                     "--duration seconds; says which hops a source cannot measure.")
    lat.add_argument("bag", nargs="?", default=None, help="a bag (folder or .mcap; a run directory's bag/); none: "
                     "measure the running graph live for --duration")
    lat.add_argument("--json", action="store_true", help="one JSON object on one line")
    lat.add_argument("--duration", type=float, default=10.0, help="live: wall seconds to listen (default 10)")
    lat.add_argument("--namespace", default="", help="live: the graph's ROS namespace, e.g. /g1")
    lat.add_argument("--use-sim-time", action="store_true", help="live: a simulation (log on /clock)")
    lat.add_argument("--robot-interface", default="", help="live: also listen to rt/lowcmd on the robot's DDS on "
                     "this interface (lo for the virtual robot) for the LowCmd hops")
    lat.add_argument("--robot-domain-id", type=int, default=0, help="live: the robot's DDS domain (default 0)")
    lat.set_defaults(func=_cmd_latency)
    soak = sub.add_parser("soak", help="hours of the real-time graph against the virtual robot, ACTIVE, the "
                          "scenario on loop: memory, deadline misses and safety trips every interval",
                          description="Exit code 0 only when nothing tripped and every node lived.")
    soak.add_argument("--duration", default="1h", help="how long: 1h, 10m, 90s (default 1h)")
    soak.add_argument("--interval", default="1m", help="a line of figures this often (default 1m)")
    soak.add_argument("--controller", choices=["builtin", "hold", "openwbt"], default="builtin")
    soak.add_argument("--scenario", default="default", help="scenario name in config/scenarios/ or a YAML path")
    soak.add_argument("--ros-domain-id", type=int, default=None, help="the graph's ROS domain (default 229: private)")
    soak.add_argument("--robot-domain-id", type=int, default=None, help="the virtual robot's DDS domain (default 228)")
    soak.add_argument("--state-timeout", type=float, default=None, metavar="S",
                      help="hw_bridge's LowState timeout (default the bridge's 0.1 s; a virtual robot sharing a small "
                           "machine with the graph may stall longer)")
    soak.add_argument("--stress", type=int, default=0, metavar="N",
                      help="run stress-ng --cpu N beside the graph while ACTIVE (not niced: N busy cores; "
                           "apt-get install stress-ng)")
    soak.add_argument("--priority", type=int, default=0, metavar="P",
                      help="SCHED_FIFO P for hw_bridge's LowCmd process and the virtual robot (lowcmd_priority), "
                           "P-10 for the policy and hw_bridge's ROS side (control_priority), P-15 for xr_input and "
                           "retarget (operator_priority); needs CAP_SYS_NICE; default 0: normal scheduling")
    soak.add_argument("--control-cpus", default="", metavar="LIST",
                      help="cores kept for the command chain (the graph's control_cpus, e.g. 1): xr_input, retarget "
                           "and the policy run there only, the graph's other processes, this one and stress-ng on "
                           "the other cores only; default: none")
    soak.add_argument("--json", action="store_true", help="the final figures as one JSON object on one line")
    soak.set_defaults(func=_cmd_soak)
    bench = sub.add_parser("bench", help="run a benchmark and print its figures as JSON")
    bench.add_argument("name", choices=sorted(BENCHMARKS))
    bench.add_argument("--json", action="store_true", help="one JSON object on one line")
    bench.add_argument("--runs", type=_positive_int, default=1, metavar="N",
                       help="run it N times: each figure's median, min and max over the runs, and every run's "
                            "figures (default 1: the run's figures alone)")
    bench.set_defaults(func=_cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=True)  # kill -USR1: where each thread is
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started as a script's background job: Python then leaves
        signal.signal(signal.SIGINT, signal.default_int_handler)  # SIGINT ignored, and Ctrl-C would stop no command
    os.environ.update(discovery_environment(os.environ))  # this process's own ROS nodes too
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError, PolicyFileError) as exc:
        print(f"g1-teleop {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
