"""`g1-teleop xr-cert`: the files it writes for the given addresses and what it tells the user to open and trust."""

from __future__ import annotations

import argparse

import pytest

from g1_teleop.operator.xr_certificates import CertificateFiles, server_certificate
from g1_teleop.tools.xr_cert import add_arguments, run_from_args


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return run_from_args(parser.parse_args(list(argv)))


def test_writes_the_certificate_and_says_what_to_open(tmp_path, capsys) -> None:
    folder = tmp_path / "xr"
    assert run("--dir", str(folder), "--ip", "192.168.123.164", "--ip", "127.0.0.1", "--name", "g1-pc") == 0
    out = capsys.readouterr().out
    covered = server_certificate(CertificateFiles(folder))
    assert covered.addresses == ("192.168.123.164", "127.0.0.1") and covered.names == ("g1-pc",)
    assert out.startswith("WebXR server certificate for 192.168.123.164, 127.0.0.1, g1-pc, valid until ")
    assert "  https://192.168.123.164:8012/?ws=wss://192.168.123.164:8012\n" in out  # loopback not offered
    assert "https://127.0.0.1:8012/?ws" not in out
    assert "open https://192.168.123.164:8012/ca.crt" in out and "Certificate Trust Settings" in out
    assert "Proceed to 192.168.123.164 (unsafe)" in out and "PICO Browser" in out
    assert "(new: each headset must install and trust it once" in out
    ca = (folder / "ca.pem").read_bytes()
    assert run("--dir", str(folder), "--ip", "10.0.0.7", "--port", "9443") == 0
    out = capsys.readouterr().out
    assert (folder / "ca.pem").read_bytes() == ca and "(kept: a headset that trusts it needs nothing new)" in out
    assert "https://10.0.0.7:9443/?ws=wss://10.0.0.7:9443" in out


def test_a_mistyped_address_is_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"--ip 192\.168\.1 is not an IPv4 address"):
        run("--dir", str(tmp_path), "--ip", "192.168.1")
    assert not (tmp_path / "cert.pem").exists()


@pytest.mark.parametrize("command", ["xr-cert", "call"])
def test_help_is_the_commands_own(command: str) -> None:
    """vuer's server class parses the command line when it is defined (params_proto) and answers --help itself: the
    WebXR server imports it without the program's arguments."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "g1_teleop.tools.cli", command, "--help"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith(f"usage: g1-teleop {command} "), out.stdout[:300]
    assert "Vuer" not in out.stdout + out.stderr
