"""A real 429: the free plan allows 60 requests a minute per organization. The window is a minute from its first
request, which conftest.py makes when the session starts; this file runs last, so less of it is left to wait."""

from __future__ import annotations

import time
import urllib.error

import pytest

from promptstore import Promptstore, PromptstoreError
from support import call


def test_a_429_is_waited_out_for_the_seconds_the_service_names_and_sent_again(free_server):
    server = free_server
    client = Promptstore(server.url, server.key, mode="none", retries=1)
    impatient = Promptstore(server.url, server.key, mode="none", retries=1, max_retry_after=0.3)
    # Spend the rest of the minute's budget (60 requests on the free plan).
    retry_after = 0
    for _ in range(100):
        try:
            call(server.url, server.key, "GET", "/api/v2/prompts")
        except urllib.error.HTTPError as error:
            assert error.code == 429
            retry_after = int(error.headers["retry-after"])
            break
    assert retry_after >= 1
    started = time.monotonic()
    with pytest.raises(PromptstoreError) as raised:
        impatient.get("limited")
    assert time.monotonic() - started >= 0.29
    assert raised.value.status == 429 and raised.value.retry_after and raised.value.request_id
    assert "rate limit exceeded" in str(raised.value)
    started = time.monotonic()
    assert client.get("limited").id == "limited"
    waited = time.monotonic() - started
    assert waited >= retry_after - 1.5
