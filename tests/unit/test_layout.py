"""The package's layout: the import-layering contract (.importlinter), no import cycles, type hints checked on the
ROS-free core, and thin node executables."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "g1_teleop"
BIN = Path(sys.executable).parent


def _run(tool: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / tool), *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_import_layering_contract_holds() -> None:
    """Layers (nodes, tools > ros, launching > operator, retarget, control, sim, hardware > core), a ROS-free
    core, and no cycles between sibling modules or packages."""
    result = _run("lint-imports", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_the_core_type_checks() -> None:
    result = _run("mypy", "src/g1_teleop/core")
    assert result.returncode == 0, result.stdout + result.stderr


def test_test_modules_have_distinct_names() -> None:
    """pytest imports test modules by basename (rootdir-relative 'prepend' mode): two test_x.py in different
    folders stop the collection of the whole suite."""
    seen: dict[str, Path] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        assert path.name not in seen, f"{path} and {seen[path.name]} share a name"
        seen[path.name] = path
