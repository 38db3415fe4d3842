"""Where tests leave what a person looks at afterwards (screenshots): ``test-artefacts/`` in the repository's folder
(not tracked), kept after the run, unlike pytest's tmp dirs."""

from __future__ import annotations

from pathlib import Path

ARTEFACTS = Path(__file__).resolve().parents[2] / "test-artefacts"


def artefact(name: str) -> Path:
    """The path of the artefact ``name`` (its folder made)."""
    ARTEFACTS.mkdir(exist_ok=True)
    return ARTEFACTS / name
