"""g1-teleop xr-cert's certificates: a CA and a server certificate it signs, for the given addresses and names;
the CA kept when the server certificate is made again; expiry and missing files reported with the fix."""

from __future__ import annotations

import datetime
import stat

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from g1_teleop.operator.xr_certificates import (
    CertificateError,
    CertificateFiles,
    machine_addresses,
    machine_names,
    make_certificates,
    server_certificate,
)


def load(path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_ca_signs_a_server_certificate_for_the_addresses(tmp_path) -> None:
    files = make_certificates(tmp_path / "xr", ("192.168.1.20", "127.0.0.1"), ("g1-host", "localhost"))
    ca, cert = load(files.ca), load(files.cert)
    cert.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH]
    covered = server_certificate(files)
    assert covered.addresses == ("192.168.1.20", "127.0.0.1") and covered.names == ("g1-host", "localhost")
    assert (covered.not_after - datetime.datetime.now(datetime.timezone.utc)).days in (364, 365)
    for key in (files.key, files.ca_key):
        assert stat.S_IMODE(key.stat().st_mode) == 0o600


def test_the_ca_is_kept_unless_asked(tmp_path) -> None:
    first = make_certificates(tmp_path, ("10.0.0.2",), ())
    ca_bytes, cert_bytes = first.ca.read_bytes(), first.cert.read_bytes()
    again = make_certificates(tmp_path, ("10.0.0.3",), ())
    assert again.ca.read_bytes() == ca_bytes and again.cert.read_bytes() != cert_bytes
    load(again.cert).verify_directly_issued_by(load(again.ca))
    assert server_certificate(again).addresses == ("10.0.0.3",)
    assert make_certificates(tmp_path, ("10.0.0.3",), (), new_ca=True).ca.read_bytes() != ca_bytes


def test_missing_and_expired(tmp_path) -> None:
    with pytest.raises(CertificateError, match=r"no certificate at .*cert\.pem: run `g1-teleop xr-cert`"):
        server_certificate(CertificateFiles(tmp_path))
    old = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
    files = make_certificates(tmp_path, ("10.0.0.2",), (), now=old)
    with pytest.raises(CertificateError, match=r"expired on 2020-12-31: run `g1-teleop xr-cert`"):
        server_certificate(files)
    with pytest.raises(ValueError, match="at least one IP address or host name"):
        make_certificates(tmp_path, (), ())


def test_machine_addresses_and_names() -> None:
    addresses = machine_addresses()
    assert "127.0.0.1" in addresses and addresses[-1].startswith("127.")  # loopback last
    assert "localhost" in machine_names()
