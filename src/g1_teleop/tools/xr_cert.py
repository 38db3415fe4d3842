"""`g1-teleop xr-cert`: the WebXR server's TLS certificate for this machine's addresses, and how to make a headset
trust it (operator.xr_certificates makes the files)."""

from __future__ import annotations

import argparse
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import NameOID

from g1_teleop.operator.xr_certificates import (
    DEFAULT_PORT,
    CertificateFiles,
    default_certificate_dir,
    machine_addresses,
    machine_names,
    make_certificates,
    server_certificate,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", default=None, help="where to write the files (default: ~/.config/g1_teleop/xr, "
                                                    "where the WebXR server looks)")
    parser.add_argument("--ip", action="append", default=[], help="an IPv4 address the certificate covers "
                                                                  "(repeatable; default: all of this machine's)")
    parser.add_argument("--name", action="append", default=[], help="a host name the certificate covers "
                                                                    "(repeatable; default: this machine's names)")
    parser.add_argument("--new-ca", action="store_true", help="make a new CA too (headsets must trust it again)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="the WebXR server's port, for the URL shown")


def run_from_args(args: argparse.Namespace) -> int:
    folder = Path(args.dir).expanduser() if args.dir else default_certificate_dir()
    for ip in args.ip:
        try:
            ipaddress.IPv4Address(ip)
        except ValueError as exc:
            raise ValueError(f"--ip {ip} is not an IPv4 address ({exc})") from exc
    addresses = tuple(args.ip) or machine_addresses()
    names = tuple(args.name) or machine_names()
    had_ca = CertificateFiles(folder).ca.exists() and not args.new_ca
    files = make_certificates(folder, addresses, names, new_ca=args.new_ca)
    print(instructions(files, args.port, ca_kept=had_ca))
    return 0


def instructions(files: CertificateFiles, port: int, ca_kept: bool) -> str:
    """What was written and how to trust it on Vision Pro, Quest and PICO, with the URL to open."""
    covered = server_certificate(files)
    reachable = [a for a in covered.addresses if not ipaddress.ip_address(a).is_loopback] or list(covered.addresses)
    urls = [f"https://{a}:{port}/?ws=wss://{a}:{port}" for a in reachable]
    main = reachable[0] if reachable else "localhost"
    ca_note = ("kept: a headset that trusts it needs nothing new" if ca_kept
               else "new: each headset must install and trust it once, see below")
    others = "".join(f"\n  also: {u}" for u in urls[1:])
    return f"""\
WebXR server certificate for {", ".join(covered.addresses + covered.names)}, valid until \
{covered.not_after:%Y-%m-%d}:
  {files.cert}, {files.key.name}   the server's (keep the key private)
  {files.ca}   the CA that signed it ({ca_note})

Open on the headset, on the same network as this machine, while the WebXR server runs (a firewall must allow
TCP {port}, e.g. `sudo ufw allow {port}/tcp`):
  {urls[0] if urls else f"https://localhost:{port}/?ws=wss://localhost:{port}"}{others}

Apple Vision Pro (Safari) trusts only an installed CA:
  1. In Safari open https://{main}:{port}/ca.crt (on the warning: Show Details, then visit this website) and
     allow the profile download; or AirDrop {files.ca.name} to the Vision Pro.
  2. Settings > General > VPN & Device Management: install the profile "{_ca_name(files)}".
  3. Settings > General > About > Certificate Trust Settings: turn on full trust for it.
  4. Open the URL above and press Virtual Reality (or Pass-through); allow hand tracking. On visionOS 1, first turn
     on WebXR Device API and WebXR Hand Input Module in Settings > Apps > Safari > Advanced > Feature Flags.
Meta Quest (Meta Quest Browser):
  Open the URL; on the privacy warning choose Advanced, then Proceed to {main} (unsafe); press Virtual Reality.
  For input hands, hand tracking must be on in the headset's settings (Movement tracking).
PICO (PICO Browser):
  Open the URL; on the warning choose Advanced, then Proceed; press Virtual Reality with a hand gesture for input
  hands or with a controller for input controllers (the other way round can leave the screen black).
Make the server certificate again when this machine's address changes: `g1-teleop xr-cert` (the CA is kept)."""


def _ca_name(files: CertificateFiles) -> str:
    """The CA's common name, as the headset lists it."""
    ca = x509.load_pem_x509_certificate(files.ca.read_bytes())
    return str(ca.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value)
