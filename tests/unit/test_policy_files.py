"""Policy files: the policy folder, verify() errors, and fetch() from a local file:// mirror."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pytest

from g1_teleop.control.learned.policy_files import (
    OPENWBT_FILES,
    PolicyFile,
    PolicyFileError,
    default_policy_dir,
    fetch,
    resolve_policy_dir,
    verify,
)

SHARED_POLICIES = Path(__file__).resolve().parents[3] / "shared" / "policies" / "openwbt"
ONNX_CONTENT = b"\x08\x07not really a model"
ONNX_SHA = hashlib.sha256(ONNX_CONTENT).hexdigest()


def shared_or_skip() -> Path:
    if not SHARED_POLICIES.is_dir():
        pytest.skip(f"OpenWBT policies not found at {SHARED_POLICIES}: the reference data is not beside the repo")
    return SHARED_POLICIES


def upstream(tmp_path: Path, yaml_text: str = "num_obs: 3\n") -> tuple[str, list[PolicyFile]]:
    """A file:// mirror holding one pinned binary and one YAML in the upstream layout."""
    root = tmp_path / "upstream"
    (root / "ckpts").mkdir(parents=True)
    (root / "deploy" / "configs").mkdir(parents=True)
    (root / "ckpts" / "model.onnx").write_bytes(ONNX_CONTENT)
    (root / "deploy" / "configs" / "model.yaml").write_text(yaml_text)
    files = [PolicyFile("model.onnx", "ckpts/model.onnx", ONNX_SHA),
             PolicyFile("model.yaml", "deploy/configs/model.yaml", None)]
    return root.as_uri(), files


def test_policy_dir_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("G1_TELEOP_POLICY_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_policy_dir() == tmp_path / "data" / "g1_teleop" / "policies" / "openwbt"
    assert resolve_policy_dir() == default_policy_dir()
    assert resolve_policy_dir("") == default_policy_dir()  # an empty parameter means "not set"
    monkeypatch.setenv("G1_TELEOP_POLICY_DIR", str(tmp_path / "env"))
    assert resolve_policy_dir() == tmp_path / "env"
    assert resolve_policy_dir(tmp_path / "param") == tmp_path / "param"


def test_verify_missing_names_path_and_fix(tmp_path: Path) -> None:
    with pytest.raises(PolicyFileError) as info:
        verify(tmp_path / "squat.onnx")
    assert str(info.value) == (f"no policy at {tmp_path / 'squat.onnx'}: run `g1-teleop policies fetch` or set "
                               "G1_TELEOP_POLICY_DIR")


def test_verify_corrupt_gives_both_hashes(tmp_path: Path) -> None:
    path = tmp_path / "squat.onnx"
    path.write_bytes(b"truncated")
    actual = hashlib.sha256(b"truncated").hexdigest()
    with pytest.raises(PolicyFileError) as info:
        verify(path, ONNX_SHA)
    message = str(info.value)
    assert str(path) in message and actual in message and ONNX_SHA in message
    path.write_bytes(ONNX_CONTENT)
    assert verify(path, ONNX_SHA.upper()) == path
    assert verify(path) == path


def test_fetch_from_a_mirror(tmp_path: Path) -> None:
    base_url, files = upstream(tmp_path)
    lines: list[str] = []
    dest = tmp_path / "policies"
    paths = fetch(dest, base_url, files, progress=lines.append)
    assert paths == [dest / "model.onnx", dest / "model.yaml"]
    assert (dest / "model.onnx").read_bytes() == ONNX_CONTENT
    assert (dest / "model.yaml").read_text() == "num_obs: 3\n"
    assert sorted(p.name for p in dest.iterdir()) == ["model.onnx", "model.yaml"]  # no .part left
    assert any(line.startswith("model.onnx: downloading file://") for line in lines)
    assert any(re.match(r"model\.onnx: +100% of", line) for line in lines)
    lines.clear()
    fetch(dest, base_url, files, progress=lines.append)
    assert "model.onnx: present, sha256 ok" in lines


def test_fetch_replaces_a_corrupt_local_file(tmp_path: Path) -> None:
    base_url, files = upstream(tmp_path)
    dest = tmp_path / "policies"
    dest.mkdir()
    (dest / "model.onnx").write_bytes(b"old")
    fetch(dest, base_url, files[:1], progress=lambda line: None)
    assert (dest / "model.onnx").read_bytes() == ONNX_CONTENT


def test_fetch_refuses_a_corrupt_download(tmp_path: Path) -> None:
    base_url, files = upstream(tmp_path)
    (tmp_path / "upstream" / "ckpts" / "model.onnx").write_bytes(b"changed upstream")
    dest = tmp_path / "policies"
    with pytest.raises(PolicyFileError) as info:
        fetch(dest, base_url, files, progress=lambda line: None)
    message = str(info.value)
    assert "ckpts/model.onnx is corrupt" in message
    assert hashlib.sha256(b"changed upstream").hexdigest() in message and ONNX_SHA in message
    assert list(dest.iterdir()) == []  # neither the file nor its .part


def test_fetch_unreachable(tmp_path: Path) -> None:
    _, files = upstream(tmp_path)
    missing_base = (tmp_path / "nowhere").as_uri()
    dest = tmp_path / "policies"
    with pytest.raises(PolicyFileError) as info:
        fetch(dest, missing_base, files, progress=lambda line: None)
    assert f"cannot download {missing_base}/ckpts/model.onnx" in str(info.value)
    assert str(dest / "model.onnx") in str(info.value)
    assert list(dest.iterdir()) == []


def test_fetch_checks_unpinned_yaml(tmp_path: Path) -> None:
    base_url, files = upstream(tmp_path, yaml_text="- just\n- a list\n")
    with pytest.raises(PolicyFileError, match=r"model\.yaml is not a YAML mapping"):
        fetch(tmp_path / "policies", base_url, files[1:], progress=lambda line: None)
    assert not (tmp_path / "policies" / "model.yaml").exists()


def test_pinned_hashes_match_the_reference_readme() -> None:
    readme = (shared_or_skip() / "README.md").read_text()
    listed = dict(re.findall(r"\|\s*(\S+\.onnx)\s*\|\s*([0-9a-f]{64})\s*\|", readme))
    pinned = {f.name: f.sha256 for f in OPENWBT_FILES if f.sha256 is not None}
    assert pinned == listed
    for name, sha in pinned.items():
        verify(SHARED_POLICIES / name, sha)


def test_fetch_openwbt_set_from_a_mirror_of_the_upstream_layout(tmp_path: Path) -> None:
    shared = shared_or_skip()
    root = tmp_path / "OpenWBT"
    for file in OPENWBT_FILES:
        (root / file.upstream_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shared / file.name, root / file.upstream_path)
    paths = fetch(tmp_path / "policies", root.as_uri(), progress=lambda line: None)
    assert [p.name for p in paths] == ["squat.onnx", "loco.onnx", "g1_squat.yaml", "g1_loco.yaml"]
    for path in paths:
        assert path.read_bytes() == (shared / path.name).read_bytes()
