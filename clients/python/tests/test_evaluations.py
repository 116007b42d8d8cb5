"""Datasets and evaluations through the Python client, against the real server binary (SQLite always,
PostgreSQL when TEST_DATABASE_URL is set) and the OpenAI stand-in answering the system prompt in capitals (a
connection added with ``promptstore connection add``, as an operator would): every verdict is known exactly."""

from __future__ import annotations

import json
import re
import threading
import time
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from promptstore import (
    BadRequestError,
    ClientClosedError,
    NotFoundError,
    PermissionDeniedError,
    Promptstore,
    PromptstoreError,
)

from support import StandIn, cli

HASH = re.compile(r"^[0-9a-f]{64}$")

#: Ada and Cy regress on "assist", Bob improves, Dee fails on both.
CASES: List[Dict[str, Any]] = [
    {"vars": {"customer": "Ada"}, "expected": "<ROLE>\nYOU HELP ADA.\n</ROLE>"},
    {"vars": {"customer": "Bob"}, "expected": "<ROLE>\nYOU ASSIST BOB.\n</ROLE>"},
    {"vars": {"customer": "Cy"}, "expected": "<ROLE>\nYOU HELP CY.\n</ROLE>", "tags": ["vip"]},
    {"vars": {"customer": "Dee"}, "expected": "nothing like it"},
]
CHECKS = [{"type": "expected"}, {"type": "contains", "name": "says you", "value": "YOU"}]


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    started = StandIn()
    yield started
    started.stop()


@pytest.fixture(params=["fx", "pg"], ids=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest) -> Any:
    """The test's fixture on SQLite, then on PostgreSQL (skipped without TEST_DATABASE_URL)."""
    return request.getfixturevalue(request.param)


def set_up(db: Any, stand_in: StandIn) -> Tuple[Promptstore, str, str, Any]:
    """A server that may call the stand-in on 127.0.0.1, a client, its project's id and a connection to the stand-in."""
    server = db.start({"PROMPTSTORE_DEFAULT_PLAN": "unlimited", "PROMPTSTORE_MODEL_ALLOW_PRIVATE": "true"})
    client = db.client(server.url, mode="none")
    project_id = client.list()["project"]["id"]
    added = cli(
        db.database.url,
        "connection", "add", project_id,
        "--name", "Stand-in",
        "--base-url", stand_in.base_url,
        "--api-key-env", "STAND_IN_KEY",
        "--model", "caps",
        env={"STAND_IN_KEY": stand_in.api_key, "PROMPTSTORE_MODEL_ALLOW_PRIVATE": "true"},
    )  # fmt: skip
    assert re.match(r"^con_[0-9a-f]{24}$", added["id"])
    return client, added["id"], project_id, server


def two_versions(client: Promptstore) -> Tuple[str, str]:
    """The prompt ``support``: production "You help {{ customer }}.", latest "You assist {{ customer }}."."""
    production = client.create(
        {"id": "support", "name": "Support", "sections": [{"title": "Role", "content": "You help {{ customer }}."}], "publish": True}
    )
    latest = client.save("support", {"sections": [{"title": "Role", "content": "You assist {{ customer }}."}]})
    return production["version"], latest["version"]


