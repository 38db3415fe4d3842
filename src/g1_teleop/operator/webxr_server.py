"""The WebXR server: vuer over HTTPS/WSS in a thread of its own, handing the newest operator sample to a caller.
ROS-free.

The headset's browser opens ``page_url`` (vuer's web client, shipped in the ``vuer`` wheel: no internet needed);
the page connects back over a secure WebSocket on the same port and, once the operator presses Virtual Reality
or Pass-through, streams the head pose, and the hands or the controllers (``webxr_events``). Each connection
gets vuer's ``Hands`` or ``MotionControllers`` element with ``stream=True`` (as televuer's ``TeleVuer`` does),
then the robot's camera frames handed to ``put_frame`` or ``put_eyes`` (``webxr_video``: at most ``video_fps``,
newest only; the page served loads ``web/frame_taken.js`` before vuer's client, so that it says which frames it has
taken); its events become ``XrSample`` s (``webxr_samples``), the newest of which ``newest()`` returns and ``on_sample``
receives in the server's thread as it arrives. Only one headset is followed: the first connection that sends
samples, until it closes (another page opened on a laptop does not move the robot). ``status()`` tells the link's
state in one line (``webxr_status``).

Of vuer's server (0.0.60) this uses the web client's routes, the WebSocket session and the event handlers, and
runs them on its own aiohttp site so that ``stop()`` closes the port and every connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import logging
import ssl
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import hdrs, web
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from msgpack import packb

from g1_teleop.core.settings import setting
from g1_teleop.operator.webxr_events import TRACKING_EVENTS, HeadPose, MalformedEvent, parse_event
from g1_teleop.operator.webxr_samples import INPUTS, SampleAssembler, XrSample
from g1_teleop.operator.webxr_status import LinkMonitor, XrLinkStatus
from g1_teleop.operator.webxr_video import (
    EYE_KEYS,
    EYE_LAYERS,
    FRAME_TAKEN,
    VIDEO_LAYOUTS,
    VIDEO_PARENT,
    EyeImages,
    VideoFigures,
    VideoStreamer,
)
from g1_teleop.operator.xr_certificates import (
    DEFAULT_PORT,
    CertificateError,
    CertificateFiles,
    default_certificate_dir,
    machine_addresses,
    server_certificate,
)
from g1_teleop.operator.xr_joy import XrJoyConfig

# vuer's Vuer class parses the program's command line when it is defined (params_proto's parse_known_args) and exits
# on --help: `g1-teleop … --help` printed vuer's options instead of its own. It is imported with no arguments to see.
_argv, sys.argv = sys.argv, sys.argv[:1]
try:
    import vuer.server
    from vuer import Vuer, VuerSession
    from vuer.events import ClientEvent, Upsert
    from vuer.schemas import Hands, ImageBackground, MotionControllers
finally:
    sys.argv = _argv

PAGE_SCRIPT = Path(__file__).parent / "web" / "frame_taken.js"
PAGE_SCRIPT_ROUTE = "/g1_teleop/frame_taken.js"
# A page gets its first frame once it has said something: an answering page's first word is FRAME_TAKEN 0
# (web/frame_taken.js says it as its socket opens, before vuer's client sends anything), so a page whose first event
# is another one does not answer. A page that says nothing gets its frames after ANSWER_WAIT_S. A page loading vuer's
# client under software WebGL on a loaded CI machine said its first word ~3 s, once more than 5 s, after its socket
# opened.
ANSWER_WAIT_S = 15.0

_vuer_log = logging.getLogger("vuer")
# vuer's server prints on stdout for every WebSocket that opens and closes ("websocket is connected. id:…",
# "default socket worker is up…", "websocket is now disconnected…"): a page reconnecting over and over would flood
# the node's log, whose link status lines are rate-limited (webxr_status.StatusLog). Its prints go to the logger
# "vuer" at debug level instead.
vuer.server.print = lambda *args, **kwargs: _vuer_log.debug(" ".join(str(a) for a in args))  # type: ignore[attr-defined]


@dataclass(frozen=True)
class WebXrConfig(XrJoyConfig):
    """The WebXR server's settings (and the gesture thresholds of the Joy layout it produces)."""

    host: str = setting("0.0.0.0", "address the WebXR server listens on (0.0.0.0: every interface)")
    port: int = setting(DEFAULT_PORT, "HTTPS and WebSocket port of the WebXR server", minimum=1, maximum=65535)
    input: str = setting("hands", "what the headset streams: hand tracking (wrist and 25 joints per hand) or "
                         "controllers (pose, trigger, squeeze, buttons, thumbstick)", choices=INPUTS)
    stream_fps: float = setting(60.0, "how often the headset's page sends the hands or controllers (Hz)",
                                positive=True, maximum=120.0)
    stale_after_s: float = setting(0.5, "the link's status turns stale when no sample came for this long (s)",
                                   positive=True)
    # Above the eyes' 30 Hz: a cap equal to the camera's rate would hold each frame up to a period (15 ms on average
    # at 30 Hz, bench xr-video) as their phases drift; the cap is for faster sources.
    video_fps: float = setting(60.0, "at most this many of the robot's camera frames a second to each page (Hz)",
                               positive=True, maximum=120.0)
    video_height_m: float = setting(1.0, "height of the camera image's plane in the headset (m; televuer's)",
                                    positive=True)
    video_distance_m: float = setting(1.0, "distance of the camera image's plane from the operator's eyes (m)",
                                      positive=True)
    video_layout: str = setting("stereo", "stereo: each eye its half of the frame (layers 1 and 2, drawn only by "
                                "a headset's eye cameras); mono: the left half for every camera (layer 0: a flat "
                                "browser, a phone, both eyes of a headset)", choices=VIDEO_LAYOUTS)
    cert_dir: str = setting("", "folder of the server's cert.pem and key.pem (g1-teleop xr-cert); empty: "
                            "~/.config/g1_teleop/xr")

    def certificate_files(self) -> CertificateFiles:
        return CertificateFiles(Path(self.cert_dir).expanduser() if self.cert_dir else default_certificate_dir())


