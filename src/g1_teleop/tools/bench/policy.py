"""`g1-teleop bench policy`: the 50 Hz lower-body step in closed loop, and the command period in real time: in the
simulation graph and in the robot's graph (``real`` against the virtual robot), idle and with every core busy."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

import numpy as np

from g1_teleop.tools.bench.figures import BenchError, jitter_p99_ms, percentiles, require_robot_sdk
from g1_teleop.tools.stolen_time import StolenTime


def _policy_step_times(robot, controller, ticks: int) -> tuple[list[float], float]:
    """Closed loop with the simulator (no gantry), the command's gains applied: time of each 50 Hz step
    (observation or model update, inference or IK, 29-joint target), the simulator's own time not counted; and the
    final pelvis height (m)."""
    from g1_teleop.control.whole_body_target import WholeBodyTargetBuilder
    from g1_teleop.core.limits import JointCommand
    from g1_teleop.core.mujoco_model import build_mujoco_model
    from g1_teleop.sim.simulator import SimConfig, Simulator

    sim = Simulator(robot, build_mujoco_model(robot), SimConfig(gantry=False))
    builder = WholeBodyTargetBuilder(robot, controller)
    samples = []
    for _ in range(ticks):
        state = sim.state()
        t = time.perf_counter()
        target = builder.step(state, None, None)
        samples.append(time.perf_counter() - t)
        sim.step_control_period(JointCommand(target.q, np.zeros(29), target.tau_ff, target.gains.kp, target.gains.kd))
    return samples, float(sim.state().world_p_pelvis[2])


POLICY_BENCH_DOMAIN_ID = 232  # the bench's own ROS domain: never a robot's (0), the tests' (1–200) nor lowcmd's
ROBOT_DOMAIN_ID = 222  # the virtual robot's CycloneDDS domain, on lo: nor the other benches' (223–232)
ROBOT_PRIORITY = 50  # the robot's graph at SCHED_FIFO under 50, as README's bringing up a robot (step 6) sets it
SIM_PRIORITY = 40  # the simulation graph's control process: its control_priority as the README's timing section sets it


TAKE_S = 0.1  # how often this process takes them


@contextlib.contextmanager
def _off_kept_cores(control_cpus: str) -> Iterator[None]:
    """This process off the cores kept for the command chain (``control_cpus``, a CPU list; empty: none) while in
    the block, as the graph's other processes: the threads it starts meanwhile (its readers' DDS threads, stress-ng)
    keep off them too. Its own cores again after."""
    from g1_teleop.core.cpu_affinity import parse_cpu_list

    own_cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, own_cpus - parse_cpu_list(control_cpus))
    try:
        yield
    finally:
        os.sched_setaffinity(0, own_cpus)


def _realtime_command_times(controller: str, seconds: float, priority: int = 0,
                            control_cpus: str = "") -> tuple[dict[str, np.ndarray], bool, float]:
    """The simulation graph in real time (as `g1-teleop sim` runs it: the composed control process and robot_state;
    no gantry, the default scenario and policy folder; ``priority``, ``control_cpus``: its control_priority and
    control_cpus; with cores kept, this process's reader runs on the others, as the graph's other processes) on a
    private domain: each joint_command's write time (the policy's, DDS source timestamp), its reception time here
    (the middleware's, not this process's wake-up: the commands are taken every ``TAKE_S`` from a reader 2 s deep)
    and its stamp (the policy's 50 Hz timer on the simulator's clock), all in s, over ``seconds`` after a 2 s
    warm-up; whether the control process ran at SCHED_FIFO; and the host's steal time over those seconds (% of one
    core: StolenTime)."""
    import rclpy

    from g1_teleop.launching.graph_description import load_graph
    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.ros.messages import stamp_s
    from g1_teleop.ros.polled_subscription import command_reader

    env = {"ROS_DOMAIN_ID": str(POLICY_BENCH_DOMAIN_ID), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    log: list[str] = []
    graph = GraphProcesses(load_graph("sim").resolve({"controller": controller, "lockstep": "false",
                                                      "gantry": "false", "control_priority": str(priority),
                                                      "control_cpus": control_cpus}),
                           env=env, output=log.append)
    context = rclpy.Context()
    times: list[tuple[int, int, float]] = []  # (written ns, received ns, stamp s)
    stolen: StolenTime | None = None  # from the end of the warm-up
    with _off_kept_cores(control_cpus):  # (before the reader's DDS threads start)
        try:
            rclpy.init(context=context, domain_id=POLICY_BENCH_DOMAIN_ID)
            reader = command_reader(context, "_bench_policy")
            graph.start()
            deadline = time.monotonic() + 60.0
            while not times or (times[-1][1] - times[0][1]) * 1e-9 < 2.0 + seconds:
                if (failure := graph.check()) is not None:
                    raise BenchError(f"{failure}: " + "\n".join(log[-10:]))
                if time.monotonic() > deadline + seconds:
                    raise BenchError(f"no joint_command from the real-time graph ({controller}): "
                                     + "\n".join(log[-10:]))
                time.sleep(TAKE_S)
                times.extend((info["source_timestamp"], info["received_timestamp"], stamp_s(msg.header.stamp))
                             for msg, info in reader.take_all())
                if stolen is None and times and (times[-1][1] - times[0][1]) * 1e-9 >= 2.0:
                    stolen = StolenTime()
            steal = stolen.cpu_percent() if stolen is not None else 0.0
            fifo = os.sched_getscheduler(graph.pid("policy")) == os.SCHED_FIFO
        finally:
            graph.stop()
            context.try_shutdown()
    kept = np.array([t for t in times if (t[1] - times[0][1]) * 1e-9 >= 2.0], dtype=float)
    if not kept[:, 1].all():
        raise BenchError("the middleware gave no reception time for joint_command (rmw without received_timestamp)")
    return {"written": kept[:, 0] * 1e-9, "received": kept[:, 1] * 1e-9, "stamp": kept[:, 2]}, fifo, steal


def _robot_write_times(controller: str, seconds: float, control_cpus: str,
                       busy: bool) -> tuple[np.ndarray, int, float]:
    """The robot's graph as README's bringing up a robot sets it (``real`` against the virtual robot on private
    domains over lo: tools.virtual_graph; priorities under ``ROBOT_PRIORITY``; ``control_cpus`` kept for the command
    chain, empty: none), brought to ACTIVE, the scenario playing; with ``busy``, stress-ng's CPU hogs beside it, one
    per core this process may use (with ``control_cpus``, the cores left: as soak, they keep off the chain's). Each
    joint_command's write time (the policy's, DDS source timestamp, s) over ``seconds`` after 2 s; and how many of
    the graph's processes run at SCHED_FIFO (0: this user may not set it, the figures are normal scheduling's); and
    the host's steal time over those seconds (% of one core: StolenTime)."""
    from g1_teleop.launching.graph_description import GraphError
    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.ros.polled_subscription import command_reader
    from g1_teleop.tools.soak import CpuStress, fifo_processes
    from g1_teleop.tools.virtual_graph import GraphPriorities, Operator, VirtualGraphConfig, virtual_graph_nodes

    cfg = VirtualGraphConfig(POLICY_BENCH_DOMAIN_ID, ROBOT_DOMAIN_ID, controller,
                             priorities=GraphPriorities.under(ROBOT_PRIORITY), control_cpus=control_cpus)
    other_cpus = cfg.other_cpus()
    try:
        stress = CpuStress(len(other_cpus), seconds + 120.0) if busy else None
        nodes = virtual_graph_nodes(cfg)
    except (RuntimeError, GraphError) as exc:  # (stress-ng or taskset missing)
        raise BenchError(str(exc)) from None
    log: list[str] = []
    graph = GraphProcesses(nodes, env=cfg.env, output=log.append)
    operator = Operator(graph, log, cfg.ros_domain_id, "_bench_policy")
    with _off_kept_cores(control_cpus):  # this process's reader and stress-ng, as soak's
        try:
            graph.start()
            operator.wait_state("ZERO_TORQUE", 90.0)
            operator.bring_up()
            operator.call("xr_input/play")
            if stress is not None:
                stress.start()
            reader = command_reader(operator.context, "_bench_policy_commands")
            operator.spin_for(2.0)
            reader.take_all()
            written: list[int] = []
            end, stolen = time.monotonic() + seconds, StolenTime()
            while time.monotonic() < end:
                operator.spin_for(TAKE_S)
                written.extend(info["source_timestamp"] for _, info in reader.take_all())
            steal = stolen.cpu_percent()
            fifo = len(fifo_processes({name: graph.pid(name) for name in graph.alive()}))
        except RuntimeError as exc:
            raise BenchError(f"the robot's graph ({controller}): {exc}") from None
        finally:
            if stress is not None:
                stress.stop()
            graph.stop()
            operator.close()
    return np.array(written, dtype=float) * 1e-9, fifo, steal


