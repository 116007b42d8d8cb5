"""``record()`` and ``report_serving`` against the real server's endpoints (docs/outcomes.md): outcomes recorded
here are read back with ``GET /api/v2/prompts/:id/outcomes``, what clients serve with ``.../fleet``. These need
the server's half of issue 40 (``POST /api/v2/outcomes``, from branch ``outcomes``, merged into this one)."""

from __future__ import annotations

import pytest

from promptstore import rollout_arm
from support import call, sections, wait_for

DATABASES = ["sqlite", "postgresql"]


def until(url, key, query, count):
    """The server writes what it takes within a second: read until the count is there."""
    series = []

    def counted():
        series[:] = call(url, key, "GET", f"/api/v2/prompts/support/outcomes?{query}")["series"]
        return sum(s["totals"]["count"] for s in series) == count

    wait_for(counted, 10, f"{count} outcomes to be counted")
    return series


@pytest.mark.parametrize("database", DATABASES)
def test_outcomes_recorded_are_counted_per_version_exactly(database, request):
    fx = request.getfixturevalue("fx" if database == "sqlite" else "pg")
    server = fx.start()
    client = fx.client(server.url)
    v1 = client.create({"name": "Support", "sections": sections("v1"), "publish": True})["version"]
    read = client.get("support")
    client.record(read, ok=True, latency_ms=100, score=1, tokens={"input": 10, "output": 5})
    client.record(read, ok=False, latency_ms=300, score=0, tokens={"input": 20, "output": 0})
    client.record(read, ok=True, latency_ms=200, tags={"route": "chat"})
    assert client.flush() is True
    assert client.outcome_stats() == {"recorded": 3, "sent": 3, "refused": 0, "dropped": 0, "invalid": 0, "pending": 0}
    series = until(server.url, fx.key, "by=version", 3)
    assert len(series) == 1
    assert (series[0]["version"], series[0]["label"], series[0]["arm"]) == (v1, None, None)
    totals = series[0]["totals"]
    assert (totals["count"], totals["ok"], totals["score_count"], totals["score_mean"]) == (3, 2, 2, 0.5)
    assert (totals["tokens_input"], totals["tokens_output"]) == (30, 5)
    assert totals["ok_rate"] == pytest.approx(2 / 3, abs=1e-5)
    assert totals["latency_p50"] is not None


@pytest.mark.parametrize("database", DATABASES)
def test_in_a_rollout_each_outcome_is_counted_on_the_arm_its_read_got(database, request):
    fx = request.getfixturevalue("fx" if database == "sqlite" else "pg")
    server = fx.start()
    client = fx.client(server.url)
    v1 = client.create({"name": "Support", "sections": sections("v1"), "publish": True})["version"]
    v2 = client.save("support", {"sections": sections("v2")})["version"]
    client.publish("support", v2, percent=50)
    users = [f"user-{i}" for i in range(40)]
    candidates = [u for u in users if rollout_arm("support", "production", 50, u) == "candidate"][:4]
    currents = [u for u in users if rollout_arm("support", "production", 50, u) == "current"][:6]
    for user in candidates:
        read = client.get("support", assign=user)
        assert read.rollout["arm"] == "candidate"
        client.record(read, ok=False)
    for user in currents:
        client.record(client.get("support", assign=user), ok=True)
    assert client.flush() is True
    assert client.outcome_stats()["sent"] == 10
    by_arm = {s["arm"]: s for s in until(server.url, fx.key, "by=arm", 10)}
    assert (by_arm["candidate"]["version"], by_arm["candidate"]["label"]) == (v2, "production")
    assert (by_arm["candidate"]["totals"]["count"], by_arm["candidate"]["totals"]["ok"]) == (4, 0)
    assert (by_arm["current"]["version"], by_arm["current"]["label"]) == (v1, "production")
    assert (by_arm["current"]["totals"]["count"], by_arm["current"]["totals"]["ok"]) == (6, 6)


@pytest.mark.parametrize("database", DATABASES)
def test_an_outcome_the_server_cannot_place_is_refused_and_counted(database, request):
    fx = request.getfixturevalue("fx" if database == "sqlite" else "pg")
    server = fx.start()
    client = fx.client(server.url)
    client.create({"name": "Support", "sections": sections("v1"), "publish": True})
    other = client.create({"name": "Other", "sections": sections("other"), "publish": True})
    read = client.get("support")
    client.record(read, ok=True)
    # A version that is not the prompt's: the server refuses it alone.
    client.record({**read.raw, "version": other["version"]}, ok=True)
    client.record(read, ok=False)
    assert client.flush() is True
    assert client.outcome_stats() == {"recorded": 3, "sent": 2, "refused": 1, "dropped": 0, "invalid": 0, "pending": 0}
    until(server.url, fx.key, "by=version", 2)


@pytest.mark.parametrize("database", DATABASES)
def test_report_serving_the_fleet_counts_instances_and_follows_a_publish(database, request):
    fx = request.getfixturevalue("fx" if database == "sqlite" else "pg")
    server = fx.start()
    writer = fx.client(server.url, mode="none")
    v1 = writer.create({"name": "Support", "sections": sections("v1"), "publish": True})["version"]
    first = fx.client(server.url, report_serving=True, outcomes={"heartbeat": 0.2})
    second = fx.client(server.url, report_serving=True, outcomes={"heartbeat": 0.2})
    first.get("support")
    second.get("support")

    def fleet():
        return call(server.url, fx.key, "GET", "/api/v2/prompts/support/fleet")

    wait_for(lambda: fleet()["instances"] == 2, 10, "two instances in the fleet")
    assert [(s["label"], s["version"], s["instances"]) for s in fleet()["serving"]] == [("production", v1, 2)]
    v2 = writer.save("support", {"sections": sections("v2"), "publish": True})["version"]
    wait_for(
        lambda: any(s["version"] == v2 and s["instances"] == 2 for s in fleet()["serving"]),
        10,
        "both instances to report the new version",
    )
    assert fleet()["instances"] == 2
