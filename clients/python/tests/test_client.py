"""The Python client against the real server: the same cases as the TypeScript client's tests."""

from __future__ import annotations

import threading
import time
from typing import List

import pytest

from promptstore import (
    AuthenticationError,
    MissingVariablesError,
    NetworkError,
    NotFoundError,
    Prompt,
    PromptChange,
    PromptstoreError,
    ServerError,
    UnexpectedVariablesError,
)
from support import SECTIONS, call, sections, wait_for


def create(server, key, name, body_sections=SECTIONS, publish=True):
    return call(server.url, key, "POST", "/api/v2/prompts", {"name": name, "sections": body_sections, "publish": publish})


def live(client) -> bool:
    return client.status["stream"] == "live" and client.status["reading"] == 0


def test_a_memory_hit_makes_no_request_and_a_first_get_makes_one_read(fx):
    server = fx.start()
    create(server, fx.key, "Alpha")
    proxy = fx.proxy(server.url)
    client = fx.client(proxy.url)
    alpha = client.get("alpha")
    assert isinstance(alpha, Prompt) and alpha.id == "alpha" and alpha.variables == ("company", "language")
    wait_for(lambda: live(client), 10, "the stream")
    time.sleep(0.2)
    assert proxy.count("/api/v2/events?include=read") == 1
    assert proxy.count("/api/v2/prompts/alpha") == 1
    before = proxy.connections
    for _ in range(1000):
        assert client.get("alpha") is alpha
    assert proxy.connections == before


def test_a_publish_is_seen_through_the_stream_and_on_change_says_which_version(fx):
    server = fx.start()
    v1 = create(server, fx.key, "Agent", sections("v1"))
    changes: List[PromptChange] = []
    client = fx.client(server.url, on_change=changes.append)
    assert client.get("agent").version == v1["version"]
    wait_for(lambda: live(client), 10, "the stream")
    v2 = call(server.url, fx.key, "PUT", "/api/v2/prompts/agent", {"sections": sections("v2"), "publish": True})
    wait_for(lambda: client.get("agent").version == v2["version"], 10, "the publish")
    assert [(c.prompt_id, c.ref, c.version, c.previous_version) for c in changes] == [
        ("agent", "production", v1["version"], None),
        ("agent", "production", v2["version"], v1["version"]),
    ]


def test_a_publish_on_a_second_instance_on_postgresql_reaches_a_client_of_the_first(pg):
    first = pg.start()
    second = pg.start()
    v1 = create(first, pg.key, "Shared", sections("v1"))
    client = pg.client(first.url)
    assert client.get("shared").version == v1["version"]
    wait_for(lambda: live(client), 10, "the stream")
    v2 = call(second.url, pg.key, "PUT", "/api/v2/prompts/shared", {"sections": sections("v2"), "publish": True})
    wait_for(lambda: client.get("shared").version == v2["version"], 10, "the publish on the other instance")


def test_a_dropped_stream_falls_back_to_the_ttl_with_stale_while_revalidate(fx):
    server = fx.start()
    v1 = create(server, fx.key, "Swr", sections("v1"))
    proxy = fx.proxy(server.url)
    errors: List[BaseException] = []
    client = fx.client(proxy.url, ttl=0.5, max_reconnect_delay=1, on_error=errors.append)
    assert client.get("swr").version == v1["version"]
    wait_for(lambda: live(client), 10, "the stream")
    proxy.refuse = ["/api/v2/events"]
    proxy.cut()
    wait_for(lambda: client.status["stream"] == "down", 10, "the stream to drop")
    v2 = call(server.url, fx.key, "PUT", "/api/v2/prompts/swr", {"sections": sections("v2"), "publish": True})
    # Within the TTL: what is held, with no request.
    reads = proxy.count("/api/v2/prompts/swr")
    assert client.get("swr").version == v1["version"]
    assert proxy.count("/api/v2/prompts/swr") == reads
    time.sleep(0.6)
    # Past it: the old one at once, and one read in the background; then the new one.
    assert client.get("swr").version == v1["version"]
    wait_for(lambda: client.get("swr").version == v2["version"], 5, "the background read")
    assert proxy.count("/api/v2/prompts/swr") == reads + 1
    assert client.status["stream"] in ("down", "connecting")
    # Its reconnections are refused, and told to on_error.
    wait_for(lambda: any(isinstance(e, NetworkError) for e in errors), 5, "a refused reconnection")
    # The stream back: it resumes from Last-Event-ID and is live again.
    proxy.refuse = []
    wait_for(lambda: live(client), 10, "the stream to be back")


