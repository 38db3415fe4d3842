"""How the tests' fake devices (fake_vision_pro.py, fake_pico_service.py) serve: a gRPC server on 127.0.0.1, a line
when it listens, until SIGTERM or SIGINT."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from concurrent import futures

import grpc


def serve_until_signalled(name: str, port: int, add_handlers: Callable[[grpc.Server], None],
                          stopped: threading.Event) -> None:
    """Serve on 127.0.0.1:``port`` with the handlers ``add_handlers`` adds; on SIGTERM/SIGINT set ``stopped`` (the
    streams end) and stop. Exits with a line when the port is taken."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    add_handlers(server)
    try:
        bound = server.add_insecure_port(f"127.0.0.1:{port}")
    except RuntimeError:
        bound = 0
    if not bound:
        sys.exit(f"{name}: port {port} is taken (another one running?)")
    server.start()
    print(f"{name} listening on 127.0.0.1:{port}", flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    done.wait()
    stopped.set()
    server.stop(grace=0.5).wait()
