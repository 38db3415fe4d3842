"""Where the package's data folders (config/, urdf/, launch/) are found.

Order: the ``G1_TELEOP_SHARE`` environment variable, then the ament index (a colcon install puts them in
``share/g1_teleop``), then the source checkout this module was imported from (an editable pip install).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

PACKAGE = "g1_teleop"


@lru_cache(maxsize=1)
def share_dir() -> Path:
    """Folder that holds config/, urdf/ and launch/."""
    env = os.environ.get("G1_TELEOP_SHARE")
    if env:
        return Path(env)
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "config").is_dir() and (checkout / "urdf").is_dir():
        return checkout
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory(PACKAGE))
    except Exception as exc:
        raise FileNotFoundError(
            f"cannot find the {PACKAGE} data folders (config/, urdf/): set G1_TELEOP_SHARE to the "
            f"repository root or to the colcon install's share/{PACKAGE}"
        ) from exc


def config_path(*parts: str) -> Path:
    return share_dir().joinpath("config", *parts)


def urdf_path(*parts: str) -> Path:
    return share_dir().joinpath("urdf", *parts)


def scenario_path(name: str) -> Path:
    """A scenario given by name (config/scenarios/NAME.yaml) or by a path to a YAML file."""
    path = Path(name)
    if path.suffix in (".yaml", ".yml"):
        return path
    return config_path("scenarios", f"{name}.yaml")
