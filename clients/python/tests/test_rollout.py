"""Sticky rollout assignment in the Python client (docs/releases.md): ``get(id, version=..., assign=...)``
serves the arm the server would, from memory, with both arms held. The client keeps a copy of the assignment
function (standard library only): these tests pin it to the shared vectors and compare its arm with the real
server's over a thousand assign values."""

from __future__ import annotations

import doctest
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

import promptstore._rollout
from promptstore import BadRequestError, PromptstoreError, rollout_arm, rollout_bucket
from promptstore._rollout import murmur3, other_arm_view
from support import BIN, call, sections, wait_for

VECTORS = json.loads(
    (Path(__file__).resolve().parents[3] / "packages/core/test/fixtures/rollout-vectors.json").read_text("utf-8")
)
ASSIGNS = [f"user-{i}" if i % 3 == 0 else f"tenant:{i * 7919}" if i % 3 == 1 else f"ü-{i}-🚀" for i in range(1000)]


def live(client) -> bool:
    return client.status["stream"] == "live" and client.status["reading"] == 0


def test_the_documented_test_vectors():
    assert len(VECTORS) >= 8
    for v in VECTORS:
        assert rollout_bucket(v["prompt_id"], v["label"], v["assign"]) == v["bucket"], v


def test_murmur3_documented_values_and_the_module_examples():
    assert murmur3(b"") == 0
    assert murmur3(b"hello") == 0x248BFA47
    assert murmur3(b"The quick brown fox jumps over the lazy dog") == 0x2E4FF723
    assert doctest.testmod(promptstore._rollout).failed == 0


def test_the_bucket_is_cores_over_10000_values():
    """Core's own function (the built packages/core, as the server runs it) over the same 10 000 triples."""
    triples = [(f"prompt-{i % 97}", "production" if i % 2 else "eu-canary", f"{ASSIGNS[i % 1000]}{i}") for i in range(10_000)]
    core = Path(__file__).resolve().parents[3] / "packages/core/dist/labels.js"
    script = (
        f"import {{ rolloutBucket }} from {json.dumps(core.as_uri())};"
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>"
        "console.log(JSON.stringify(JSON.parse(s).map(([p,l,a])=>rolloutBucket(p,l,a)))));"
    )
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script], input=json.dumps(triples), capture_output=True, text=True, check=True
    )
    assert [rollout_bucket(*t) for t in triples] == json.loads(out.stdout)


def test_candidate_below_percent_times_100_and_at_random_without_assign():
    v = VECTORS[0]
    assert rollout_arm(v["prompt_id"], v["label"], v["bucket"] / 100 + 0.01, v["assign"]) == "candidate"
    assert rollout_arm(v["prompt_id"], v["label"], v["bucket"] / 100, v["assign"]) == "current"
    share = sum(rollout_arm("p", "production", 25, None) == "candidate" for _ in range(4000)) / 4000
    assert 0.2 < share < 0.3


def rolled_out(fx, url):
    """A prompt with v1 in production and staging, and v2 rolled out to 30% of production and 60% of staging.
    Only v2 has model settings, so each arm must carry its own (or none)."""
    writer = fx.client(url, mode="none")
    v1 = call(url, fx.key, "POST", "/api/v2/prompts", {"name": "Agent", "sections": sections("v1"), "publish": True})["version"]
    writer.publish("agent", v1, label="staging")
    v2 = call(url, fx.key, "PUT", "/api/v2/prompts/agent", {"sections": sections("v2"), "model": {"name": "gpt-4o", "temperature": 0.3}})["version"]
    writer.publish("agent", v2, percent=30)
    writer.publish("agent", v2, label="staging", percent=60)
    return writer, v1, v2


