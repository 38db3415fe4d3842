"""Virtual G1: the MuJoCo robot behind the robot's own DDS interface (unitree_hg LowCmd/LowState), ROS-free.

    python -m g1_teleop.tools.virtual_robot --domain-id 1 --interface lo [--gantry] [--model PATH]
        [--peer g1|unitree_mujoco]

Behaves as a G1 in debug mode does on its low-level topics, so a bridge written for the robot runs
against it unchanged:

- ``rt/lowstate`` (LowState_) every 2 ms of simulated time: ``tick`` = simulated time in ms (2 on the
  first sample), the pelvis IMU (quaternion w, x, y, z; gyroscope, rad/s; accelerometer, m/s², specific
  force; rpy, rad, ZYX), per motor 0–28 q, dq, ddq and tau_est (the actuator torque, N·m) and ``mode``
  (the mode last commanded), ``mode_pr`` 0, ``mode_machine`` (default 5, the value a 29-DoF G1 reports),
  ``wireless_remote`` and a correct ``crc``.
- ``rt/lowcmd`` (LowCmd_): a sample is applied only if its CRC matches, ``mode_pr`` is 0, its
  ``mode_machine`` equals the one published (the robot's firmware is reported to ignore commands that do
  not echo it; this side is strict so that a bridge passing here echoes it) and every value of motors
  0–28 is finite. Each rejection is counted by reason. The applied command is held and its PD law
  τ = kp(q* − q) + kd(dq* − dq) + τff, clipped to the effort limits, is recomputed every physics step;
  a motor whose ``mode`` is 0 is disabled (no torque). Until the first valid command every motor is
  disabled: the robot is limp. When commands stop the last one stays applied (what the firmware does
  is not documented); stopping the robot safely is the bridge's job.
- ``rt/wirelesscontroller`` (unitree_go WirelessController_: lx, ly, rx, ry, keys, what Unitree's
  simulator publishes from a gamepad): the latest one is what ``LowState.wireless_remote`` carries, the
  L2 trigger reading 1 while the L2 key is held.
- ``--peer unitree_mujoco`` behaves instead as Unitree's own simulator (unitreerobotics/unitree_mujoco,
  simulate_python, whose unitree_sdk2py_bridge.py this follows): LowState every 5 ms physics step (200 Hz) with
  ``tick``, ``crc`` and ``mode_machine`` left at 0; a LowCmd's CRC, ``mode_pr``, ``mode_machine`` and motor
  ``mode`` are not looked at (non-finite values are still refused: they would end the simulation), and its PD
  law is computed once, when it arrives, the torque then held until the next LowCmd.
- ``--gantry`` holds the torso with the elastic band of :mod:`g1_teleop.sim.gantry` (bring-up tests).
- ``--dex3`` adds two emulated Dex3 hands (:mod:`g1_teleop.tools.dex3_emulator`): rt/dex3/{left,right}/cmd
  (unitree_hg HandCmd_) applied, rt/dex3/{left,right}/state (HandState_) every ``HAND_STATE_PERIODS``
  LowState periods (100 Hz).

Samples are read and written as raw CDR bytes (:mod:`g1_teleop.hardware.lowcmd`, :mod:`g1_teleop.hardware.lowstate`),
not through the SDK's Python (de)serialiser. One thread paces the simulation against the wall clock
(``--realtime-factor``); it prints one status line a second (``virtual_robot status: key=value ...``,
including the ground-truth pelvis height, which the robot itself does not report) and a JSON summary
at exit (SIGINT or SIGTERM).

Needs the robot SDK (scripts/install_robot_sdk.sh) and CYCLONEDDS_HOME unset (or holding lib/libddsc.so).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import signal
import struct
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from g1_teleop.core.limits import JointCommand
from g1_teleop.core.realtime_loop import Pacer
from g1_teleop.core.realtime_priority import use_fifo_scheduling
from g1_teleop.core.rotations import rpy_from_wxyz
from g1_teleop.hardware.lowcmd import NUM_BODY_JOINTS, lowcmd_crc, lowcmd_from_cdr, unpack_lowcmd
from g1_teleop.hardware.lowstate import lowstate_to_cdr, new_lowstate, pack_lowstate
from g1_teleop.hardware.robot_dds import (
    MAX_DOMAIN_ID,
    TOPIC_LOWCMD,
    TOPIC_LOWSTATE,
    TOPIC_WIRELESS_CONTROLLER,
    RobotDds,
    RobotDdsUnavailable,
    topic_type,
)
from g1_teleop.hardware.wireless_remote import BUTTONS, WirelessRemote, encode_wireless_remote

if TYPE_CHECKING:
    from g1_teleop.sim.simulator import Simulator

LOWSTATE_PERIOD_S = 0.002  # rt/lowstate every 2 ms (500 Hz) of simulated time (a G1)
DEFAULT_MODE_MACHINE = 5  # reported by 29-DoF G1s (GR00T's G1 configuration hard-codes it; others report 6)
STATUS_PERIOD_S = 1.0  # wall time between status lines
MAX_LAG_S = 0.1  # further behind the wall clock than this, the pacing restarts from now (counted)
LOWCMD_QUEUE_DEPTH = 64  # LowCmd samples kept between two reads (every one is checked and counted)
HAND_STATE_PERIODS = 5  # rt/dex3/*/state every 5 LowState periods: 100 Hz



@dataclass(frozen=True)
class Peer:
    """What the virtual robot behaves as on the low-level topics."""

    lowstate_period_s: float  # rt/lowstate every so many s of simulated time
    physics_dt: float  # MuJoCo step unless --physics-dt says otherwise
    fills_lowstate: bool  # tick, crc and mode_machine set (else left at 0)
    checks_lowcmd: bool  # a LowCmd's CRC, mode_pr, mode_machine checked and motor mode 0 disables the motor
    pd_every_step: bool  # the PD law recomputed every physics step (else once per LowCmd received, then held)


PEERS = {
    "g1": Peer(LOWSTATE_PERIOD_S, 0.002, True, True, True),
    # unitree_mujoco's simulate_python: config.SIMULATE_DT 5 ms is its MuJoCo step and LowState period;
    # LowCmdHandler sets mj_data.ctrl once per message; the LowState's tick, crc and mode_machine stay 0.
    "unitree_mujoco": Peer(0.005, 0.005, False, False, False),
}

_WIRELESS_CONTROLLER = struct.Struct("<4fH")  # unitree_go WirelessController_: lx, ly, rx, ry, keys
_CDR_LITTLE_ENDIAN = (b"\x00\x01", b"\x00\x07")


@dataclass(frozen=True)
class VirtualRobotConfig:
    """domain_id and interface: where the robot's DDS topics are (the robot: 0 and its Ethernet port;
    Unitree's simulator convention: 1 on lo). model: URDF or MJCF path, empty for the project's.
    peer: a key of :data:`PEERS`, what the virtual robot behaves as. physics_dt (s): MuJoCo step, dividing the
    peer's LowState period (0: the peer's step). realtime_factor: simulated seconds per wall second. priority:
    SCHED_FIFO priority (0: normal scheduling), as the robot's own controller is not slowed by the machine that
    runs the graph."""

    domain_id: int = 1
    interface: str = "lo"
    model: str = ""
    gantry: bool = False
    dex3: bool = False
    physics_dt: float = 0.0
    mode_machine: int = DEFAULT_MODE_MACHINE
    realtime_factor: float = 1.0
    peer: str = "g1"
    priority: int = 0

    @property
    def behaviour(self) -> Peer:
        return PEERS[self.peer]

    @property
    def step_s(self) -> float:
        """The MuJoCo step (s)."""
        return self.physics_dt or self.behaviour.physics_dt

    def __post_init__(self) -> None:
        if self.peer not in PEERS:
            raise ValueError(f"peer must be one of {', '.join(PEERS)}, got {self.peer!r}")
        if not 0 <= self.domain_id <= MAX_DOMAIN_ID:
            raise ValueError(f"domain_id must be in [0, {MAX_DOMAIN_ID}], got {self.domain_id}")
        if not self.interface.strip():
            raise ValueError("interface must name a network interface, e.g. lo")
        if not 0 <= self.priority <= 99:
            raise ValueError(f"priority must be 0 (normal scheduling) or a SCHED_FIFO priority 1–99, got "
                             f"{self.priority}")
        if not 0 <= self.mode_machine <= 255:
            raise ValueError(f"mode_machine is a uint8, got {self.mode_machine}")
        if not (math.isfinite(self.realtime_factor) and self.realtime_factor > 0):
            raise ValueError(f"realtime_factor must be a finite value > 0, got {self.realtime_factor}")
        period = self.behaviour.lowstate_period_s
        steps = period / self.step_s if self.step_s > 0 else 0.0
        if not (0 < self.step_s <= period and abs(steps - round(steps)) < 1e-9):
            raise ValueError(f"physics_dt must divide the LowState period {period} s "
                             f"(e.g. {period}, {period / 2:g}, {period / 5:g}), got {self.physics_dt}")


@dataclass
class LowCmdCounts:
    """LowCmd samples received, applied, and dropped by reason."""

    received: int = 0
    applied: int = 0
    bad_crc: int = 0
    wrong_mode: int = 0  # mode_pr not 0, or mode_machine not the one published
    non_finite: int = 0  # a NaN or infinite value for motors 0–28
    undecodable: int = 0  # not a little-endian LowCmd sample


class VirtualRobot:
    """The robot's side of the low-level interface around a :class:`Simulator` (no DDS here).

    The simulator's control period must be the LowState period: :meth:`advance` runs one period of
    physics with the applied command and :meth:`lowstate_sample` is the state the robot then sends.
    """

    def __init__(self, sim: Simulator, mode_machine: int, peer: Peer = PEERS["g1"]) -> None:
        if abs(sim.config.control_dt - peer.lowstate_period_s) > 1e-12:
            raise ValueError(f"the simulator's control period must be {peer.lowstate_period_s} s, "
                             f"got {sim.config.control_dt}")
        self.sim = sim
        self.peer = peer
        self.mode_machine = mode_machine if peer.fills_lowstate else 0
        self.counts = LowCmdCounts()
        zeros = np.zeros(NUM_BODY_JOINTS)
        self.command = JointCommand(q=zeros, dq=zeros, tau_ff=zeros, kp=zeros, kd=zeros)  # limp
        self._state = new_lowstate()
        self._state["mode_machine"] = self.mode_machine
        self._motors = self._state["motor_state"][:NUM_BODY_JOINTS]
        self._imu = self._state["imu_state"]
        self.remote = WirelessRemote()
        self._state["wireless_remote"] = np.frombuffer(encode_wireless_remote(self.remote), dtype=np.uint8)

    def receive_lowcmd(self, sample: bytes) -> None:
        """Check one rt/lowcmd sample (CDR bytes); apply it if it passes, else count why not."""
        counts = self.counts
        counts.received += 1
        try:
            packed = lowcmd_from_cdr(sample)
        except ValueError:
            counts.undecodable += 1
            return
        cmd = unpack_lowcmd(packed)
        checks = self.peer.checks_lowcmd
        if checks and cmd.crc != lowcmd_crc(packed):
            counts.bad_crc += 1
            return
        if checks and (cmd.mode_pr != 0 or cmd.mode_machine != self.mode_machine):
            counts.wrong_mode += 1
            return
        values = np.vstack((cmd.q, cmd.dq, cmd.tau, cmd.kp, cmd.kd))[:, :NUM_BODY_JOINTS].astype(float)
        if not np.isfinite(values).all():
            counts.non_finite += 1
            return
        mode = cmd.mode[:NUM_BODY_JOINTS]
        if checks:
            values[2:] *= mode != 0  # a disabled motor: no feed-forward, no stiffness, no damping
        q, dq, tau, kp, kd = values
        if self.peer.pd_every_step:
            self.command = JointCommand(q=q, dq=dq, tau_ff=tau, kp=kp, kd=kd)
        else:  # the torque of this moment, held until the next LowCmd
            s = self.sim.state()
            torque = tau + kp * (q - s.q) + kd * (dq - s.dq)
            zeros = np.zeros(NUM_BODY_JOINTS)
            self.command = JointCommand(q=s.q, dq=zeros, tau_ff=torque, kp=zeros, kd=zeros)
        self._motors["mode"] = mode
        counts.applied += 1

    def receive_wireless_controller(self, sample: bytes) -> None:
        """Take one rt/wirelesscontroller sample (CDR bytes) as the remote's current reading."""
        if len(sample) < 4 + _WIRELESS_CONTROLLER.size or sample[:2] not in _CDR_LITTLE_ENDIAN:
            return
        lx, ly, rx, ry, keys = _WIRELESS_CONTROLLER.unpack_from(sample, 4)
        pressed = frozenset(name for bit, name in enumerate(BUTTONS) if keys >> bit & 1)
        self.remote = WirelessRemote(lx=lx, ly=ly, rx=rx, ry=ry, l2=float("L2" in pressed), pressed=pressed)
        self._state["wireless_remote"] = np.frombuffer(encode_wireless_remote(self.remote), dtype=np.uint8)

    def advance(self) -> None:
        """One LowState period of physics under the applied command (PD recomputed every step)."""
        self.sim.step_control_period(self.command)

    def lowstate_sample(self) -> bytes:
        """The rt/lowstate sample (CDR bytes, CRC set) of the current state."""
        sim = self.sim
        s = sim.state()
        state, imu, motors = self._state, self._imu, self._motors
        if self.peer.fills_lowstate:
            state["tick"] = (sim.stamp_ns // 1_000_000) & 0xFFFFFFFF
        imu["quaternion"] = s.world_q_pelvis
        imu["gyroscope"] = s.pelvis_w_pelvis
        imu["accelerometer"] = s.pelvis_a_imu
        imu["rpy"] = rpy_from_wxyz(s.world_q_pelvis)
        motors["q"] = s.q
        motors["dq"] = s.dq
        motors["ddq"] = sim.data.qacc[sim.joints.dof_adr]
        motors["tau_est"] = s.tau
        packed, _ = pack_lowstate(state)
        if not self.peer.fills_lowstate:
            state["crc"] = 0
            packed = state.tobytes()
        return lowstate_to_cdr(packed)


class EmulatedHands:
    """The Dex3 hands' DDS side: HandCmd in, HandState out, around an :class:`EmulatedHand` each."""

    def __init__(self, dds: RobotDds) -> None:
        from g1_teleop.core.dex3_description import SIDES, load_dex3
        from g1_teleop.tools.dex3_emulator import EmulatedHand

        dex3 = load_dex3()
        self.hands = {side: EmulatedHand(dex3.limits[side]) for side in SIDES}
        self._readers = {side: dds.reader(f"rt/dex3/{side}/cmd", history=8) for side in SIDES}
        self._writers = {side: dds.writer(f"rt/dex3/{side}/state") for side in SIDES}

    def step(self, dt: float, publish: bool) -> None:
        """Apply the commands received, advance ``dt`` seconds, and publish the states if ``publish``."""
        for side, hand in self.hands.items():
            for message in self._readers[side].take():
                hand.receive(message)
            hand.advance(dt)
            if publish:
                self._writers[side].write(hand.state_message())

    def counts(self) -> dict[str, int]:
        return {f"handcmd_{side}_{name}": value for side, hand in self.hands.items()
                for name, value in asdict(hand.counts).items()}


def run(config: VirtualRobotConfig, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Run the virtual robot until SIGINT or SIGTERM; returns the summary (also logged as JSON).

    Raises RobotConfigError for a bad model and RobotDdsUnavailable without SDK or DDS domain.
    """
    stop: list[int] = []  # the signal that ends the run; one arriving during start-up ends it at once
    previous_handlers = {sig: signal.signal(sig, lambda signum, _frame: stop.append(signum))
                         for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return _run(config, log, stop)
    finally:
        for sig, handler in previous_handlers.items():
            signal.signal(sig, handler)


def _run(config: VirtualRobotConfig, log: Callable[[str], None], stop: list[int]) -> dict[str, Any]:
    from g1_teleop.core.mujoco_model import build_mujoco_model
    from g1_teleop.core.robot_description import load_robot
    from g1_teleop.sim.simulator import SimConfig, Simulator

    topic_type(TOPIC_LOWSTATE)  # without the robot SDK, say so before building the model
    robot = load_robot(model=Path(config.model) if config.model else None)
    peer = config.behaviour
    sim = Simulator(robot, build_mujoco_model(robot, timestep=config.step_s),
                    SimConfig(config.step_s, peer.lowstate_period_s, config.gantry))
    vr = VirtualRobot(sim, config.mode_machine, peer)
    dds = RobotDds(config.domain_id, config.interface)
    lowstate_writer = dds.raw_writer(TOPIC_LOWSTATE)
    lowcmd_reader = dds.raw_reader(TOPIC_LOWCMD, history=LOWCMD_QUEUE_DEPTH)
    remote_reader = dds.raw_reader(TOPIC_WIRELESS_CONTROLLER, history=1)
    hands = EmulatedHands(dds) if config.dex3 else None
    if config.priority and (refused := use_fifo_scheduling(config.priority, "virtual_robot")) is not None:
        log(refused)  # (once DDS's threads are started: they run at it, but its housekeeping ones)

    log(f"virtual_robot ready: domain {config.domain_id}, interface {config.interface}, model "
        f"{robot.model_path.name}, peer {config.peer}, physics {config.step_s * 1e3:g} ms, LowState every "
        f"{peer.lowstate_period_s * 1e3:g} ms, gantry {'on' if config.gantry else 'off'}, "
        f"Dex3 hands {'emulated' if hands else 'none'}"
        f", mode_machine {vr.mode_machine}, real-time factor {config.realtime_factor:g}")

    gc.freeze()  # the start-up's objects leave the collector, whose full passes over them took ~40 ms
    published = 0
    pelvis_z = pelvis_z_min = float(sim.data.qpos[2])
    start = mark = (time.monotonic(), time.process_time(), 0, 0)  # wall, cpu, sim steps, published
    pacing = Pacer(peer.lowstate_period_s / config.realtime_factor, MAX_LAG_S, start_s=start[0])

    def figures(since: tuple[float, float, int, int]) -> dict[str, Any]:
        elapsed = max(time.monotonic() - since[0], 1e-9)
        return {
            "sim_time_s": round(sim.steps * config.step_s, 3),
            "realtime_factor": round((sim.steps - since[2]) * config.step_s / elapsed, 3),
            "cpu_percent": round(100.0 * (time.process_time() - since[1]) / elapsed, 1),
            "lowstate_published": published,
            "lowstate_rate_hz": round((published - since[3]) / elapsed, 1),
            **{f"lowcmd_{name}": value for name, value in asdict(vr.counts).items()},
            **(hands.counts() if hands else {}),
            "pacing_restarts": pacing.restarts,
        }

    while not stop:
        for sample in lowcmd_reader.take():
            vr.receive_lowcmd(sample)
        for sample in remote_reader.take():
            vr.receive_wireless_controller(sample)
        vr.advance()
        lowstate_writer.write(vr.lowstate_sample())
        if hands is not None:
            hands.step(peer.lowstate_period_s, publish=published % HAND_STATE_PERIODS == 0)
        published += 1
        pelvis_z = float(sim.data.qpos[2])
        pelvis_z_min = min(pelvis_z_min, pelvis_z)
        pacing.wait()
        if time.monotonic() - mark[0] >= STATUS_PERIOD_S:
            status = {**figures(mark), "pelvis_z_m": round(pelvis_z, 3)}
            log("virtual_robot status: " + " ".join(f"{key}={value}" for key, value in status.items()))
            mark = (time.monotonic(), time.process_time(), sim.steps, published)
    summary = {**figures(start), "wall_time_s": round(time.monotonic() - start[0], 3),
               "pelvis_z_min_m": round(pelvis_z_min, 3), "stopped_by": signal.Signals(stop[0]).name}
    log("virtual_robot summary: " + json.dumps(summary))
    return summary


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The virtual robot's command-line options (shared by ``python -m`` and a CLI subcommand)."""
    defaults = VirtualRobotConfig()
    parser.add_argument("--domain-id", type=int, default=defaults.domain_id,
                        help=f"DDS domain of the robot topics (default {defaults.domain_id}; the real robot uses 0)")
    parser.add_argument("--interface", default=defaults.interface,
                        help=f"network interface DDS binds to (default {defaults.interface})")
    parser.add_argument("--gantry", action="store_true", help="hold the torso with the virtual gantry")
    parser.add_argument("--dex3", type=_flag, nargs="?", const=True, default=defaults.dex3,
                        help="emulate two Dex3 hands on rt/dex3/{left,right}/cmd|state (--dex3, --dex3 true|false)")
    parser.add_argument("--model", default=defaults.model,
                        help="robot model file (URDF or MJCF with the G1's 29 joint names) instead of the project's")
    parser.add_argument("--physics-dt", type=float, default=defaults.physics_dt,
                        help="MuJoCo step in s, dividing the LowState period (default: the peer's, 0.002 for g1, "
                             "0.005 for unitree_mujoco)")
    parser.add_argument("--peer", choices=sorted(PEERS), default=defaults.peer,
                        help="behave as a G1 (default: LowState at 500 Hz with tick, CRC and mode_machine; LowCmd CRC "
                             "and mode checked; PD every physics step) or as Unitree's simulator unitree_mujoco "
                             "(LowState at 200 Hz, tick, CRC and mode_machine 0; LowCmd CRC and mode ignored; PD "
                             "once per LowCmd received)")
    parser.add_argument("--mode-machine", type=int, default=defaults.mode_machine,
                        help=f"LowState.mode_machine, which commands must echo (default {defaults.mode_machine})")
    parser.add_argument("--realtime-factor", type=float, default=defaults.realtime_factor,
                        help=f"simulated seconds per wall second (default {defaults.realtime_factor:g})")
    parser.add_argument("--priority", type=int, default=defaults.priority,
                        help="SCHED_FIFO priority 1–99 (needs CAP_SYS_NICE), as the robot's own controller is not "
                             "slowed by a busy machine; 0: normal scheduling (default)")


def _flag(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def config_from_args(args: argparse.Namespace) -> VirtualRobotConfig:
    return VirtualRobotConfig(domain_id=args.domain_id, interface=args.interface, model=args.model,
                              gantry=args.gantry, dex3=args.dex3, physics_dt=args.physics_dt,
                              mode_machine=args.mode_machine, realtime_factor=args.realtime_factor, peer=args.peer,
                              priority=args.priority)


def run_from_args(args: argparse.Namespace) -> int:
    """Run with parsed options; returns the exit code (2: invalid options or model, 1: no SDK or DDS)."""
    from g1_teleop.core.process_lifetime import stop_with_runner
    from g1_teleop.core.robot_description import RobotConfigError

    stop_with_runner()
    try:
        config = config_from_args(args)
    except ValueError as exc:
        print(f"virtual_robot: error: {exc}", file=sys.stderr)
        return 2
    try:
        run(config, log=lambda line: print(line, flush=True))
    except RobotConfigError as exc:
        print(f"virtual_robot: error: {exc}", file=sys.stderr)
        return 2
    except RobotDdsUnavailable as exc:
        print(f"virtual_robot: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m g1_teleop.tools.virtual_robot",
        description="A MuJoCo G1 that speaks the robot's DDS interface: publishes rt/lowstate at 500 Hz, "
                    "applies rt/lowcmd (CRC checked) with PD every physics step, reads rt/wirelesscontroller. "
                    "Ctrl-C or SIGTERM stops it.")
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
