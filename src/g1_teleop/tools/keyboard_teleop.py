"""`g1-teleop teleop-keys`: drive the policy's LOCOMOTION from a terminal, as teleop_twist_keyboard does.

Reads single keys (the terminal in cbreak mode, restored however the command ends), publishes cmd_vel
(geometry_msgs/Twist: linear.x, linear.y in m/s and angular.z in rad/s, pelvis frame; best effort as the
policy subscribes) at ``rate_hz`` and on every key, so the policy, which ignores a cmd_vel older than
0.5 s, keeps it; shows the keys, the command and the graph's mode (teleop/mode); sends the mode and e-stop
requests through the graph's services without blocking, and publishes zero velocity when it quits. The key
map is :mod:`g1_teleop.tools.key_bindings`.
"""

from __future__ import annotations

import argparse
import os
import queue
import select
import signal
import sys
import termios
import threading
import time
import tty
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from geometry_msgs.msg import Twist
from std_msgs.msg import String

from g1_teleop.ros.qos import QOS_LATCHED, QOS_SENSOR
from g1_teleop.tools.cli_node import CliNode, cli_node
from g1_teleop.tools.key_bindings import HELP, MAX_SPEED, MIN_SPEED, KeyCommand, Request, apply_key, split_keys
from g1_teleop.tools.service_call import TriggerClients

ZERO_REPEATS = 5  # zero velocity messages sent on quitting, 20 ms apart (best effort: one may be lost)


def twist(velocity: tuple[float, float, float]) -> Twist:
    """(vx, vy, wz) in m/s, m/s, rad/s → Twist."""
    msg = Twist()
    msg.linear.x, msg.linear.y, msg.angular.z = (float(v) for v in velocity)
    return msg


class KeyboardTeleop:
    """The ROS side: cmd_vel at a fixed rate, the graph's mode, requests through the operator services."""

    def __init__(self, session: CliNode, rate_hz: float, command: KeyCommand) -> None:
        self.command = command
        self.mode = "unknown (no teleop/mode yet)"
        self.events: queue.SimpleQueue[str] = queue.SimpleQueue()  # lines for the screen, from any thread
        self.services = TriggerClients(session)
        self.pub = session.node.create_publisher(Twist, "cmd_vel", QOS_SENSOR)
        session.node.create_subscription(String, "teleop/mode", lambda msg: setattr(self, "mode", msg.data),
                                         QOS_LATCHED)
        # The timer publishes from the spinner thread, keys from the main one: one at a time, so that no timer
        # tick that read the old command publishes it after the zeros of quitting.
        self._publishing = threading.Lock()
        self._timer = session.node.create_timer(1.0 / rate_hz, self.publish)

    def publish(self) -> None:
        with self._publishing:
            self.pub.publish(twist(self.command.velocity))

    def press(self, key: str) -> bool:
        """Apply one key; False when it asks to quit."""
        self.command, request = apply_key(self.command, key)
        self.publish()
        if request is Request.QUIT:
            return False
        if request is not None:
            self.services.call_async(request.value, self.events.put)
        return True

    def send_zero(self) -> None:
        """Stop the timer and publish zero velocity ZERO_REPEATS times: the last cmd_vel sent is zero."""
        with self._publishing:
            self._timer.cancel()
            self.command = KeyCommand(linear_speed=self.command.linear_speed,
                                      angular_speed=self.command.angular_speed)
        for _ in range(ZERO_REPEATS):
            self.publish()
            time.sleep(0.02)

    def status(self) -> str:
        vx, vy, wz = self.command.velocity
        return (f"cmd_vel vx {vx:+.2f} m/s  vy {vy:+.2f} m/s  wz {wz:+.2f} rad/s   speed "
                f"{self.command.linear_speed:.2f} m/s, {self.command.angular_speed:.2f} rad/s   mode {self.mode}")


@contextmanager
def terminal_keys(fd: int) -> Iterator[Callable[[float], list[str] | None]]:
    """The terminal on ``fd`` in cbreak mode (keys without Enter, no echo; Ctrl-C still interrupts; what was typed
    before is dropped), restored on exit. Yields read(timeout_s): the keys typed within that time, None when the
    terminal closed."""
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)

    def read(timeout_s: float) -> list[str] | None:
        if not select.select([fd], [], [], timeout_s)[0]:
            return []
        data = os.read(fd, 64)
        return split_keys(data.decode(errors="replace")) if data else None

    try:
        yield read
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def drive(teleop: KeyboardTeleop, read_keys: Callable[[float], list[str] | None]) -> None:
    """Show the answers and the command, apply the keys; return on q or when the terminal closes."""
    while True:
        while not teleop.events.empty():
            print(f"\r\x1b[K{teleop.events.get()}")
        print(f"\r\x1b[K{teleop.status()}", end="", flush=True)
        keys = read_keys(0.1)
        if keys is None or not all(teleop.press(key) for key in keys):
            return


def run(namespace: str, rate_hz: float, command: KeyCommand) -> int:
    """Run until q, Ctrl-C, SIGTERM or the terminal closes; 0, or 2 when stdin is no terminal."""
    if not os.isatty(sys.stdin.fileno()):
        print("g1-teleop teleop-keys: stdin is not a terminal: run it in a terminal (not through a pipe or a "
              "script) to read keys", file=sys.stderr)
        return 2
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    with cli_node("teleop_keys", namespace) as session:
        teleop = KeyboardTeleop(session, rate_hz, command)
        spinner = threading.Thread(target=session.executor.spin, daemon=True)
        spinner.start()
        try:
            with terminal_keys(sys.stdin.fileno()) as read_keys:
                # The banner once keys are read: a key typed between a banner printed first and cbreak mode, which
                # drops what was typed before it, was lost (a CI run).
                print(f"{HELP}\ncmd_vel at {rate_hz:g} Hz on {session.resolve('cmd_vel')} ({session.where()})",
                      flush=True)
                drive(teleop, read_keys)
        except KeyboardInterrupt:
            pass
        finally:
            teleop.send_zero()
            session.executor.shutdown()
            spinner.join(timeout=1.0)
        print("\r\x1b[Kstopped: zero velocity sent", flush=True)
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--namespace", default="", help="the graph's ROS namespace, e.g. /g1")
    parser.add_argument("--rate", type=float, default=20.0, help="cmd_vel publication rate, Hz (at least 10: the "
                                                                 "policy ignores a cmd_vel older than 0.5 s)")
    parser.add_argument("--speed", type=float, default=KeyCommand.linear_speed,
                        help=f"initial linear speed, m/s ({MIN_SPEED} … {MAX_SPEED}; + and - change it)")
    parser.add_argument("--turn", type=float, default=KeyCommand.angular_speed,
                        help=f"initial turn rate, rad/s ({MIN_SPEED} … {MAX_SPEED}; + and - change it)")


def run_from_args(args: argparse.Namespace) -> int:
    """0 when stopped by q, Ctrl-C or SIGTERM; 2 without a terminal; 130 when interrupted while starting."""
    if args.rate < 10:
        raise ValueError(f"--rate {args.rate:g} Hz is below 10 Hz: the policy would drop cmd_vel between messages")
    for name, value in (("--speed", args.speed), ("--turn", args.turn)):
        if not MIN_SPEED <= value <= MAX_SPEED:
            raise ValueError(f"{name} {value:g} is outside {MIN_SPEED} … {MAX_SPEED} (the policy's dead band and "
                             "limit)")
    try:
        return run(args.namespace, args.rate, KeyCommand(linear_speed=args.speed, angular_speed=args.turn))
    except KeyboardInterrupt:
        return 130
