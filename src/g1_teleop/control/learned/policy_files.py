"""Where learned-policy files come from: the policy folder, integrity checks, and OpenWBT's download.

Policy files are never part of the project. They live in a policy folder: the one given explicitly (a
node parameter, a command-line option), else ``$G1_TELEOP_POLICY_DIR``, else
``$XDG_DATA_HOME/g1_teleop/policies/openwbt`` (``~/.local/share/...``), where ``g1-teleop policies fetch``
puts OpenWBT's files. The folder is flat: each file under its own name.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

POLICY_DIR_ENV = "G1_TELEOP_POLICY_DIR"
FETCH_COMMAND = "g1-teleop policies fetch"

# The snapshot the conventions were read from is commit 2962100a (2025-06-18); only its short hash is
# known, so the download follows the default branch and the pinned sha256 below guard the contents.
OPENWBT_REPOSITORY = "GalaxyGeneralRobotics/OpenWBT"
OPENWBT_REF = "main"
OPENWBT_BASE_URL = f"https://raw.githubusercontent.com/{OPENWBT_REPOSITORY}/{OPENWBT_REF}"

_CHUNK_BYTES = 1 << 16


class PolicyFileError(RuntimeError):
    """A policy file is missing, corrupt or cannot be downloaded; the message names the path and the fix."""


@dataclass(frozen=True)
class PolicyFile:
    """One file of a policy set: its ``name`` in the policy folder, its path in the upstream repository,
    and its sha256 (hex) when pinned (None: the download is checked to parse as a YAML mapping)."""

    name: str
    upstream_path: str
    sha256: str | None


OPENWBT_FILES: tuple[PolicyFile, ...] = (
    PolicyFile("squat.onnx", "ckpts/squat.onnx",
               "abb6f240d13609af43d98d68fd3a60de5abe89d11f48461d37443b9b2ef25896"),
    PolicyFile("loco.onnx", "ckpts/loco.onnx",
               "e6770b3ee53faebc5c25d92133e0f24a5dcd5f4e6183a5cdaf90c7c75e939992"),
    PolicyFile("g1_squat.yaml", "deploy/configs/g1_squat.yaml", None),
    PolicyFile("g1_loco.yaml", "deploy/configs/g1_loco.yaml", None),
)


def default_policy_dir() -> Path:
    """The per-user policy folder: ``$XDG_DATA_HOME/g1_teleop/policies/openwbt``."""
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "g1_teleop" / "policies" / "openwbt"


def resolve_policy_dir(explicit: str | Path | None = None) -> Path:
    """The policy folder: ``explicit`` when given (non-empty), else ``$G1_TELEOP_POLICY_DIR``, else the
    per-user default."""
    if explicit is not None and str(explicit):
        return Path(explicit).expanduser()
    env = os.environ.get(POLICY_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return default_policy_dir()


def missing_file_message(path: Path, what: str = "policy") -> str:
    """Why a policy file is missing and the fix: OpenWBT's files are fetched, others brought by the user."""
    if path.name in {file.name for file in OPENWBT_FILES}:
        return f"no {what} at {path}: run `{FETCH_COMMAND}` or set {POLICY_DIR_ENV}"
    return f"no {what} at {path}: put it there, or set policy_dir (or {POLICY_DIR_ENV}) to the folder that holds it"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(_CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify(path: Path, sha256: str | None = None) -> Path:
    """``path`` if it is a file (and, when ``sha256`` is given, has that hash); PolicyFileError otherwise."""
    path = Path(path)
    if not path.is_file():
        raise PolicyFileError(missing_file_message(path))
    if sha256 is not None:
        actual = sha256_of(path)
        if actual != sha256.lower():
            raise PolicyFileError(
                f"corrupt policy at {path}: sha256 {actual}, expected {sha256.lower()}: delete it and run "
                f"`{FETCH_COMMAND}`")
    return path


def fetch(dest_dir: Path, base_url: str = OPENWBT_BASE_URL, files: Sequence[PolicyFile] = OPENWBT_FILES,
          progress: Callable[[str], None] | None = None, timeout_s: float = 60.0) -> list[Path]:
    """Download ``files`` from ``base_url``/upstream_path into ``dest_dir`` and check each one.

    A file already present with its pinned sha256 is kept. Each download goes to ``NAME.part`` and is
    renamed only once checked, so an interrupted or corrupt download never replaces a good file.
    ``progress`` receives one line per step (default: standard error). Returns the files' paths.
    """
    say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for file in files:
        path = dest_dir / file.name
        if file.sha256 is not None and path.is_file() and sha256_of(path) == file.sha256:
            say(f"{file.name}: present, sha256 ok")
            paths.append(path)
            continue
        url = f"{base_url.rstrip('/')}/{file.upstream_path}"
        part = path.with_name(path.name + ".part")
        try:
            _download(url, part, file.name, say, timeout_s)
            _check_download(part, file, url)
        except BaseException:
            part.unlink(missing_ok=True)
            raise
        shutil.move(part, path)
        say(f"{file.name}: saved to {path}")
        paths.append(path)
    return paths


def _download(url: str, part: Path, name: str, say: Callable[[str], None], timeout_s: float) -> None:
    say(f"{name}: downloading {url}")
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response, open(part, "wb") as out:
            total = int(response.headers.get("Content-Length") or 0)
            done, next_report = 0, 0.25
            for chunk in iter(lambda: response.read(_CHUNK_BYTES), b""):
                out.write(chunk)
                done += len(chunk)
                if total and done / total >= next_report:
                    say(f"{name}: {done / total:4.0%} of {total / 1024:.0f} KiB")
                    next_report += 0.25
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise PolicyFileError(
            f"cannot download {url}: {reason}; check the network, or download it by hand to "
            f"{part.with_suffix('')}") from exc


def _check_download(part: Path, file: PolicyFile, url: str) -> None:
    if file.sha256 is not None:
        actual = sha256_of(part)
        if actual != file.sha256:
            raise PolicyFileError(
                f"download of {url} is corrupt: sha256 {actual}, expected {file.sha256} "
                f"(an upstream change or a damaged transfer); nothing was written to {part.with_suffix('')}")
        return
    try:
        content = yaml.safe_load(part.read_text())
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise PolicyFileError(f"download of {url} is not YAML: {exc}") from exc
    if not isinstance(content, dict):
        raise PolicyFileError(f"download of {url} is not a YAML mapping (got {type(content).__name__})")
