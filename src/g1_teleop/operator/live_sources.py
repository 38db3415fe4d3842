"""xr_input's live sources, the devices with an operator behind them: a WebXR headset (Vision Pro, Quest, PICO in
their browsers: webxr_server), the Vision Pro app's stream (avp_client) or PICO's SDK (pico_client: also the
operator's body). All give the same samples (webxr_samples.XrSample) through the same interface (start, stop,
newest, status, figures). ROS-free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from g1_teleop.core.settings import setting
from g1_teleop.operator import avp_protocol
from g1_teleop.operator.avp_client import AvpClient, AvpLink
from g1_teleop.operator.pico_client import SETTINGS_FILE, PicoClient, PicoLink
from g1_teleop.operator.webxr_samples import XrSample
from g1_teleop.operator.webxr_server import WebXrConfig, WebXrServer, WebXrServerError
from g1_teleop.operator.webxr_status import XrLinkStatus


class LiveSource(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...

    def newest(self) -> XrSample | None: ...

    def status(self, now_s: float | None = None) -> XrLinkStatus: ...

    def figures(self) -> dict[str, object]: ...


@dataclass(frozen=True)
class LiveSourceConfig(WebXrConfig):
    """The WebXR server's settings and the Vision Pro app's address."""

    avp_ip: str = setting("", "source avp: the Vision Pro's IP address (the app shows it)")
    avp_port: int = setting(avp_protocol.DEFAULT_PORT, "source avp: the app's gRPC port", minimum=1, maximum=65535)


def open_live_source(source: str, config: LiveSourceConfig, wrist_reference: str,
                     on_sample: Callable[[XrSample], None] | None) -> tuple[LiveSource, str, str]:
    """The started source ``source`` ("webxr", "avp" or "pico"), the name of its link in status lines, and one line
    on where it listens or connects. ValueError (one line: what to do) when it cannot start."""
    if source == "pico":
        client = PicoClient(PicoLink(stale_after_s=config.stale_after_s), config, config.input, wrist_reference,
                            on_sample)
        client.start()
        return client, "PICO", (f"pico: head, {config.input} and body tracking through xrobotoolkit-sdk from "
                                f"XRoboToolkit PC Service at {client.address} (./{SETTINGS_FILE} changes it)")
    if source == "avp":
        client = AvpClient(AvpLink(config.avp_ip, config.avp_port, config.stale_after_s), config, wrist_reference,
                           on_sample)
        client.start()
        return client, "Vision Pro", f"avp: hands and head from the Vision Pro app at {client.address}"
    server = WebXrServer(config, wrist_reference, on_sample=on_sample)
    try:
        server.start()
    except WebXrServerError as exc:
        raise ValueError(f"the WebXR server: {exc}") from None
    return server, "WebXR", f"webxr: {config.input} from {server.page_url}"