def test_datasets_round_trip_every_method(db, stand_in):
    client, _, _, _ = set_up(db, stand_in)
    created = client.datasets.create("Customers", CASES, description="tier 1")
    assert created == {"id": created["id"], "name": "Customers", "version": created["version"], "cases": 4}
    assert re.match(r"^ds_[0-9a-f]{24}$", created["id"]) and HASH.match(created["version"])
    dataset_id = created["id"]

    read = client.datasets.get(dataset_id)
    assert (read["name"], read["description"], read["head"], read["version"], read["cases"], read["parent"]) == (
        "Customers", "tier 1", created["version"], created["version"], 4, None,
    )  # fmt: skip
    assert [(d["id"], d["version"], d["cases"]) for d in client.datasets.list()] == [(dataset_id, created["version"], 4)]

    appended = client.datasets.append(dataset_id, [{"vars": {"customer": "Eve"}}], message="one more")
    assert appended == {"id": dataset_id, "version": appended["version"], "created": True, "cases": 5}
    same = client.datasets.replace(dataset_id, CASES, base=appended["version"])
    assert same == {"id": dataset_id, "version": created["version"], "created": False, "cases": 4}
    history = client.datasets.versions(dataset_id)
    assert history["head"] == created["version"]
    assert sorted(v["version"] for v in history["versions"]) == sorted([created["version"], appended["version"]])

    page = client.datasets.cases(dataset_id, limit=2)
    assert [c["position"] for c in page["cases"]] == [0, 1] and page["next_after"] == 1
    every = list(client.datasets.cases_all(dataset_id, version=appended["version"][:9], limit=2))
    assert [c["case"]["vars"]["customer"] for c in every] == ["Ada", "Bob", "Cy", "Dee", "Eve"]
    assert every[2]["case"] == CASES[2] and HASH.match(every[0]["id"])

    renamed = client.datasets.update(dataset_id, name="Renamed", description=None)
    assert (renamed["name"], renamed["description"], renamed["version"]) == ("Renamed", None, created["version"])

    with client.datasets.export(dataset_id, version=appended["version"]) as exported:
        assert (exported.version, exported.count) == (appended["version"], 5)
        lines = list(exported)
    assert lines == CASES + [{"vars": {"customer": "Eve"}}]

    # The export imports back as the same version; a CSV makes a dataset too, and grows by an import.
    imported = client.datasets.import_file("\n".join(json.dumps(c) for c in lines), name="Imported")
    assert (imported["name"], imported["version"], imported["cases"]) == ("Imported", appended["version"], 5)
    csv = client.datasets.import_file("customer,expected\nAda,hi\nBob,\n", name="From CSV", format="csv")
    assert [c["case"] for c in client.datasets.cases_all(csv["id"])] == [
        {"vars": {"customer": "Ada"}, "expected": "hi"},
        {"vars": {"customer": "Bob"}},
    ]
    grown = client.datasets.import_into(csv["id"], b'{"vars":{"customer":"Cy"}}\n', mode="append")
    assert (grown["id"], grown["created"], grown["cases"]) == (csv["id"], True, 3)

    # Refusals are typed errors naming the field.
    with pytest.raises(BadRequestError) as bad:
        client.datasets.create("Bad", [{"vars": {"customer": "Ada"}}, {"vars": {"customer": 5}}])
    assert (bad.value.status, str(bad.value)) == (400, "cases[1].vars.customer: must be a string, not a number")
    with pytest.raises(BadRequestError) as bad_line:
        client.datasets.import_file('{"vars":{}}\nnot json\n', name="Bad file")
    assert str(bad_line.value).startswith("line 2: ")
    with pytest.raises(ValueError):
        client.datasets.import_file("x", name="Nope", format="xlsx")

    assert client.datasets.delete(dataset_id) == {"id": dataset_id, "deleted": True}
    with pytest.raises(NotFoundError):
        client.datasets.get(dataset_id)


