"""The TLS a daemon client is made with (``hostapi.remote.daemon_http_client``): certificates
checked against the system's CA bundle for an ``https://`` daemon; for its socket or plain
HTTP, which never speak TLS, no CA bundle is read, and a TLS connection would fail rather
than go unchecked."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import httpx2
import pytest

from compozy_mcp.hostapi import remote
from compozy_mcp.hostapi.target import Target, parse_target


def _verify_given(monkeypatch: pytest.MonkeyPatch, target: Target) -> Any:
    given: list[Any] = []
    made = httpx2.AsyncHTTPTransport

    def recording(**kwargs: Any) -> httpx2.AsyncHTTPTransport:
        given.append(kwargs.get("verify", True))
        return made(**kwargs)

    monkeypatch.setattr(httpx2, "AsyncHTTPTransport", recording)
    asyncio.run(remote.daemon_http_client(target, None).aclose())
    [verify] = given
    return verify


@pytest.mark.parametrize("address", ["http://127.0.0.1:8765", "unix:/tmp/compozy.sock"])
def test_a_socket_or_plain_http_daemon_is_reached_without_reading_the_ca_bundle(
    monkeypatch: pytest.MonkeyPatch, address: str
) -> None:
    verify = _verify_given(monkeypatch, parse_target(address))
    assert isinstance(verify, ssl.SSLContext)
    assert verify.cert_store_stats()["x509_ca"] == 0  # nothing read
    # and nothing trusted: a certificate would be checked, against no authority
    assert (verify.verify_mode, verify.check_hostname) == (ssl.CERT_REQUIRED, True)


def test_an_https_daemon_is_checked_against_the_systems_certificates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _verify_given(monkeypatch, parse_target("https://compozy.example:8765")) is True
