"""`g1-teleop soak --stress N`: stress-ng's command line, the error without it, and its start and stop."""

import os
import stat
import time

import psutil
import pytest

from g1_teleop.tools.cli import build_parser
from g1_teleop.tools.soak import CpuStress, SoakConfig, stress_command


def test_the_command_runs_n_cpu_workers_not_niced_and_ends_by_itself():
    assert stress_command(2, 899.2) == ["stress-ng", "--cpu", "2", "--timeout", "900s", "--quiet"]
    with pytest.raises(ValueError, match="at least 1 worker"):
        stress_command(0, 60)


def test_the_option_reaches_the_config():
    args = build_parser().parse_args(["soak", "--duration", "10m", "--stress", "2"])
    assert args.stress == 2 and build_parser().parse_args(["soak"]).stress == 0
    assert SoakConfig(duration_s=600, stress_workers=2).stress_workers == 2
    with pytest.raises(ValueError, match="--stress"):
        SoakConfig(duration_s=600, stress_workers=-1)


def test_without_stress_ng_the_error_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="install it: apt-get install stress-ng"):
        CpuStress(2, 60)


def test_start_and_stop_end_the_whole_process_group(monkeypatch, tmp_path):
    fake = tmp_path / "stress-ng"  # a stand-in that starts a child, as stress-ng starts its workers
    fake.write_text(f"#!/bin/sh\necho $$ > {tmp_path}/pid\nsleep 60 &\necho $! > {tmp_path}/child\nwait\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    stress = CpuStress(1, 60)
    assert stress.stop() is None  # never started
    stress.start()
    for _ in range(200):
        if (tmp_path / "child").exists() and (tmp_path / "child").read_text().strip():
            break
        time.sleep(0.01)
    child = int((tmp_path / "child").read_text())
    percent = stress.stop()
    assert percent is not None and 0 <= percent < 50  # sleeping: hardly any CPU
    assert not _running(child)  # the worker went with it


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs within 1 s (a zombie waiting for its reaper does not)."""
    for _ in range(100):
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return False
        except psutil.NoSuchProcess:
            return False
        time.sleep(0.01)
    return True
