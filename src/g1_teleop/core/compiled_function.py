"""A CasADi function compiled to machine code once and called from Python with almost no overhead.

CasADi generates the function's C source; the system C compiler (``$CC``, else ``cc``) builds it into a
shared library cached under ``$XDG_CACHE_HOME/g1_teleop/casadi`` (``~/.cache`` by default) and named by
the hash of the source, so each model and objective compiles once per machine. Calls go through ctypes
into buffers allocated once: a call costs a few microseconds more than the arithmetic. Without a compiler
the same function runs in CasADi's interpreter (correct, several times slower) after one warning.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import casadi as ca
import numpy as np

_log = logging.getLogger(__name__)
_COMPILE_FLAGS = ("-O2", "-fPIC", "-shared", "-fno-math-errno")
_INT = ctypes.c_longlong  # casadi_int in generated code


def cache_dir() -> Path:
    """Where compiled functions are kept (created on demand)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "g1_teleop" / "casadi"


class CompiledFunction:
    """Evaluates ``function`` (dense inputs and outputs) on numpy arrays.

    ``__call__(*inputs)`` takes one numpy array per input (any shape with the input's number of elements,
    column-major like CasADi) and returns one flat float64 array per output, column-major. The returned
    arrays are reused by the next call: copy what must outlive it.
    """

    def __init__(self, function: ca.Function) -> None:
        for kind, count, sparsity in (("input", function.n_in(), function.sparsity_in),
                                      ("output", function.n_out(), function.sparsity_out)):
            sparse = [i for i in range(count) if not sparsity(i).is_dense()]
            if sparse:
                raise ValueError(f"CompiledFunction({function.name()}): {kind}s {sparse} are sparse; densify them")
        self.name = function.name()
        self._function = function
        self._inputs = [np.zeros(function.nnz_in(i)) for i in range(function.n_in())]
        self._outputs = [np.zeros(function.nnz_out(i)) for i in range(function.n_out())]
        self._call = self._load_compiled(function)
        self.compiled = self._call is not None
        """True when running machine code; False in CasADi's interpreter (no C compiler)."""

    def __call__(self, *inputs: np.ndarray) -> list[np.ndarray]:
        if len(inputs) != len(self._inputs):
            raise TypeError(f"{self.name}: expected {len(self._inputs)} inputs, got {len(inputs)}")
        if self._call is None:
            result = self._function(*[np.reshape(x, self._function.size_in(i), order="F")
                                      for i, x in enumerate(inputs)])
            values = result if isinstance(result, (list, tuple)) else [result]
            for out, value in zip(self._outputs, values, strict=True):
                out[:] = np.asarray(value).ravel(order="F")
            return self._outputs
        for buffer, x in zip(self._inputs, inputs, strict=True):
            buffer[:] = x if x.ndim == 1 else np.ravel(x, order="F")
        if self._call():
            raise RuntimeError(f"{self.name}: the compiled function reported an error")
        return self._outputs

    def _load_compiled(self, function: ca.Function):
        generator = ca.CodeGenerator(f"{self.name}.c", {"with_header": False})
        generator.add(function)
        source = generator.dump()
        digest = hashlib.sha256(source.encode()).hexdigest()[:16]
        library = cache_dir() / f"{self.name}-{digest}.so"
        if not library.exists() and not self._compile(source, library):
            return None
        lib = ctypes.CDLL(str(library))
        sizes = [_INT() for _ in range(4)]
        getattr(lib, f"{self.name}_work")(*[ctypes.byref(s) for s in sizes])
        self._iw = (_INT * max(sizes[2].value, 1))()
        self._w = np.zeros(max(sizes[3].value, 1))
        double_p = ctypes.POINTER(ctypes.c_double)
        self._arg = (double_p * max(sizes[0].value, 1))(*[b.ctypes.data_as(double_p) for b in self._inputs])
        self._res = (double_p * max(sizes[1].value, 1))(*[b.ctypes.data_as(double_p) for b in self._outputs])
        entry = getattr(lib, self.name)
        entry.restype = ctypes.c_int
        arg, res, iw, w = self._arg, self._res, self._iw, self._w.ctypes.data_as(double_p)
        self._library = lib  # keep it loaded
        return lambda: entry(arg, res, iw, w, 0)

    def _compile(self, source: str, library: Path) -> bool:
        compiler = shlex.split(os.environ.get("CC", "")) or [shutil.which("cc") or shutil.which("gcc") or ""]
        if not compiler[0]:
            return self._interpreted("no C compiler found (install gcc, or set CC)")
        library.parent.mkdir(parents=True, exist_ok=True)
        # stderr, whatever the logging set-up: a silent pause of seconds at start-up would look like a hang
        print(f"{self.name}: compiling into {library} (once per model, about 10 s)", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory() as scratch:
            c_file = Path(scratch) / f"{self.name}.c"
            built = library.with_name(f".{library.name}.{os.getpid()}")  # same file system as the cache
            c_file.write_text(source)
            try:
                run = subprocess.run([*compiler, *_COMPILE_FLAGS, "-o", str(built), str(c_file), "-lm"],
                                     capture_output=True, text=True, check=False)
            except OSError as exc:
                return self._interpreted(f"cannot run the C compiler {compiler[0]!r} ({exc.strerror}; set CC)")
            if run.returncode != 0:
                last = (run.stderr.strip().splitlines() or [f"exit {run.returncode}"])[-1]
                return self._interpreted(f"{compiler[0]} failed: {last}")
            os.replace(built, library)  # atomic: processes compiling at once never load a partial file
        return True

    def _interpreted(self, why: str) -> bool:
        _log.warning("%s: %s: running in CasADi's interpreter, several times slower", self.name, why)
        return False