class WebXrServerError(RuntimeError):
    """The server could not start; the message says what to do."""


class _Vuer(Vuer, cli=False):  # (params_proto: no command-line options of its own, no parsing)
    async def uplink(self, proxy: VuerSession) -> None:
        """Nothing to forward. vuer's uplink task forwards the session's queued events and polls its queue with
        ``await sleep(0.0)`` (vuer/server.py, ``Vuer.uplink``): a busy loop that takes a whole core per connected
        headset. This server queues nothing: it sends its one event with ``Vuer.send``."""


class WebXrServer:
    """vuer's server for one operator (module docstring). ``on_sample(sample)`` runs in the server's thread for
    each sample of the followed headset; it must return quickly. wrist_reference: xr_frames' "head" or "body"."""

    def __init__(self, config: WebXrConfig, wrist_reference: str = "head",
                 on_sample: Callable[[XrSample], None] | None = None) -> None:
        self.config = config
        self.wrist_reference = wrist_reference
        self.on_sample = on_sample
        self.files = config.certificate_files()
        address = self.config.host if self.config.host not in ("0.0.0.0", "") else _reachable_address(self.files)
        self.url = f"https://{address}:{config.port}"
        self.page_url = f"{self.url}/?ws=wss://{address}:{config.port}"
        self._lock = threading.Lock()
        self._monitor = LinkMonitor(self.url, self.page_url, config.input, config.stale_after_s)
        self._newest: XrSample | None = None
        self._sessions: dict[Any, SampleAssembler] = {}
        self._pages: set[Any] = set()  # the WebSocket ids of the pages asked to stream: they get the video
        self._heard: set[Any] = set()  # the WebSocket ids of the pages that have sent an event
        self._video = VideoStreamer(config.video_fps, self._video_event)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    def start(self, timeout_s: float = 10.0) -> None:
        """Listen on the configured address and port; WebXrServerError (one line: what to do) when it cannot."""
        if self._thread is not None:
            raise RuntimeError("the WebXR server is already running")
        try:
            server_certificate(self.files)
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(self.files.cert, self.files.key)
        except (CertificateError, ssl.SSLError, OSError) as exc:
            self._fail(str(exc) if isinstance(exc, CertificateError) else
                       f"cannot load {self.files.cert} and {self.files.key} ({exc}): run `g1-teleop xr-cert`")
        started = threading.Event()
        failure: list[str] = []
        self._thread = threading.Thread(target=self._run, args=(context, started, failure), name="webxr-server",
                                        daemon=True)
        self._thread.start()
        if not started.wait(timeout_s):
            self.stop()
            self._fail(f"the WebXR server did not start within {timeout_s:g} s")
        if failure:
            self._thread.join()
            self._thread = None
            self._fail(failure[0])

    def stop(self) -> None:
        """Close every connection and the port; the server can be started again."""
        if self._thread is None:
            return
        if self._loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join()
        self._thread = None

    def __enter__(self) -> WebXrServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def newest(self) -> XrSample | None:
        """The newest sample of the followed headset (None before the first)."""
        with self._lock:
            return self._newest

    def put_frame(self, jpeg: bytes, stamp_ns: int) -> None:
        """The robot's newest stereo camera frame (JPEG, left | right; camera stamp, ns) for the pages
        (``webxr_video``); returns at once, from any thread."""
        self._video.put(jpeg, stamp_ns)

    def put_eyes(self, left: bytes, right: bytes, stamp_ns: int) -> None:
        """The robot's newest camera frame as each eye's JPEG (camera stamp, ns), as ``put_frame``."""
        self._video.put_eyes(left, right, stamp_ns)

    def video_figures(self) -> VideoFigures:
        """The camera frames' counts since the start (``webxr_video.VideoFigures``)."""
        return self._video.figures

    def figures(self) -> dict[str, object]:
        """The link's and the video's figures now, for a diagnostics message."""
        status, video = self.status(), self._video.figures
        return {"link": status.state.value, "clients": status.clients, "operator": status.operator or "",
                "rate_hz": round(status.rate_hz, 1), "malformed": status.malformed, "video_frames_in": video.frames_in,
                "video_events_sent": video.events_sent, "video_bad_frames": video.bad_frames}

    def status(self, now_s: float | None = None) -> XrLinkStatus:
        """The link's state at ``now_s`` (time.monotonic(), s; default now)."""
        with self._lock:
            return self._monitor.status(time.monotonic() if now_s is None else now_s)

    def _video_event(self, eyes: EyeImages, sent_ns: int) -> bytes:
        """A frame's UPSERT (``webxr_video``): one ImageBackground per eye layer (mono: the left eye's on layer 0),
        packed as ``Vuer.send`` packs."""
        layers = EYE_LAYERS if self.config.video_layout == "stereo" else {"left": 0}
        elements = [ImageBackground(src=getattr(eyes, side), key=EYE_KEYS[side], aspect=eyes.width / eyes.height,
                                    height=self.config.video_height_m, distanceToCamera=self.config.video_distance_m,
                                    layers=layer, interpolate=True) for side, layer in layers.items()]
        event = Upsert(*elements, to=VIDEO_PARENT).serialize()
        event["camera"] = {"seq": eyes.seq, "stamp_ns": eyes.stamp_ns, "sent_ns": sent_ns}
        return packb(event, use_single_float=True, use_bin_type=True)

    def _fail(self, reason: str) -> None:
        with self._lock:
            self._monitor.failed(reason)
        raise WebXrServerError(reason)

    # The server's thread: its own event loop.

    def _run(self, context: ssl.SSLContext, started: threading.Event, failure: list[str]) -> None:
        loop = self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._serve(context, started, failure))
        finally:
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()
            self._loop = None
            started.set()

    async def _serve(self, context: ssl.SSLContext, started: threading.Event, failure: list[str]) -> None:
        self._stop = asyncio.Event()
        vuer = self._vuer = _Vuer(host=self.config.host, port=self.config.port, queue_len=3)
        vuer.spawn(self._session)
        for etype in TRACKING_EVENTS:
            vuer.add_handler(etype, self._on_event)
        # the routes vuer.run() makes for its web client: the page and the WebSocket at /, the page's assets
        vuer.add_handler(FRAME_TAKEN, self._on_frame_taken)
        vuer._add_route("", self._page_or_socket, method="GET")
        vuer._add_route(PAGE_SCRIPT_ROUTE, self._page_script, method="GET")
        vuer._add_static("/assets", vuer.client_root / "assets")
        vuer._add_route("/ca.crt", self._ca_certificate, method="GET")
        runner = web.AppRunner(vuer.app, handle_signals=False)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.config.host, self.config.port, ssl_context=context).start()
        except OSError as exc:
            failure.append(f"cannot listen on {self.config.host}:{self.config.port} ({exc.strerror or exc}): stop "
                           f"the program using that port or choose another port")
            await runner.cleanup()
            return
        started.set()
        video = asyncio.create_task(self._video.run(lambda: list(self._pages),
                                                    lambda ws_id, data: self._vuer.send(ws_id, event_bytes=data)))
        try:
            await self._stop.wait()
        finally:
            video.cancel()
            await runner.cleanup()

    async def _page_or_socket(self, request: web.Request) -> web.StreamResponse:
        """vuer's web client at /, and its WebSocket on the same path (vuer's ``socket_index`` and
        ``websocket_handler``, which in 0.0.60 forgets to return the WebSocket: aiohttp then logs an error on
        every disconnection); the link monitor hears of each WebSocket's opening and closing."""
        if request.headers.get(hdrs.UPGRADE, "").lower().strip() != "websocket":
            return web.Response(text=self._page_html(), content_type="text/html")
        ws = web.WebSocketResponse(max_msg_size=self._vuer.WEBSOCKET_MAX_SIZE)
        await ws.prepare(request)
        with self._lock:
            self._monitor.opened(ws, request.remote or "?")
        try:
            await self._vuer.downlink(request, ws)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            await ws.close()
            with self._lock:
                self._monitor.closed(ws, time.monotonic())
                self._sessions.pop(ws, None)
        return ws

    def _page_html(self) -> str:
        """vuer's client page with ``web/frame_taken.js`` loaded first (a classic script runs before the client's
        module scripts)."""
        html = (self._vuer.client_root / "index.html").read_text(encoding="utf-8")
        return html.replace("<head>", f'<head>\n<script src="{PAGE_SCRIPT_ROUTE}"></script>', 1)

    async def _page_script(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(PAGE_SCRIPT, headers={hdrs.CONTENT_TYPE: "text/javascript"})

    async def _on_frame_taken(self, event: ClientEvent, session: VuerSession) -> None:
        size = event.value
        if type(size) is not int or size < 0:
            with self._lock:
                self._monitor.malformed(f"{FRAME_TAKEN} needs a byte count, got {size!r}")
            return
        self._heard.add(session.CURRENT_WS_ID)
        self._video.taken(session.CURRENT_WS_ID, size)

    async def _session(self, session: VuerSession) -> None:
        """One headset connection (vuer's session handler): ask its page to stream; the session must last as long
        as the WebSocket (vuer closes the WebSocket when its handler returns)."""
        ws_id = session.CURRENT_WS_ID
        if self.config.input == "hands":
            element = Hands(key="hands", stream=True, fps=self.config.stream_fps, hideLeft=True, hideRight=True)
        else:
            element = MotionControllers(key="motionControllers", stream=True, fps=self.config.stream_fps,
                                        left=True, right=True)
        await self._vuer.send(ws_id, Upsert(element, to="bgChildren"))
        deadline = time.monotonic() + ANSWER_WAIT_S  # frames once the page has spoken (ANSWER_WAIT_S), or not
        while ws_id not in self._heard and ws_id in self._vuer.ws and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        self._pages.add(ws_id)
        try:
            while ws_id in self._vuer.ws:  # vuer removes it when the WebSocket closes
                await asyncio.sleep(0.1)
        finally:
            self._pages.discard(ws_id)
            self._heard.discard(ws_id)

    async def _on_event(self, event: ClientEvent, session: VuerSession) -> None:
        received_s = time.monotonic()
        self._heard.add(session.CURRENT_WS_ID)
        ws = self._vuer.ws.get(session.CURRENT_WS_ID)
        try:
            parsed = parse_event(event.etype, event.value, _client_ts_ms(event.ts))
        except MalformedEvent as exc:
            with self._lock:
                self._monitor.malformed(str(exc))
            return
        if isinstance(parsed, HeadPose):
            with self._lock:
                self._monitor.head_pose()
        if parsed is None or ws is None:
            return
        assembler = self._sessions.get(ws)
        if assembler is None:
            assembler = self._sessions[ws] = SampleAssembler(self.config.input, self.config, self.wrist_reference)
        sample = assembler.put(parsed, received_s)
        if sample is None:
            return
        with self._lock:
            followed = self._monitor.sample(ws, received_s, sample.valid)
            if followed:
                self._newest = sample
        if followed and self.on_sample is not None:
            self.on_sample(sample)

    async def _ca_certificate(self, request: web.Request) -> web.Response:
        """The CA to trust, in DER with the type that makes Safari (Vision Pro) offer to install it as a profile."""
        ca = x509.load_pem_x509_certificate(self.files.ca.read_bytes())
        return web.Response(body=ca.public_bytes(serialization.Encoding.DER),
                            content_type="application/x-x509-ca-cert")


def _client_ts_ms(ts: Any) -> float | None:
    """The client's ``ts`` back from vuer 0.0.60's ClientEvent, which turns it (ms since the epoch) into a local
    datetime and fills a missing one with the server's clock as a float (vuer/events.py, ``ClientEvent``)."""
    return ts.timestamp() * 1000.0 if isinstance(ts, datetime.datetime) else None


def _reachable_address(files: CertificateFiles) -> str:
    """The address a headset should use: a non-loopback address of this machine the certificate covers, else
    any non-loopback address of this machine, else 127.0.0.1."""
    mine = [a for a in machine_addresses() if not ipaddress.ip_address(a).is_loopback]
    with contextlib.suppress(CertificateError):
        covered = [a for a in server_certificate(files).addresses if a in mine]
        if covered:
            return covered[0]
    return mine[0] if mine else "127.0.0.1"