def bench_policy(ticks: int = 1000, realtime_s: float = 10.0) -> dict[str, float]:
    """The 50 Hz policy step in closed loop with the simulator, for OpenWBT's squat policy (observation,
    inference, target) and the built-in controller (model update, leg IK, balance torques); then each in
    the real-time simulation graph: the period of joint_command as another process's middleware receives it, its
    jitter (|period − 20 ms|) p99, and the same from the policy's write times and from the command stamps (the
    policy's timer); the jitters again with the control process at SCHED_FIFO ``SIM_PRIORITY`` (``_realtime_fifo``;
    ``sim_sched_fifo_processes``: 1 when it was, 0 when this user may not set it; this process, reading at normal
    priority, then receives late: the written jitter is the figure), and at normal scheduling with the last core
    kept for the control process (control_cpus, on a machine of 2 cores or more: ``_realtime_pinned``). Then the
    jitter of the write times in the robot's graph against the virtual robot (``_robot_write_times``):
    ``{name}_robot[_pinned][_busy]_written_jitter_p99_ms``, ``_pinned`` with the last core kept for the command chain
    (control_cpus, on a machine of 2 cores or more), ``_busy`` with every core this process may use busy;
    ``robot_sched_fifo_processes``: the graph's processes at SCHED_FIFO (the fewest seen). (This process reads at
    normal priority, the graph runs at SCHED_FIFO: its reception times would measure its own wake-ups.) Each real-time
    run's ``…_steal_cpu_percent``: the CPU time the host of a virtual machine took meanwhile (StolenTime), so that a
    run with a late tick of the host's is told from one of the code's."""
    from g1_teleop.control.controller_factory import make_lower_body
    from g1_teleop.core.robot_description import load_robot

    require_robot_sdk()  # (the robot's graph runs last: say so before minutes of the rest)
    robot = load_robot()
    controllers = {name: make_lower_body(robot, name) for name in ("openwbt", "builtin")}
    figures: dict[str, float] = {"ticks": ticks}
    for name, controller in controllers.items():
        samples, pelvis_z = _policy_step_times(robot, controller, ticks)
        figures.update({**percentiles(f"{name}_step", samples), f"{name}_pelvis_z_end_m": round(pelvis_z, 4)})
    sim_fifo = []
    cpus = sorted(os.sched_getaffinity(0))
    kept = [str(cpus[-1])] if len(cpus) > 1 else []
    for name in controllers:
        for priority, pinned in ((0, ""), (SIM_PRIORITY, ""), *[(0, core) for core in kept]):
            times, fifo_control, steal = _realtime_command_times(name, realtime_s, priority, pinned)
            periods = {kind: np.diff(t) for kind, t in times.items()}
            key = f"{name}_realtime{'_fifo' if priority else ''}{'_pinned' if pinned else ''}"
            if not priority and not pinned:
                figures.update(percentiles(f"{key}_period", periods["received"]))
            for kind, prefix in (("received", ""), ("written", "_written"), ("stamp", "_stamp")):
                figures[f"{key}{prefix}_jitter_p99_ms"] = jitter_p99_ms(periods[kind], 0.02, digits=4)
            figures[f"{key}_commands"] = len(times["received"])
            figures[f"{key}_steal_cpu_percent"] = steal
            sim_fifo += [int(fifo_control)] if priority else []
    figures["realtime_s"] = realtime_s
    figures["sim_sched_fifo_processes"] = min(sim_fifo)
    fifo = []
    for name in controllers:
        for pinned in ("", *kept):
            for busy in (False, True):
                written, fifo_count, steal = _robot_write_times(name, realtime_s, pinned, busy)
                key = f"{name}_robot{'_pinned' if pinned else ''}{'_busy' if busy else ''}"
                figures[f"{key}_written_jitter_p99_ms"] = jitter_p99_ms(np.diff(written), 0.02, digits=4)
                figures[f"{key}_commands"] = len(written)
                figures[f"{key}_steal_cpu_percent"] = steal
                fifo.append(fifo_count)
    figures["robot_sched_fifo_processes"] = min(fifo)
    return figures
