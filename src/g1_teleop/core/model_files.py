"""Robot model files as users have them (MJCF with ``<include>``, URDF with relative or ``package://`` mesh
paths), opened the same way for MuJoCo and Pinocchio. ROS-free.

- MuJoCo resolves an MJCF's ``<include>`` itself. Pinocchio's MJCF parser (pinocchio 3.x,
  ``src/parsers/mjcf``) does not follow ``<include>``, and it reads every ``<worldbody>`` of a file into the
  one tree: Unitree's ``g1_29dof_camera.xml`` and ``g1_body29_hand14.xml``, which have two, came out with
  every joint twice and twice the mass (72 instead of 36 configuration values, 70.2 kg instead of 35.1 kg).
  So Pinocchio reads the MJCF that MuJoCo writes back after loading it (:func:`flattened_mjcf`): one
  worldbody, includes expanded, the same bodies, joints and inertias.
- MuJoCo's URDF reader looks for meshes under the ``<mujoco><compiler meshdir>`` of the file joined with the
  mesh's file name; Unitree's ``g1_body29_hand14.urdf`` names ``meshes/pelvis.STL`` with meshdir ``meshes``,
  which MuJoCo then looks for in ``meshes/meshes``. :func:`mjspec_from_file` gives MuJoCo every mesh as an
  absolute path, found next to the URDF the way ROS tools find it (the path as written, under the meshdir,
  or a ``package://NAME/…`` path under the folders above the file).
"""

from __future__ import annotations

import hashlib
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco


class ModelFileError(ValueError):
    """A model file that cannot be opened; the message names the file and the reason."""


def mjspec_from_file(path: Path) -> mujoco.MjSpec:
    """MuJoCo's spec of an MJCF or URDF file (URDF mesh paths resolved as above)."""
    path = Path(path)
    try:
        if path.suffix.lower() == ".urdf":
            return mujoco.MjSpec.from_string(_urdf_with_absolute_meshes(path))
        return mujoco.MjSpec.from_file(str(path))
    except ValueError as exc:
        raise ModelFileError(f"{path}: MuJoCo cannot load it: {str(exc).strip()}") from exc


def flattened_mjcf(path: Path) -> Path:
    """An MJCF equivalent to ``path`` with one worldbody and no includes, as MuJoCo writes it back, cached in
    the temporary folder by content (for Pinocchio's MJCF parser)."""
    spec = mjspec_from_file(path)
    try:
        spec.compile()
        xml = spec.to_xml()
    except ValueError as exc:
        raise ModelFileError(f"{path}: MuJoCo cannot compile it: {str(exc).strip()}") from exc
    digest = hashlib.sha256(xml.encode()).hexdigest()[:16]
    out = Path(tempfile.gettempdir()) / "g1_teleop_models" / f"{path.stem}-{digest}.xml"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_suffix(f".{digest}.part")
        partial.write_text(xml)
        partial.replace(out)
    return out


def _urdf_with_absolute_meshes(path: Path) -> str:
    try:
        tree = ET.parse(path)
    except (OSError, ET.ParseError) as exc:
        raise ModelFileError(f"{path}: cannot read it as XML: {exc}") from exc
    root = tree.getroot()
    compiler = root.find("mujoco/compiler")
    meshdir = compiler.get("meshdir", "") if compiler is not None else ""
    missing = []
    for mesh in root.iter("mesh"):
        name = mesh.get("filename")
        if not name:
            continue
        found = _find_mesh(path.parent, meshdir, name)
        if found is None:
            missing.append(name)
        else:
            mesh.set("filename", str(found))
    if missing:
        raise ModelFileError(f"{path}: mesh files not found next to it: {', '.join(sorted(set(missing))[:5])}"
                             f"{' …' if len(set(missing)) > 5 else ''}")
    if compiler is not None:
        compiler.attrib.pop("meshdir", None)
    return ET.tostring(root, encoding="unicode")


def _find_mesh(folder: Path, meshdir: str, name: str) -> Path | None:
    if name.startswith("package://"):
        relative = Path(name.removeprefix("package://")).parts[1:]  # drop the package name
        for base in (folder, *folder.parents):
            candidate = base.joinpath(*relative)
            if candidate.is_file():
                return candidate.resolve()
        return None
    if name.startswith("file://"):
        name = name.removeprefix("file://")
    given = Path(name)
    for candidate in (given, folder / given, folder / meshdir / given, folder / meshdir / given.name):
        if candidate.is_file():
            return candidate.resolve()
    return None
