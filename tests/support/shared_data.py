"""The third-party reference data in ``../shared`` beside the repository (Unitree's official G1 models,
OpenWBT's ONNX policies). Never part of the repository: tests reach it here. Without the folder they skip with a
reason that names it; where the folder must be there (CI: ``G1_TELEOP_REQUIRE_SHARED=1``, set by ``.ci/run``)
such a skip fails the run (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
OFFICIAL_MODELS = SHARED / "models" / "unitree_g1"
OPENWBT_POLICIES = SHARED / "policies" / "openwbt"
REQUIRE_ENV = "G1_TELEOP_REQUIRE_SHARED"


def shared_path(path: Path) -> Path:
    """``path`` (under ../shared) if it exists, else skip the test saying what is missing."""
    if not path.exists():
        pytest.skip(f"reference data not found: {path} (../shared beside the repository holds Unitree's G1 "
                    f"models and OpenWBT's policies)")
    return path