def same(local, remote) -> bool:
    return local == remote and local.raw == remote.raw and list(local.raw) == list(remote.raw)


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_the_other_arm_composed_from_its_pinned_read_is_exactly_the_servers_answer(database, request):
    fx = request.getfixturevalue("fx" if database == "sqlite" else "pg")
    server = fx.start()
    writer, v1, v2 = rolled_out(fx, server.url)
    for label in ("production", "staging"):
        for guard in (True, False):
            reads = [writer.get("agent", version=label, assign=a, guard=guard) for a in ASSIGNS[:40]]
            current = next(r for r in reads if r.rollout["arm"] == "current")
            candidate = next(r for r in reads if r.rollout["arm"] == "candidate")
            assert (current.version, candidate.version) == (v1, v2)
            assert (current.model, candidate.model) == (None, {"name": "gpt-4o", "temperature": 0.3})
            assert same(other_arm_view(current, writer.get("agent", version=v2, guard=guard)), candidate)
            assert same(other_arm_view(candidate, writer.get("agent", version=v1, guard=guard)), current)


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_a_thousand_assign_values_get_the_servers_arm_then_no_request(database, request):
    fx = request.getfixturevalue("fx" if database == "sqlite" else "pg")
    server = fx.start()
    writer, v1, v2 = rolled_out(fx, server.url)
    proxy = fx.proxy(server.url)
    client = fx.client(proxy.url, ttl=3600)
    for label in ("production", "staging"):
        arms = {"current": 0, "candidate": 0}
        for assign in ASSIGNS:
            local = client.get("agent", version=label, assign=assign)
            remote = writer.get("agent", version=label, assign=assign)
            assert same(local, remote), (label, assign)
            assert local.version == (v2 if local.rollout["arm"] == "candidate" else v1)
            assert local.production_version == v1
            arms[local.rollout["arm"]] += 1
        assert arms["current"] > 0 and arms["candidate"] > 0
    wait_for(lambda: live(client), 10, "the stream")
    time.sleep(0.2)

    # Both arms held: a thousand new assign values make no request; each gets the same arm every time.
    before = proxy.connections
    for i in range(1000):
        assign = f"fresh-{i}"
        read = client.get("agent", assign=assign)
        assert read.rollout["arm"] == rollout_arm("agent", "production", 30, assign)
        assert client.get("agent", assign=assign) is read
        client.get("agent", version="staging", assign=assign)
    # Without assign: at random per call, as the server does.
    share = sum(client.get("agent").version == v2 for _ in range(2000)) / 2000
    assert 0.24 < share < 0.36
    assert proxy.connections == before


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_events_keep_both_arms_fresh(database, request):
    fx = request.getfixturevalue("fx" if database == "sqlite" else "pg")
    server = fx.start()
    writer, v1, v2 = rolled_out(fx, server.url)
    client = fx.client(server.url, ttl=3600)

    def served(percent, label="production") -> bool:
        for assign in ASSIGNS[:200]:
            read = client.get("agent", version=label, assign=assign)
            arm = None if percent is None else rollout_arm("agent", label, percent, assign)
            if (read.rollout or {}).get("percent") != percent or (read.rollout or {}).get("arm") != arm:
                return False
            assert same(read, writer.get("agent", version=label, assign=assign))
        return True

    assert served(30) and served(60, "staging")
    wait_for(lambda: live(client), 10, "the stream")
    writer.publish("agent", v2, percent=80)
    wait_for(lambda: served(80), 10, "the new percent")
    writer.publish("agent", v1, label="staging")  # aborted: staging serves v1 to everyone
    wait_for(lambda: served(None, "staging"), 10, "the abort")
    assert client.get("agent", version="staging", assign="user-3").version == v1
    writer.publish("agent", v2)  # completed: production serves v2 to everyone
    wait_for(lambda: served(None), 10, "the completion")
    done = client.get("agent", assign="user-3")
    assert (done.version, done.production_version, done.rollout) == (v2, v2, None)


def test_on_change_tells_of_a_rollouts_versions_not_of_the_arm_a_new_read_happened_to_get(fx):
    server = fx.start()
    _, v1, v2 = rolled_out(fx, server.url)
    changes = []
    client = fx.client(server.url, ttl=3600, on_change=changes.append)
    client.get("agent", assign="user-1")
    # Each of this client's writes makes it read production again, and each read gets an arm at random.
    held = set()
    for i in range(20):
        client.publish("agent", v2, percent=50 + i % 2)
        client.get("agent")
        held.add(client._memory.peek(client._key("agent", "production", None)).version)
    assert held == {v1, v2}  # both arms were held in turn (20 draws at 50%)
    assert len([c for c in changes if c.ref == "production"]) == 1


def test_while_the_service_cannot_be_reached_held_arms_are_still_served_by_assign_value(fx):
    server = fx.start()
    rolled_out(fx, server.url)
    client = fx.client(server.url, ttl=3600, retries=0)
    served = {assign: client.get("agent", assign=assign) for assign in ASSIGNS[:200]}  # both arms held
    server.stop()
    # The client's own write, failed, still marks what it holds of the prompt out of date: the next get asks.
    with pytest.raises(PromptstoreError):
        client.publish("agent", percent=40)
    for assign in ASSIGNS[:200]:
        assert same(client.get("agent", assign=assign), served[assign]), assign


def test_a_label_that_falls_back_to_production_in_a_rollout_gets_productions_arm(fx):
    server = fx.start()
    writer = fx.client(server.url, mode="none")
    v1 = call(server.url, fx.key, "POST", "/api/v2/prompts", {"name": "Agent", "sections": sections("v1"), "publish": True})["version"]
    v2 = call(server.url, fx.key, "PUT", "/api/v2/prompts/agent", {"sections": sections("v2")})["version"]
    writer.publish("agent", v2, percent=30)
    project = writer.list()["project"]["id"]
    env = {**os.environ, "DATABASE_URL": fx.database.url}
    subprocess.run(["node", str(BIN), "label", "set", project, "staging", "--fallback", "production"], env=env, check=True, capture_output=True)
    client = fx.client(server.url, ttl=3600)
    versions = set()
    for assign in ASSIGNS[:300]:
        local = client.get("agent", version="staging", assign=assign)
        assert same(local, writer.get("agent", version="staging", assign=assign)), assign
        assert (local.label, local.raw["fallback_for"], local.rollout["arm"]) == (
            "production",
            "staging",
            rollout_arm("agent", "production", 30, assign),
        )
        versions.add(local.version)
    assert versions == {v1, v2}


def test_an_assign_value_the_server_refuses_is_the_same_400_from_memory(fx):
    server = fx.start()
    writer, _, _ = rolled_out(fx, server.url)
    client = fx.client(server.url, ttl=3600)
    client.get("agent", assign="user-1")
    for assign in ("x" * 201, "🚀" * 201, "a\x00b"):
        with pytest.raises(BadRequestError) as remote:
            writer.get("agent", assign=assign)
        with pytest.raises(BadRequestError) as local:
            client.get("agent", assign=assign)
        assert (str(local.value), local.value.status) == (str(remote.value), remote.value.status)
    for assign in ("x" * 200, "🚀" * 200, "ünïcødé 🚀", ""):
        assert same(client.get("agent", assign=assign), writer.get("agent", assign=assign)), assign
