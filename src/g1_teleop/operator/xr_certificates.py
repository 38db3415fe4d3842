"""The TLS certificates of the WebXR server (WebXR needs HTTPS, and headsets only talk to a trusted one). ROS-free.

``make_certificates`` writes, with the ``cryptography`` package, a local certificate authority (``ca.pem``, its
key ``ca-key.pem``) and a server certificate signed by it (``cert.pem``, ``key.pem``) whose subjectAltNames are
the machine's IPv4 addresses and host names. The CA is what a headset is told to trust (Vision Pro installs it
as a profile; xr_teleoperate's documentation uses the same root CA + server certificate pair for Vision Pro);
it is kept when the server certificate is made again for new addresses, so a headset trusts once. Quest and
PICO browsers accept the server certificate after a warning page. Validity 365 days (Apple accepts at most 825
for locally trusted roots).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path

import psutil
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_NAME = "g1_teleop XR CA"
VALID_DAYS = 365
DEFAULT_PORT = 8012  # the WebXR server's (vuer's and televuer's): the certified address is https://<host>:8012


class CertificateError(ValueError):
    """The server's certificate is missing, unreadable or expired; the message says how to make one."""


def default_certificate_dir() -> Path:
    """$XDG_CONFIG_HOME/g1_teleop/xr, else ~/.config/g1_teleop/xr."""
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "g1_teleop" / "xr"


@dataclass(frozen=True)
class CertificateFiles:
    """The PEM files in ``folder``: the CA (to trust on the headset) and the server's certificate and key."""

    folder: Path

    @property
    def ca(self) -> Path:
        return self.folder / "ca.pem"

    @property
    def ca_key(self) -> Path:
        return self.folder / "ca-key.pem"

    @property
    def cert(self) -> Path:
        return self.folder / "cert.pem"

    @property
    def key(self) -> Path:
        return self.folder / "key.pem"


@dataclass(frozen=True)
class ServerCertificate:
    """What a server certificate is valid for: IPv4 addresses, DNS names, and until when (UTC)."""

    addresses: tuple[str, ...]
    names: tuple[str, ...]
    not_after: datetime.datetime


def machine_addresses() -> tuple[str, ...]:
    """The machine's IPv4 addresses (every interface, loopback last)."""
    found = {a.address for addrs in psutil.net_if_addrs().values() for a in addrs if a.family == socket.AF_INET}
    return tuple(sorted(found, key=lambda a: (ipaddress.ip_address(a).is_loopback, ipaddress.ip_address(a))))


def machine_names() -> tuple[str, ...]:
    """The host name, its fully qualified form and its .local (mDNS) name, and localhost."""
    host = socket.gethostname()
    names = [host, socket.getfqdn(), f"{host.split('.')[0]}.local", "localhost"]
    return tuple(dict.fromkeys(n for n in names if n))


def make_certificates(folder: Path, addresses: tuple[str, ...], names: tuple[str, ...], new_ca: bool = False,
                      now: datetime.datetime | None = None) -> CertificateFiles:
    """Write the server certificate for ``addresses`` and ``names`` into ``folder``, signed by the CA there (made
    first when missing or ``new_ca``). Keys are ECDSA P-256, signatures SHA-256; keys are readable by the user
    only."""
    if not addresses and not names:
        raise ValueError("a server certificate needs at least one IP address or host name")
    files = CertificateFiles(Path(folder))
    files.folder.mkdir(parents=True, exist_ok=True)
    now = now or datetime.datetime.now(datetime.timezone.utc)
    if new_ca or not (files.ca.exists() and files.ca_key.exists()):
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{CA_NAME} ({socket.gethostname()})")])
        ca = (_builder(ca_name, ca_name, ca_key.public_key(), now)
              .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
              .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                           content_commitment=False, key_encipherment=False, data_encipherment=False,
                                           key_agreement=False, encipher_only=False, decipher_only=False),
                             critical=True)
              .sign(ca_key, hashes.SHA256()))
        _write_key(files.ca_key, ca_key)
        files.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    ca_key = serialization.load_pem_private_key(files.ca_key.read_bytes(), password=None)
    ca = x509.load_pem_x509_certificate(files.ca.read_bytes())
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, (names or addresses)[0])])
    alt = [x509.IPAddress(ipaddress.ip_address(a)) for a in addresses] + [x509.DNSName(n) for n in names]
    cert = (_builder(subject, ca.subject, key.public_key(), now)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    _write_key(files.key, key)
    files.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return files


def server_certificate(files: CertificateFiles, now: datetime.datetime | None = None) -> ServerCertificate:
    """What the server certificate in ``files`` covers; CertificateError when it is missing or expired."""
    for path in (files.cert, files.key):
        if not path.is_file():
            raise CertificateError(f"no certificate at {path}: run `g1-teleop xr-cert` to make one for this "
                                   "machine's addresses")
    try:
        cert = x509.load_pem_x509_certificate(files.cert.read_bytes())
    except ValueError as exc:
        raise CertificateError(f"{files.cert} is not a PEM certificate ({exc}): run `g1-teleop xr-cert`") from exc
    now = now or datetime.datetime.now(datetime.timezone.utc)
    if cert.not_valid_after_utc < now:
        raise CertificateError(f"the certificate {files.cert} expired on {cert.not_valid_after_utc:%Y-%m-%d}: run "
                               "`g1-teleop xr-cert` to make a new one (the headset keeps trusting the same CA)")
    try:
        alt = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return ServerCertificate((), (), cert.not_valid_after_utc)
    return ServerCertificate(tuple(str(a) for a in alt.get_values_for_type(x509.IPAddress)),
                             tuple(alt.get_values_for_type(x509.DNSName)), cert.not_valid_after_utc)


def _builder(subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey,
             now: datetime.datetime) -> x509.CertificateBuilder:
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False))


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    path.chmod(0o600)
