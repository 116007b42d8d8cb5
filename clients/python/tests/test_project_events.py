"""A project's own change event (``label.requirement_changed``, docs/events.md) names no prompt. A client in
watch mode ignores it (``on_event`` is not told, nothing held is touched, the stream stays) and goes on applying
the prompt events after it. The requirement is changed as an operator would, with ``promptstore label set``:
another process, heard by the server on both databases. The same case as the TypeScript client's
test/project-events.test.ts."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest

from support import call, cli, sections, wait_for


@pytest.fixture(params=["fx", "pg"], ids=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest) -> Any:
    """The test's fixture on SQLite, then on PostgreSQL (skipped without TEST_DATABASE_URL)."""
    return request.getfixturevalue(request.param)


def test_a_requirement_change_is_ignored_and_the_publish_after_it_is_applied(db, tmp_path):
    server = db.start()
    v1 = call(server.url, db.key, "POST", "/api/v2/prompts", {"name": "Agent", "sections": sections("v1"), "publish": True})
    project_id = call(server.url, db.key, "GET", "/api/v2/prompts")["project"]["id"]
    connection = cli(
        db.database.url,
        "connection", "add", project_id,
        "--name", "Model",
        "--base-url", "https://models.example.com/v1",
        "--model", "m1",
    )  # fmt: skip
    dataset = call(server.url, db.key, "POST", "/api/v2/datasets", {"name": "cases", "cases": [{"vars": {"company": "Acme"}}]})

    proxy = db.proxy(server.url)
    events: List[Dict[str, Any]] = []
    errors: List[BaseException] = []
    client = db.client(proxy.url, ttl=3600, on_event=events.append, on_error=errors.append)
    assert client.get("agent").version == v1["version"]
    wait_for(lambda: client.status["stream"] == "live" and client.status["reading"] == 0, 10, "the stream")
    before = client.status["last_event_id"]

    requirement = {
        "dataset": dataset["id"],
        "checks": [{"type": "contains", "value": "Acme"}],
        "connection": connection["id"],
        "min_pass_rate": 1,
    }
    path = tmp_path / "requirement.json"
    path.write_text(json.dumps(requirement))
    settings = cli(db.database.url, "label", "set", project_id, "staging", "--required-evaluation", str(path))
    assert settings["required_evaluation"] == requirement

    # The client received it (its position in the stream moved past it), and told no one.
    wait_for(lambda: client.status["last_event_id"] != before, 10, "the requirement event")
    assert int(client.status["last_event_id"]) == int(before) + 1
    assert events == []

    # The next prompt events, on the same stream: applied as ever, served from the event's read.
    v2 = call(server.url, db.key, "PUT", "/api/v2/prompts/agent", {"sections": sections("v2"), "publish": True})
    wait_for(lambda: any(e["type"] == "prompt.published" for e in events), 10, "the publish event")
    assert [(e["type"], e["version"]) for e in events] == [
        ("prompt.version_saved", v2["version"]),
        ("prompt.published", v2["version"]),
    ]
    assert client.get("agent").version == v2["version"]
    assert proxy.count("/api/v2/prompts/agent") == 1
    assert proxy.count("/api/v2/events") == 1
    assert client.status["stream"] == "live"
    assert errors == []