def test_run_wait_read_and_reuse_with_exact_pass_rates(db, stand_in):
    client, connection, _, _ = set_up(db, stand_in)
    production, latest = two_versions(client)
    dataset = client.datasets.create("Customers", CASES)
    body: Dict[str, Any] = dict(
        versions=["production", "latest"], dataset=dataset["id"], checks=CHECKS, connection=connection,
        model={"name": "caps"}, guard=False,
    )  # fmt: skip

    started = client.evaluations.run("support", **body)
    assert (started["prompt_id"], started["status"], started["reused"]) == ("support", "running", False)
    assert re.match(r"^ev_[0-9a-f]{24}$", started["id"])

    progress: List[Dict[str, Any]] = []
    done = client.evaluations.wait(started["id"], on_progress=progress.append)
    assert done["status"] == "done"
    assert done["progress"] == {"done": 8, "total": 8}
    assert [
        (v["ref"], v["version"], v["passed"], v["failed"], v["errored"], v["pass_rate"], v["scores"])
        for v in done["versions"]
    ] == [
        ("production", production, 2, 2, 0, 0.5, {"expected": 0.5, "says you": 1}),
        ("latest", latest, 1, 3, 0, 0.25, {"expected": 0.25, "says you": 1}),
    ]
    assert done["compare"] == {"regressions": 2, "improvements": 1}
    assert all(p["progress"]["total"] == 8 for p in progress)
    assert stand_in.requests() == 8

    read = client.evaluations.get(started["id"], only="regression")
    assert [(c["position"], c["class"]) for c in read["cases"]["items"]] == [(0, "regression"), (2, "regression")]
    assert read["cases"]["items"][0]["results"][1]["answer"] == {
        "role": "assistant",
        "content": "<ROLE>\nYOU ASSIST ADA.\n</ROLE>",
    }
    page = client.evaluations.cases(started["id"], limit=3)
    assert (len(page["items"]), page["next"]) == (3, 2)
    assert [c["class"] for c in client.evaluations.cases_all(started["id"], limit=1)] == [
        "regression", "improvement", "regression", "failed",
    ]  # fmt: skip
    assert [c["case"]["vars"]["customer"] for c in client.evaluations.cases_all(started["id"], only="improvement")] == [
        "Bob"
    ]

    again = client.evaluations.run("support", **body)
    assert (again["status"], again["reused"], again["reused_from"]) == ("done", True, started["id"])
    assert [v["pass_rate"] for v in again["versions"]] == [0.5, 0.25]
    assert client.evaluations.wait(again["id"])["reused"] is True
    assert client.evaluations.stop(again["id"])["status"] == "done"
    assert stand_in.requests() == 8
    assert [e["id"] for e in client.evaluations.list("support")] == [again["id"], started["id"]]


def test_stop_timeout_close_a_read_key_and_bad_input(db, stand_in):
    client, connection, project_id, server = set_up(db, stand_in)
    two_versions(client)
    dataset = client.datasets.create("Customers", CASES)
    body: Dict[str, Any] = dict(
        versions=["production", "latest"], dataset=dataset["id"], checks=CHECKS, connection=connection,
        model={"name": "slow"}, guard=False, concurrency=1,
    )  # fmt: skip
    started = client.evaluations.run("support", **body)
    assert started["status"] == "running"

    # A wait that gives up leaves the evaluation running.
    with pytest.raises(PromptstoreError) as gave_up:
        client.evaluations.wait(started["id"], timeout=0.05)
    assert (gave_up.value.code, str(gave_up.value)) == ("timeout", f"evaluation {started['id']}: not ended within 0.05 s")

    # close() ends a wait in another thread with ClientClosedError, at once.
    other = db.client(server.url, mode="none")
    outcome: List[BaseException] = []

    def waiting() -> None:
        try:
            other.evaluations.wait(started["id"])
        except BaseException as error:  # noqa: BLE001 - what it raised is the test's answer
            outcome.append(error)

    thread = threading.Thread(target=waiting)
    thread.start()
    time.sleep(0.3)
    other.close()
    thread.join(5)
    assert not thread.is_alive() and isinstance(outcome[0], ClientClosedError)

    stopped = client.evaluations.stop(started["id"])
    assert stopped["status"] in ("running", "stopped")
    ended = client.evaluations.wait(started["id"])
    assert ended["status"] == "stopped"
    assert sum(v["pending"] for v in ended["versions"]) > 0
    assert sum(v["passed"] + v["failed"] + v["errored"] + v["pending"] for v in ended["versions"]) == 8

    read_key = cli(db.database.url, "key", "create", project_id, "--scope", "read")["key"]
    reader = db.client(server.url, api_key=read_key, mode="none")
    with pytest.raises(PermissionDeniedError) as refused:
        reader.evaluations.run("support", **body)
    assert (refused.value.status, str(refused.value)) == (
        403, "scope: running an evaluation needs a key with scope write or higher; this key has scope read",
    )  # fmt: skip
    assert reader.evaluations.get(started["id"])["status"] == "stopped"
    assert [d["id"] for d in reader.datasets.list()] == [dataset["id"]]

    with pytest.raises(BadRequestError) as bad:
        client.evaluations.run("support", **{**body, "concurrency": 0})
    assert str(bad.value) == "concurrency: must be 1 to 32"
    with pytest.raises(NotFoundError) as unknown:
        client.evaluations.run("support", **{**body, "versions": ["production", "0badc0de"]})
    assert str(unknown.value) == "versions[1]: no version of prompt support matches 0badc0de"
    with pytest.raises(NotFoundError) as missing:
        client.evaluations.wait("ev_" + "0" * 24)
    assert str(missing.value) == f"evaluation ev_{'0' * 24} not found"


