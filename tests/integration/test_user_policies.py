"""Policies as users bring them, in the simulation graph: a legs-only locomotion policy in unitree_rl_gym's layout
(made here, support.tiny_policy: it does not balance, hence the gantry) walks while the built-in controller stands
and squats, without any of OpenWBT's files; with the mode switches, their refusals and blends. Configurations by
preset name or by path, from the launch arguments and from `g1-teleop sim`; `g1-teleop policies list`."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys

import numpy as np
import pytest
import yaml

from support.policy_graph import policy_graph
from support.tiny_policy import ACTION_SCALE, actions_after, write_tiny_loco_policy

pytestmark = pytest.mark.integration


def g1_teleop(*args: str, timeout_s: float = 600.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "g1_teleop.tools.cli", *args], capture_output=True, text=True,
                          timeout=timeout_s)


def test_a_legs_only_policy_walks_while_the_builtin_controller_stands_and_squats(rclpy_context, robot, tmp_path):
    config = write_tiny_loco_policy(tmp_path / "policies")
    walking = yaml.safe_load(config.read_text())
    legs = robot.group("legs")
    with policy_graph(rclpy_context, controller="builtin", loco_config=str(config), policy_dir=str(config.parent),
                      gantry="true") as g:
        g.spin_until(lambda: g.heard.modes == ["SQUAT"] and len(g.heard.commands) > 10)
        g.spin_until(g.ticks_later(50), each=g.sticks(height=-1.0))  # 1 s down at 0.08 m/s: 0.67 m
        # Released before the call: a held stick counts for joy_timeout_s (0.5 s) of wall time, tens of lockstep
        # ticks while the service answers (a CI run asked after 69 ticks down, at 0.64 m).
        g.spin_until(g.ticks_later(5), each=g.sticks())
        refused = g.call("locomotion")
        stated = re.fullmatch(r"stand up first: LOCOMOTION needs height > 0\.72 m and pitch < 0\.05 rad "
                              r"\(now (\d\.\d\d) m, 0\.00 rad\)", refused.message)
        assert not refused.success and stated, refused.message
        assert 0.65 <= float(stated[1]) <= 0.67, refused.message  # 50 ticks down, and the few before the release
        g.spin_until(g.ticks_later(75), each=g.sticks(height=1.0))  # back up to the 0.75 m top
        accepted = g.call("locomotion")
        assert accepted.success, accepted.message
        g.spin_until(lambda: g.heard.modes[-1] == "LOCOMOTION", each=g.sticks())
        g.spin_until(g.ticks_later(40), each=g.sticks(vx=0.3))
        refused = g.call("squat")
        assert not refused.success and refused.message.startswith("stop first: SQUAT needs |vx|, |vy|, |wz| < 0.1 "
                                                                  "(now [0.3"), refused.message
        g.spin_until(g.ticks_later(10), each=g.sticks())
        assert g.call("squat").success
        g.spin_until(lambda: g.heard.modes[-1] == "SQUAT", each=g.sticks())
        g.spin_until(g.ticks_later(10))
        assert g.processes.check() is None and g.heard.modes == ["SQUAT", "LOCOMOTION", "SQUAT"]
        log = "\n".join(g.heard.lines)
    assert "controller builtin (LOCOMOTION: " in log and "Traceback" not in log
    # The user's policy drives the legs from the first LOCOMOTION tick (the first with its gains, waist kp 900),
    # from its reset state.
    walk_start = min(s for s, gains in g.heard.gains.items() if gains.kp[robot.group("waist")[0]] == 900.0)
    for k in (1, 2, 3, 30):
        expected = np.array(walking["default_angles"]) + ACTION_SCALE * actions_after(k)
        np.testing.assert_allclose(g.heard.commands[walk_start + (k - 1) * 20_000_000][legs], expected, atol=1e-6)


def test_policies_list_shows_the_presets_and_whether_their_files_are_there(tmp_path):
    missing = g1_teleop("policies", "list", "--dir", str(tmp_path))
    assert missing.returncode == 0, missing.stderr
    lines = missing.stdout.splitlines()
    assert lines[0] == f"policy folder: {tmp_path}"
    assert lines[1].split() == ["preset", "layout", "parameter", "policy", "file", "in", "the", "folder", "needs"]
    row = next(line.split() for line in lines if line.startswith("unitree_rl_gym_g1 "))
    torch_there = importlib.util.find_spec("torch") is not None
    assert row == ["unitree_rl_gym_g1", "rl_gym_loco", "loco_config", "motion.pt", "missing", "PyTorch",
                   "(installed)" if torch_there else "(not", *([] if torch_there else ["installed)"])]
    if not torch_there:
        assert "TorchScript policies: install PyTorch, the CPU build (about 200 MB): pip install torch --index-url " \
               "https://download.pytorch.org/whl/cpu" in missing.stdout
    (tmp_path / "motion.pt").write_bytes(b"")
    present = g1_teleop("policies", "list", "--dir", str(tmp_path))
    assert " present " in next(line for line in present.stdout.splitlines() if line.startswith("unitree_rl_gym_g1"))


def test_sim_walks_with_a_configuration_given_by_path(ros_domain, robot, tmp_path):
    config = write_tiny_loco_policy(tmp_path / "policies")
    out = tmp_path / "run"
    proc = g1_teleop("sim", "--scenario", "walk", "--duration", "16", "--gantry", "--no-report", "--loco-config",
                     str(config), "--policy-dir", str(config.parent), "--out", str(out))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    log = (out / "nodes.log").read_text()
    assert log.index("LOCOMOTION requested (joy)") < log.index("mode LOCOMOTION") < log.index(
        "SQUAT requested (joy)") < log.index("mode SQUAT\n")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["nodes_alive"] == summary["nodes_total"] and summary["failure"] is None
    from g1_teleop.tools.run_recording import Recording

    rec = Recording.load(out / "recording.npz")
    walking = yaml.safe_load(config.read_text())
    converged = np.array(walking["default_angles"]) + ACTION_SCALE * actions_after(60)
    window = (rec.command_t > 6.0) & (rec.command_t < 11.0)  # walking: A at 3 s (+1 s), B at 14 s
    np.testing.assert_allclose(rec.command_q[window][:, robot.group("legs")], np.tile(converged, (window.sum(), 1)),
                               atol=1e-6)


def test_a_preset_by_name_without_pytorch_stops_the_policy_node_with_what_to_install(ros_domain, tmp_path):
    if importlib.util.find_spec("torch") is not None:
        pytest.skip("PyTorch is installed here: the preset's TorchScript policy would load")
    (tmp_path / "motion.pt").write_bytes(b"")  # the user's policy file, in the policy folder
    out = tmp_path / "run"
    proc = g1_teleop("sim", "--duration", "2", "--loco-config", "unitree_rl_gym_g1", "--policy-dir", str(tmp_path),
                     "--out", str(out), timeout_s=300)
    assert proc.returncode == 1, proc.stdout[-3000:]
    line = next(line for line in (out / "nodes.log").read_text().splitlines() if "cannot start:" in line)
    assert line.endswith(f"cannot start: {tmp_path / 'motion.pt'}: this policy is TorchScript and PyTorch is not "
                         "installed: install PyTorch, the CPU build (about 200 MB): pip install torch --index-url "
                         "https://download.pytorch.org/whl/cpu, or PyPI's build with its CUDA libraries (several GB): "
                         "pip install 'g1_teleop[torch]'; or export the policy to ONNX"), line
