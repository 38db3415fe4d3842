"""Two hosts: the operator's machine and the robot's computer in two network namespaces joined by a link with 20 ms
of delay each way and 5 % packet loss (tests/support/link_relay.py: a TUN device in each namespace and a relay
between them, as this kernel has no sch_netem), made by this test (root, `ip netns`), multicast off on the link so
that only ROS 2's static peers (ROS_STATIC_PEERS, each side naming the other) can make discovery work.

The operator's machine runs xr_input (a scenario standing in for the headset); the robot's computer runs the
virtual robot, hw_bridge, the policy and retarget: the IK needs the 200 Hz joint states, and the clutch that holds
and then homes the arms when the operator's samples stop must run where the robot is. Operator commands typed on
the robot's side reach xr_input across the link (xr_input/play), the operator's samples reach the LowCmds (live
`g1-teleop latency` on the robot's side: the link's delay is in it), the arms track the operator's wrists across
the lossy link (a bag recorded on the robot's side), and when the operator's machine vanishes (its link down) the
clutch holds, then homes, and the bridge stays ACTIVE: nothing trips.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

from g1_teleop.launching.graph_description import load_graph
from g1_teleop.launching.process_runner import GraphProcesses
from g1_teleop.tools.bag_analysis import read_run_bag, recording_from_bag
from g1_teleop.tools.run_analysis import wrist_errors
from support.link_relay import LinkEnd, LinkRelay

pytestmark = pytest.mark.integration


def sh(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True, text=True)


LINK_DELAY_S = 0.020  # each way
LINK_LOSS = 0.05
MAX_WRIST_P95_M = 0.05  # as the real launch in real time (test_real_launch); the link adds 20 ms of lag
MAX_OPERATOR_TO_LOWCMD_P50_MS = 250.0


@pytest.fixture
def hosts() -> Iterator[tuple[dict[str, tuple[str, str, str]], LinkRelay]]:
    """({"operator": (netns, address, device), "robot": (…)}, the link between them: delay and loss, no multicast)."""
    tag = os.getpid() % 10000
    operator, robot = f"g1op{tag}", f"g1robot{tag}"
    subnet = f"10.{200 + tag % 50}.{tag % 250}"
    ends = (LinkEnd(operator, f"top{tag}", f"{subnet}.1/24"), LinkEnd(robot, f"trb{tag}", f"{subnet}.2/24"))
    made: list[str] = []
    relay = None
    try:
        for ns in (operator, robot):
            sh("ip", "netns", "add", ns)
            made.append(ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        relay = LinkRelay(*ends, delay_s=LINK_DELAY_S, loss=LINK_LOSS, seed=tag).start()
    except (OSError, subprocess.CalledProcessError) as exc:
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        pytest.fail(f"cannot make two network namespaces and a TUN link here (root, iproute2, /dev/net/tun): {exc}")
    try:
        yield {side: (end.netns, end.address.split("/")[0], end.device)
               for side, end in zip(("operator", "robot"), ends, strict=True)}, relay
    finally:
        relay.close()
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_operator_and_robot_on_two_hosts(hosts, ros_domain, tmp_path, robot, fk):
    addresses, link = hosts
    (operator_ns, operator_ip, operator_dev), (robot_ns, robot_ip, _) = addresses["operator"], addresses["robot"]
    robot_domain = ros_domain % 100 + 1
    nodes = {n.name: n for n in load_graph("real").resolve({"robot": "virtual", "network_interface": "lo",
                                                            "robot_domain_id": str(robot_domain),
                                                            "controller": "builtin"})}
    # The virtual robot shares this VM with both sides: its ~100 ms stalls (see test_real_launch) are no robot fault.
    bridge = nodes["hw_bridge"]
    # And in CI the robot side's policy once got joint_states a second late (the VM stalled), past the shipped 0.5 s
    # grace: this test is about the link; the grace has its own tests (test_hw_bridge, bench damping).
    nodes["hw_bridge"] = dataclasses.replace(bridge, parameters={**bridge.parameters, "state_timeout_s": 0.25,
                                                                 "command_grace_s": 1.5})
    common = {"ROS_DOMAIN_ID": str(ros_domain), "ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"}
    robot_env = {**common, "ROS_STATIC_PEERS": operator_ip}
    lines: list[str] = []
    robot_side = GraphProcesses([nodes[n] for n in ("virtual_robot", "hw_bridge", "policy", "retarget")],
                                env=robot_env, output=lines.append, command_prefix=["ip", "netns", "exec", robot_ns])
    operator_side = GraphProcesses([nodes["xr_input"]], env={**common, "ROS_STATIC_PEERS": robot_ip},
                                   output=lines.append, command_prefix=["ip", "netns", "exec", operator_ns])

    def on_robot(*args: str, timeout_s: float = 60.0) -> subprocess.CompletedProcess:
        """A g1-teleop command typed on the robot's computer."""
        return subprocess.run(["ip", "netns", "exec", robot_ns, sys.executable, "-m", "g1_teleop.tools.cli", *args],
                              capture_output=True, text=True, timeout=timeout_s, env={**os.environ, **robot_env})

    def on_robot_in_background(*args: str) -> subprocess.Popen:
        return subprocess.Popen(["ip", "netns", "exec", robot_ns, sys.executable, "-m", "g1_teleop.tools.cli", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, **robot_env})

    def log() -> str:
        return "\n".join(lines[-60:])

    robot_side.start()
    operator_side.start()
    try:
        # Brought up as an operator does; brought up again (at most twice, counted) when the bridge damped meanwhile:
        # both hosts, the virtual robot and the tools share this VM's 2 cores, and a stall of the robot side there
        # (joint_states a second late to the policy, seen in CI) is no fault of the link under test.
        bring_ups = 0
        while True:
            bring_ups += 1
            since = len(lines)
            for action in ("start", "activate"):
                deadline = time.monotonic() + 90.0  # the bridge reaches ZERO_TORQUE, then HOLD, the commands come
                while (answer := on_robot("call", action, "--timeout", "10")).returncode != 0:
                    assert time.monotonic() < deadline, f"{answer.stdout}{answer.stderr}\n{log()}"
                    assert robot_side.check() is None and operator_side.check() is None, log()
                    time.sleep(1.0)
            # xr_input's service, across the link. A new client's answer can be lost there: the server drops it when
            # it has not yet discovered the client's reply reader. `call` waits until it has (service_call.py: 10 of
            # 45 answers lost without, 1 of 100 with); an operator calls again, as the error says, and so does this
            # test, once (play restarts the scenario: calling it twice is harmless). Once in CI (ci34) the server did
            # not discover the new client's readers within the 10 s of `call`'s own wait either: called again too.
            for _ in range(2):
                played = on_robot("call", "play", "--timeout", "10")
                if not any(lost in played.stderr for lost in ("gave no answer", "answered no parameter request")):
                    break
            assert played.returncode == 0, f"{played.stdout}{played.stderr}\n{log()}"
            bag = tmp_path / f"robot_side_{bring_ups}"  # what reaches the robot's side, while latency listens
            recording = on_robot_in_background("record", "--duration", "6", "--out", str(bag))
            latency = on_robot("latency", "--duration", "5", "--robot-interface", "lo", "--robot-domain-id",
                               str(robot_domain), "--json", timeout_s=90)
            assert latency.returncode == 0, f"{latency.stdout}{latency.stderr}"
            assert recording.wait(timeout=60) == 0, recording.communicate()
            hops = json.loads(latency.stdout)["hops"]
            damped = [line for line in lines[since:] if "→ DAMP" in line]
            if hops["operator_to_lowcmd"]["measured"] or not damped or bring_ups == 3:
                break
            print(f"\nbring-up {bring_ups} damped: {damped[0]}")
        print(f"\ntwo hosts: operator sample → LowCmd {hops['operator_to_lowcmd']} (bring-ups: {bring_ups})")
        assert hops["operator_to_lowcmd"]["measured"], f"{hops['operator_to_lowcmd']}\n{log()}"
        # The link's one-way delay is on the path, and the samples are not queued behind it. (Measured here on the
        # shared 2-core machine, p50: 55 ms on a clean link, 71 ms with the delay, 65 ms with the loss, 60-124 ms
        # with both; the rest is this machine running both hosts, the virtual robot and the tools.)
        assert LINK_DELAY_S * 1e3 <= hops["operator_to_lowcmd"]["p50_ms"] < MAX_OPERATOR_TO_LOWCMD_P50_MS, \
            hops["operator_to_lowcmd"]
        # The arms track the operator's wrists as they reach the robot's side across the lossy link.
        rec = recording_from_bag(read_run_bag(bag), robot.joint_names)
        errors = wrist_errors(rec, fk, settle_s=rec.state_t[0] + 1.0) if len(rec.state_t) > 100 else {}
        assert errors and all(len(e) > 100 for e in errors.values()), (len(rec.state_t), len(rec.wrist_t))
        p95_mm = {side: round(float(np.percentile(e, 95)) * 1e3, 1) for side, e in errors.items()}
        print(f"\nwrist error p95 on the robot's side: {p95_mm} mm")
        assert max(p95_mm.values()) < MAX_WRIST_P95_M * 1e3, p95_mm
        for direction in ("a→b", "b→a"):  # the link did lose packets, about as many as it should
            assert link.counts.read[direction] > 1000, link.counts
            assert 0.5 * LINK_LOSS < link.counts.loss(direction) < 1.5 * LINK_LOSS, link.counts
        print(f"link: {link.counts}")

        # The operator's machine vanishes: the clutch on the robot's side holds, then homes; the bridge stays ACTIVE.
        clutch = subprocess.Popen(["ip", "netns", "exec", robot_ns, sys.executable, "-m", "g1_teleop.tools.cli",
                                   "topic", "echo", "teleop/clutch", "--field", "data", "--timeout", "20"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, **robot_env})
        echoed: list[str] = []
        reader = threading.Thread(target=lambda: echoed.extend(iter(clutch.stdout.readline, "")), daemon=True)
        reader.start()
        deadline = time.monotonic() + 20.0
        while "---\n" not in echoed:  # the echo joined: it printed the latched state
            assert time.monotonic() < deadline and clutch.poll() is None, f"{''.join(echoed)}\n{log()}"
            time.sleep(0.1)
        sh("ip", "-n", operator_ns, "link", "set", operator_dev, "down")
        down = time.monotonic()  # holding after 0.2 s without a sample, homing after 2 s (waited up to 10 s)
        while "homing" not in "".join(echoed) and time.monotonic() < down + 10.0:
            time.sleep(0.1)
        homing_s = time.monotonic() - down
        clutch.terminate()
        err = clutch.communicate(timeout=10)[1]
        reader.join(timeout=5)
        out = "".join(echoed)
        states = [s.strip() for s in out.split("---") if s.strip()]
        assert states[-2:] == ["holding", "homing"], f"{out}{err}\n{log()}"
        assert homing_s > 2.0, f"homing {homing_s:.1f} s after the link went down: before home_after_s (2 s)"
        assert robot_side.check() is None, log()
    finally:
        operator_side.stop()
        robot_side.stop()
    damped = [line for line in lines[since:] if "→ DAMP" in line and "(bridge shutdown)" not in line]
    assert not damped, "\n".join(damped)
