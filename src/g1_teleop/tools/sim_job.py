"""The main job: run the simulation graph headless for a while, record it, write a run directory.

The graph runs as the simulation graph file composes it (g1_teleop.launching.process_runner: the control chain in one
process, robot_state in another); a recorder node in this process collects the topics. The run directory holds
summary.json, recording.npz, nodes.log, PNG plots, the bag and report.html (g1_teleop.tools.run_report, unless
``report`` is off).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from g1_teleop.core.mujoco_model import build_mujoco_model
from g1_teleop.core.paths import scenario_path
from g1_teleop.core.pinocchio_model import build_pinocchio_model
from g1_teleop.core.robot_description import Robot, load_robot
from g1_teleop.launching.graph_description import load_graph
from g1_teleop.launching.process_runner import GraphProcesses
from g1_teleop.operator.body_stream import load_body_stream
from g1_teleop.operator.input_sources import BodyStreamPlayer, OperatorRecording
from g1_teleop.operator.scenario import Scenario
from g1_teleop.retarget.arm_ik import DualArmIK
from g1_teleop.sim.simulator import parse_pushes
from g1_teleop.tools.run_analysis import plot, summarize
from g1_teleop.tools.run_recording import Recording
from g1_teleop.tools.run_report import write_run_report

DRAIN_S = 0.3  # after the graph stops: its last messages reach both of this process's subscribers
LAST_COMMAND_WAIT_S = 10.0  # lockstep, at the end: wall seconds the last period's command may take
CHECK_PERIOD_S = 0.1  # how often the job looks for a required node that exited


@dataclass(frozen=True)
class SimJobConfig:
    duration_s: float | None = None  # None: the scenario's (or the replayed bag's) duration
    scenario: str = "default"
    replay: str = ""  # a bag whose operator topics replace the scenario (xr_input source bag)
    body_stream: str = ""  # a body stream file that replaces the scenario (xr_input source body: body_retarget)
    body_squat: bool = False  # with body_stream: the operator's pelvis height drives the squat height
    out_dir: Path | None = None  # None: runs/sim-<date>-<time> in the working directory
    model: str = ""
    lockstep: bool = True
    gantry: bool = False
    controller: str = "builtin"  # builtin | hold | openwbt
    pushes: str = ""  # external forces on the pelvis, "START,FX,FY,FZ,DURATION; ..." (simulator.parse_pushes)
    policy_dir: str = ""
    squat_config: str = ""  # the policy node's squat_config and loco_config: preset names or YAML paths
    loco_config: str = ""
    viewer: bool = False
    startup_timeout_s: float = 60.0  # wall seconds for the simulator's first clock message
    stall_timeout_s: float = 30.0  # wall seconds without simulated time advancing
    report: bool = True  # write report.html (a few seconds of plotting after the run)

    def __post_init__(self) -> None:
        if self.duration_s is not None and not self.duration_s > 0:
            raise ValueError(f"--duration must be positive, got {self.duration_s}")
        parse_pushes(self.pushes)
        if self.replay and self.body_stream:
            raise ValueError("--replay and --body-stream each replace the scenario: give one of them")
        if self.body_squat and not self.body_stream:
            raise ValueError("--body-squat needs --body-stream (the operator's pelvis comes from the body stream)")


def run_sim_job(cfg: SimJobConfig, log: Callable[[str], None] = print) -> tuple[Path, dict]:
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    from g1_teleop.ros.executor import make_executor
    from g1_teleop.ros.node_main import StopOnSignal
    from g1_teleop.tools.bag_recorder import BagRecorder
    from g1_teleop.tools.run_recorder import Recorder

    run_dir = cfg.out_dir or Path("runs") / datetime.now().strftime("sim-%Y%m%d-%H%M%S")
    run_dir.mkdir(parents=True, exist_ok=True)
    try:  # a bad model, scenario or bag fails here, before any process starts
        robot, duration_s = _preflight(cfg)
    except (ValueError, OSError) as exc:  # RobotConfigError, ModelFileError, ScenarioError, BagError, …
        failure = f"cannot start: {exc}"
        log(failure)
        summary = {**summarize(Recording(), _no_kinematics), "failure": failure, "model": cfg.model,
                   "wall_time_s": 0.0, "realtime_factor": None, "controller": cfg.controller, "gantry": cfg.gantry,
                   "pushes": [], "nodes_alive": 0, "nodes_total": 0,
                   "scenario": cfg.replay or cfg.body_stream or cfg.scenario}
        (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        return run_dir, summary
    cfg = dataclasses.replace(cfg, duration_s=cfg.duration_s or duration_s)
    nodes = load_graph("sim").resolve({
        "source": "bag" if cfg.replay else "body" if cfg.body_stream else "scenario",
        "bag": str(Path(cfg.replay).resolve()) if cfg.replay else "",
        "body_stream": str(Path(cfg.body_stream).resolve()) if cfg.body_stream else "",
        "body_squat": str(cfg.body_squat).lower(), "scenario": cfg.scenario, "model": cfg.model,
        "lockstep": str(cfg.lockstep).lower(),
        "gantry": str(cfg.gantry).lower(), "viewer": str(cfg.viewer).lower(), "wait_for_start": "true",
        "stop_at": str(cfg.duration_s),
        "controller": cfg.controller, "policy_dir": cfg.policy_dir, "pushes": cfg.pushes,
        "squat_config": cfg.squat_config, "loco_config": cfg.loco_config,
    })
    env = {"ROS_LOG_DIR": str((run_dir / "ros_logs").resolve())}
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    node_log = (run_dir / "nodes.log").open("w")

    def node_output(line: str) -> None:
        node_log.write(line + "\n")
        if any(level in line for level in ("[WARN]", "[ERROR]", "[FATAL]", "Traceback")):
            log(line)

    graph = GraphProcesses(nodes, env=env, output=node_output)
    # SIGINT and SIGTERM interrupt the run, which still writes its figures (rclpy's own handler would shut the
    # context down under the spin loop: an ExternalShutdownException traceback at SIGTERM)
    StopOnSignal()
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    recorder = Recorder(robot.joint_names, node_name="sim_job_recorder", wrists=not cfg.body_stream)
    bag_dir = run_dir / "bag"
    if bag_dir.exists():
        log(f"replacing the bag of an earlier run in {bag_dir}")
        shutil.rmtree(bag_dir)
    bag = BagRecorder(bag_dir, use_sim_time=True, node_name="sim_job_bag")
    executor = make_executor()
    executor.add_node(recorder)
    executor.add_node(bag)
    log(f"starting {len(nodes)} nodes ({', '.join(n.name for n in nodes)}); "
        f"{'lockstep' if cfg.lockstep else 'real time'}, {cfg.duration_s:g} s of simulated time")
    start = time.monotonic()
    graph.start()
    watch = _Watch(cfg, graph, recorder, executor, run_dir / "nodes.log", log)
    try:
        failure = watch.attach_recorder_and_start() or watch.run_until_done()
    except KeyboardInterrupt:
        failure = "interrupted"
    finally:
        alive = graph.alive()
        graph.stop()
        wall_s = time.monotonic() - (watch.sim_start_wall or start)
        watch.drain(DRAIN_S)
        executor.shutdown()
        recording = recorder.recording()
        recorder.destroy_node()
        bag_counts = bag.close()
        bag.destroy_node()
        rclpy.shutdown()
        node_log.close()

    ik = DualArmIK(build_pinocchio_model(robot, floating_base=False), robot.joint_names)
    summary = summarize(recording, ik.end_effector_poses)
    summary.update({
        "wall_time_s": round(wall_s, 3),
        "realtime_factor": round(summary["sim_time_s"] / wall_s, 3) if wall_s > 0 else None,
        "startup_s": round((watch.sim_start_wall or time.monotonic()) - start, 3),
        "lockstep": cfg.lockstep,
        "gantry": cfg.gantry,
        "controller": cfg.controller,
        "pushes": [dataclasses.asdict(p) for p in parse_pushes(cfg.pushes)],
        "nodes_alive": len(alive),
        "nodes_total": len(nodes),
        "scenario": cfg.replay or cfg.body_stream or cfg.scenario,
        "bag": str(bag_dir.resolve()),
        "bag_messages": sum(bag_counts.values()),
        "model": str(robot.model_path),
        "failure": failure,
    })
    recording.save(run_dir / "recording.npz")
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    if len(recording.state_t):
        plot(recording, ik.end_effector_poses, robot.joint_names, run_dir)
    if cfg.report:
        write_run_report(run_dir, log)
    return run_dir, summary


def _preflight(cfg: SimJobConfig) -> tuple[Robot, float]:
    """The robot (its model loaded in MuJoCo and Pinocchio, as the nodes will) and the operator input's duration (s).
    Raises ValueError or OSError naming the file and the problem."""
    robot = load_robot(model=cfg.model or None)
    build_mujoco_model(robot)
    build_pinocchio_model(robot, floating_base=False)
    if cfg.body_stream:
        return robot, BodyStreamPlayer(load_body_stream(Path(cfg.body_stream)), cfg.body_stream).duration
    player = OperatorRecording.load(cfg.replay) if cfg.replay else Scenario.load(scenario_path(cfg.scenario))
    return robot, player.duration


def _no_kinematics(q):
    raise AssertionError("no samples to evaluate")  # summarize() evaluates kinematics per recorded sample only


class _Watch:
    """Drives a running graph through the job's two phases, watching for dead nodes and stalls."""

    def __init__(self, cfg: SimJobConfig, graph: GraphProcesses, recorder, executor, node_log: Path,
                 log: Callable[[str], None]) -> None:
        self.cfg, self.graph, self.recorder, self.executor = cfg, graph, recorder, executor
        self.node_log, self.log = node_log, log
        self.started_at = self.checked_at = time.monotonic()
        self.sim_start_wall: float | None = None  # wall time at which simulated time first advanced

    def _spin(self) -> str | None:
        """Take one message; every CHECK_PERIOD_S, whether a required node exited (polling each process at every
        message cost this process 7 % of its CPU)."""
        self.executor.spin_once(timeout_sec=0.05)
        now = time.monotonic()
        if now < self.checked_at + CHECK_PERIOD_S:
            return None
        self.checked_at = now
        return self.graph.check()

    def drain(self, seconds: float) -> None:
        """Take what the stopped graph published last, so that the recorder and the bag end on the same message."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.01)

    def attach_recorder_and_start(self) -> str | None:
        """Release the simulator (sim/start) once every recorded topic has its publisher, plus 0.5 s for
        the data paths to match, so that the recording starts at t = 0."""
        ready_since = None
        while True:
            if failure := self._spin():
                return failure
            now = time.monotonic()
            missing = self.recorder.publishers_missing()
            if missing:
                ready_since = None
                if now - self.started_at > self.cfg.startup_timeout_s:
                    return (f"no publisher for {missing} within {self.cfg.startup_timeout_s:g} s "
                            f"(see {self.node_log})")
            elif ready_since is None:
                ready_since = now
            elif now - ready_since > 0.5:
                self.recorder.start_simulation()
                return None

    def run_until_done(self) -> str | None:
        """Until the recording reaches the duration; report progress every 2 s."""
        cfg = self.cfg
        last_progress = last_advance = time.monotonic()
        last_sim_t = -1.0
        while True:
            if failure := self._spin():
                return failure
            now, sim_t = time.monotonic(), self.recorder.sim_time_s
            if sim_t >= cfg.duration_s:
                # lockstep: the simulation stopped at the duration (stop_at); its last period's command closes the run
                if not cfg.lockstep or self.recorder.last_stamp_s("command") >= sim_t - 1e-9:
                    return None
                if now - last_advance > LAST_COMMAND_WAIT_S:
                    return f"no joint_command for the last period ({sim_t:.2f} s) (see {self.node_log})"
                continue
            if sim_t > last_sim_t:
                last_sim_t, last_advance = sim_t, now
                if self.sim_start_wall is None and sim_t > 0:
                    self.sim_start_wall = now
            if self.sim_start_wall is None and now - self.started_at > cfg.startup_timeout_s:
                return f"the simulation did not start within {cfg.startup_timeout_s:g} s (see {self.node_log})"
            if self.sim_start_wall is not None and now - last_advance > cfg.stall_timeout_s:
                return (f"simulated time stopped at {sim_t:.2f} s for {cfg.stall_timeout_s:g} s "
                        f"(see {self.node_log})")
            if now - last_progress >= 2.0:
                last_progress = now
                rate = sim_t / (now - self.sim_start_wall) if self.sim_start_wall else 0.0
                self.log(f"  sim {sim_t:6.2f} / {cfg.duration_s:g} s  ({rate:.1f}x real time)")