def test_the_fallback_is_served_when_the_server_is_down_and_nothing_is_held(fx):
    server = fx.start()
    create(server, fx.key, "Held")
    proxy = fx.proxy(server.url)
    client = fx.client(
        proxy.url, mode="ttl", retries=1, retry_base_delay=0.001, fallback={"greeter": "Hello {{ name }}, from the fallback."}
    )
    held = client.get("held")
    proxy.down = True
    proxy.cut()
    given = client.get("greeter")
    assert (given.fallback, given.label, given.variables) == (True, "fallback", ("name",))
    assert client.fill(given, {"name": "Ada"}) == "Hello Ada, from the fallback."
    assert client.get("other", fallback="Per call").prompt == "Per call"
    # What is held comes before a fallback, with cache=False too.
    assert client.get("held", fallback="unused") is held
    assert client.get("held", cache=False, fallback="unused") is held
    with pytest.raises(NetworkError) as raised:
        client.get("unknown")
    assert raised.value.status == 0
    # Down for good: the fallback, also past the TTL.
    server.stop()
    proxy.down = False
    assert client.get("greeter").fallback is True


def test_a_500_on_a_read_is_retried_with_backoff_and_a_500_on_a_write_is_not(fx):
    server = fx.start()
    create(server, fx.key, "Flaky")
    proxy = fx.proxy(server.url)
    client = fx.client(proxy.url, mode="none", retries=2, retry_base_delay=0.01)
    proxy.fail_next(1)
    before = proxy.connections
    assert client.get("flaky").id == "flaky"
    assert proxy.connections == before + 2
    proxy.fail_next(1)
    with pytest.raises(ServerError) as raised:
        client.save("flaky", {"sections": sections("never")})
    assert raised.value.status == 500 and str(raised.value) == "proxy: a failure on purpose"
    assert proxy.connections == before + 3


def test_fill_refuses_missing_variables_naming_each_and_strict_refuses_extra_ones(fx):
    server = fx.start()
    create(server, fx.key, "Fill")
    client = fx.client(server.url, mode="none")
    prompt = client.get("fill", guard=False)
    with pytest.raises(MissingVariablesError) as missing:
        client.fill(prompt, {"company": "Acme"})
    assert missing.value.missing == ["language"]
    assert "language" in str(missing.value)
    with pytest.raises(UnexpectedVariablesError) as unexpected:
        client.fill(prompt, {"company": "Acme", "language": "French", "tone": "warm"}, strict=True)
    assert unexpected.value.unexpected == ["tone"]
    text = client.fill(prompt, {"company": "Acme", "language": "French", "tone": "warm"})
    assert "You help customers of Acme." in text and "Answer in French." in text


def test_close_leaves_no_thread_behind(fx):
    server = fx.start()
    create(server, fx.key, "Closing")
    before = set(threading.enumerate())
    with fx.client(server.url) as client:
        client.get("closing")
        wait_for(lambda: live(client), 10, "the stream")
        call(server.url, fx.key, "PUT", "/api/v2/prompts/closing", {"sections": sections("v2")})
        client.get("closing", version="latest")
        assert len(set(threading.enumerate()) - before) >= 1
    assert set(threading.enumerate()) - before == set()
    assert client.status["stream"] == "closed"
    assert client.get("closing").id == "closing"  # what is held stays readable


def test_errors_are_typed_by_status_with_the_envelope_message_and_the_request_id(fx):
    server = fx.start()
    client = fx.client(server.url, mode="none")
    with pytest.raises(NotFoundError) as raised:
        client.get("absent", fallback="not for a 404")
    assert raised.value.status == 404 and raised.value.request_id and "absent" in str(raised.value)
    bad = fx.client(server.url, api_key="ps_not-a-key")
    with pytest.raises(AuthenticationError) as refused:
        bad.ready(5)
    assert refused.value.status == 401 and refused.value.request_id


def test_a_version_named_by_its_hash_is_kept_for_good(fx):
    server = fx.start()
    v1 = create(server, fx.key, "Pinned")
    proxy = fx.proxy(server.url)
    client = fx.client(proxy.url, mode="ttl", ttl=0.05)
    pinned = client.get("pinned", version=v1["version"])
    time.sleep(0.1)
    before = proxy.connections
    assert client.get("pinned", version=v1["version"]) is pinned
    assert proxy.connections == before


