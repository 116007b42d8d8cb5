"""A prompt with includes (docs/includes.md) through the Python client against the real server: one read, the
expanded text, the included pieces' variables, the pinned hash; a piece's publish is told to ``on_event`` as
``include.outdated`` and changes nothing the client serves."""

from __future__ import annotations

import hashlib
import json

import pytest

from support import call, wait_for

SECTIONS = [{"title": "Role", "content": "You help {{ customer }}.\n{{> safety}}"}]
TEXT = "<Role>\nYou help {{ customer }}.\nNever reveal {{ secret }}.\n</Role>"


def pinned_hash(sections, includes):
    """The documented hash (README): canonical JSON of the content with its pins, keys sorted, no spaces."""
    content = {
        "includes": includes,
        "sections": [{"content": s["content"], "enabled": True, "title": s["title"]} for s in sections],
        "tools": [],
    }
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()


@pytest.fixture(params=["fx", "pg"])
def db(request):
    """SQLite, and PostgreSQL when TEST_DATABASE_URL is set."""
    return request.getfixturevalue(request.param)


def setup(server, key):
    piece = call(
        server.url, key, "POST", "/api/v2/prompts",
        {"id": "safety", "name": "Safety", "sections": [{"title": "Rules", "content": "Never reveal {{ secret }}."}], "publish": True},
    )
    support = call(server.url, key, "POST", "/api/v2/prompts", {"id": "support", "name": "Support", "sections": SECTIONS, "publish": True})
    return piece["version"], support["version"]


def test_a_read_of_a_prompt_with_includes_is_one_request_with_the_expanded_text(db):
    fx = db
    server = fx.start()
    piece, version = setup(server, fx.key)
    assert version == pinned_hash(SECTIONS, {"safety": piece})
    proxy = fx.proxy(server.url)
    client = fx.client(proxy.url, mode="none", guard=False)
    prompt = client.get("support")
    assert proxy.count("/api/v2/prompts/support") == 1
    assert proxy.count("/api/v2/") == 1
    assert prompt.prompt == TEXT
    assert prompt.variables == ("customer", "secret")
    assert prompt.version == version
    assert client.fill(prompt, {"customer": "Ana", "secret": "keys"}) == "<Role>\nYou help Ana.\nNever reveal keys.\n</Role>"


def test_a_pieces_publish_is_told_to_on_event_and_changes_nothing_served(db):
    fx = db
    server = fx.start()
    piece, version = setup(server, fx.key)
    events = []
    client = fx.client(server.url, guard=False, on_event=events.append)
    assert client.get("support").prompt == TEXT
    wait_for(lambda: client.status["stream"] == "live" and client.status["reading"] == 0, 10, "the stream")
    newer = call(
        server.url, fx.key, "PUT", "/api/v2/prompts/safety",
        {"sections": [{"title": "Rules", "content": "Say nothing."}], "publish": True},
    )
    wait_for(lambda: any(e["type"] == "include.outdated" for e in events), 10, "include.outdated")
    outdated = next(e for e in events if e["type"] == "include.outdated")
    assert outdated["prompt_id"] == "support" and outdated["version"] == version
    assert outdated["include"] == {
        "prompt": "safety",
        "pointer": "production",
        "references": ["safety"],
        "pinned": piece,
        "current": newer["version"],
        "labels": ["production", "latest"],
    }
    held = client.get("support")
    assert held.prompt == TEXT and held.version == version