def test_wait_follows_the_stream_again_after_a_break_and_a_500(fx, stand_in):
    client, connection, _, server = set_up(fx, stand_in)
    two_versions(client)
    dataset = client.datasets.create("Customers", CASES)
    started = client.evaluations.run(
        "support", versions=["production", "latest"], dataset=dataset["id"], checks=CHECKS, connection=connection,
        model={"name": "slow"}, guard=False, concurrency=1,
    )  # fmt: skip
    proxy = fx.proxy(server.url)
    through = fx.client(proxy.url, mode="none", retry_base_delay=0.01)
    events = f"/api/v2/evaluations/{started['id']}/events"
    broken: List[bool] = []

    def on_progress(_: Dict[str, Any]) -> None:
        if broken:
            return
        broken.append(True)
        # The stream breaks as a network failure would, and its next connection is answered 500 once.
        proxy.fail_next(1)
        proxy.cut()

    done = through.evaluations.wait(started["id"], interval=0.02, on_progress=on_progress)
    assert done["status"] == "done"
    assert [v["pass_rate"] for v in done["versions"]] == [0.5, 0.25]
    assert proxy.count(events) == 3


def test_evaluate_content_for_a_labels_required_evaluation_and_then_publish_it(db, stand_in, tmp_path):
    """``evaluate()`` of content not yet published, against the label's required evaluation: the thresholds
    decide as the gate does, and content that passed is then published (its hash is the one evaluated)."""
    client, connection, project_id, _ = set_up(db, stand_in)
    production, latest = two_versions(client)
    dataset = client.datasets.create("Customers", CASES)
    requirement = {
        "dataset": dataset["id"],
        "checks": CHECKS,
        "connection": connection,
        "model": {"name": "caps"},
        "guard": False,
        "min_pass_rate": 0.25,
        "min_check_pass_rates": {"says you": 1},
    }
    path = tmp_path / "requirement.json"
    path.write_text(json.dumps(requirement))
    cli(
        db.database.url, "label", "set", project_id, "production", "--required-evaluation", str(path),
        env={"PROMPTSTORE_MODEL_ALLOW_PRIVATE": "true"},
    )  # fmt: skip

    # "Hi Ada." says no "you": every case fails.
    hi = {"sections": [{"title": "Role", "content": "Hi {{ customer }}."}]}
    failed = client.evaluations.evaluate("support", content=hi, label="production")
    assert (failed.passed, failed.required_by) == (False, "production")
    assert [(t.name, t.required, t.actual, t.ok) for t in failed.thresholds] == [
        ("pass rate", ">= 0.25", "0", False),
        ('check "says you"', ">= 1", "0", False),
    ]
    assert stand_in.requests() == 4
    with pytest.raises(PromptstoreError) as refused:
        client.save("support", {**hi, "publish": True})
    assert refused.value.status == 409
    assert "label: production requires a passing evaluation of" in str(refused.value)

    # The latest version's content, not yet published: one case of four passes, "you" every time.
    assist = {"sections": [{"title": "Role", "content": "You assist {{ customer }}."}]}
    passed = client.evaluations.evaluate("support", content=assist, label="production")
    assert passed.passed is True
    assert [(t.name, t.actual, t.ok) for t in passed.thresholds] == [("pass rate", "0.25", True), ('check "says you"', "1", True)]
    assert passed.candidate["version"] == latest
    assert stand_in.requests() == 8
    # Evaluated again: nothing is asked of the model (kept by content).
    again = client.evaluations.evaluate("support", content=assist, label="production")
    assert (again.passed, again.evaluation["reused"], stand_in.requests()) == (True, True, 8)
    # The gate counts it: the latest version may now be published.
    assert client.save("support", {**assist, "publish": True})["version"] == latest
    assert client.get("support").version == latest != production

    with pytest.raises(ValueError, match="give content or version"):
        client.evaluations.evaluate("support", label="production")