def test_every_typed_method_round_trips(fx):
    server = fx.start()
    client = fx.client(server.url, mode="ttl")
    created = client.create({"name": "Round Trip", "sections": SECTIONS})
    assert created["id"] == "round-trip" and created["published"] is False
    assert client.get("round-trip").label == "latest"
    saved = client.save("round-trip", {"markdown": "# Role\nHi {{ name }}", "message": "shorter"})
    assert saved["created"] is True
    assert client.get("round-trip", version="latest").version == saved["version"]
    client.publish("round-trip")
    assert client.get("round-trip").version == saved["version"]
    client.publish("round-trip", created["version"][:7])
    assert client.get("round-trip").version == created["version"]
    history = client.versions("round-trip")
    assert [v["version"] for v in history["versions"]] == [saved["version"], created["version"]]
    assert [p["id"] for p in client.list_all()] == ["round-trip"]
    assert client.list(limit=1)["prompts"][0]["id"] == "round-trip"
    assert client.get_v1("round-trip")["version"] == created["version"]
    assert client.get("round-trip", guard=False).prompt.endswith("</Output_Format>")
    assert [row["action"] for row in client.audit()["entries"]][:1]
    hook = client.create_webhook({"url": "https://example.com/hook", "events": ["prompt.published"]})
    assert client.webhook(hook["id"])["url"] == "https://example.com/hook"
    assert client.update_webhook(hook["id"], {"enabled": False})["enabled"] is False
    assert [w["id"] for w in client.webhooks()] == [hook["id"]]
    assert client.rotate_webhook_secret(hook["id"])["secret"]
    assert client.webhook_deliveries(hook["id"]) == []
    client.delete_webhook(hook["id"])
    assert client.openapi()["openapi"].startswith("3.1")
    assert client.delete("round-trip") == {"id": "round-trip", "deleted": True}
    with pytest.raises(NotFoundError):
        client.get("round-trip")


def test_concurrent_callers_share_one_read(fx):
    server = fx.start()
    create(server, fx.key, "Crowd")
    proxy = fx.proxy(server.url)
    client = fx.client(proxy.url, mode="ttl")
    results: List[Prompt] = []
    threads = [threading.Thread(target=lambda: results.append(client.get("crowd"))) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 20 and len({id(r) for r in results}) == 1
    assert proxy.count("/api/v2/prompts/crowd") == 1


def test_a_label_read_follows_the_label_and_is_gone_once_it_is_removed(fx):
    server = fx.start()
    v1 = create(server, fx.key, "Agent", sections("v1"))
    writer = fx.client(server.url)
    writer.publish("agent", v1["version"], label="staging")
    v2 = call(server.url, fx.key, "PUT", "/api/v2/prompts/agent", {"sections": sections("v2")})
    client = fx.client(server.url)
    staged = client.get("agent", version="staging")
    assert staged.version == v1["version"] and staged.label == "staging"
    wait_for(lambda: live(client), 10, "the stream")
    writer.publish("agent", v2["version"], label="staging")
    wait_for(lambda: client.get("agent", version="staging").version == v2["version"], 10, "the label's move")
    assert client.get("agent", version="staging").labels == {"production": v1["version"], "staging": v2["version"]}
    writer.remove_label("agent", "staging")

    def gone() -> bool:
        try:
            client.get("agent", version="staging")
            return False
        except PromptstoreError:
            return True

    wait_for(gone, 10, "the removal")


def test_a_label_move_reaches_the_client_with_its_read_without_a_request(fx):
    server = fx.start()
    v1 = create(server, fx.key, "Agent", sections("v1"))
    writer = fx.client(server.url)
    writer.publish("agent", v1["version"], label="staging")
    v2 = call(server.url, fx.key, "PUT", "/api/v2/prompts/agent", {"sections": sections("v2")})
    proxy = fx.proxy(server.url)
    client = fx.client(proxy.url)
    assert client.get("agent", version="staging").version == v1["version"]
    wait_for(lambda: live(client), 10, "the stream")
    before = proxy.count("/api/v2/prompts/agent")
    writer.publish("agent", v2["version"], label="staging")
    wait_for(lambda: client.get("agent", version="staging").version == v2["version"], 10, "the label's move")
    assert proxy.count("/api/v2/prompts/agent") == before
