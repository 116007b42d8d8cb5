from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Callable, Iterator, List

import pytest

# The package under test is the source tree, not an installed copy.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from promptstore import Promptstore  # noqa: E402

from support import OutcomeReceiver, PostgresDatabase, Proxy, Server, SqliteDatabase  # noqa: E402

UNLIMITED = {"PROMPTSTORE_DEFAULT_PLAN": "unlimited"}


class Fixture:
    def __init__(self, database: "SqliteDatabase | PostgresDatabase") -> None:
        self.database = database
        self.key = ""
        self.servers: List[Server] = []
        self.proxies: List["Proxy | OutcomeReceiver"] = []
        self.clients: List[Promptstore] = []

    def start(self, env: "dict[str, str] | None" = None) -> Server:
        server = Server(self.database.url, UNLIMITED if env is None else env)
        self.servers.append(server)
        if server.key:
            self.key = server.key
        return server

    def proxy(self, upstream: str) -> Proxy:
        proxy = Proxy(upstream)
        self.proxies.append(proxy)
        return proxy

    def receiver(self, upstream: str) -> OutcomeReceiver:
        """An outcomes receiver in front of ``upstream`` (support.OutcomeReceiver); closed after the test."""
        receiver = OutcomeReceiver(upstream)
        self.proxies.append(receiver)
        return receiver

    def client(self, base_url: str, **options: object) -> Promptstore:
        options.setdefault("api_key", self.key)
        client = Promptstore(base_url=base_url, **options)  # type: ignore[arg-type]
        self.clients.append(client)
        return client

    def finish(self) -> None:
        for client in self.clients:
            client.close()
        for proxy in self.proxies:
            proxy.close()
        for server in self.servers:
            server.stop()
        self.database.drop()


@pytest.fixture
def fx() -> Iterator[Fixture]:
    fixture = Fixture(SqliteDatabase())
    yield fixture
    fixture.finish()


@pytest.fixture
def pg() -> Iterator[Fixture]:
    url = os.environ.get("TEST_DATABASE_URL")
    if not url:
        if os.environ.get("CI"):
            pytest.fail("TEST_DATABASE_URL is not set: CI runs the PostgreSQL tests")
        pytest.skip("TEST_DATABASE_URL is not set: the PostgreSQL test is skipped")
    fixture = Fixture(PostgresDatabase(url))
    yield fixture
    fixture.finish()


Make = Callable[..., Promptstore]

_free: "dict[str, object]" = {}


def pytest_sessionstart(session: pytest.Session) -> None:
    """The free plan's rate limit counts a minute from a window's first request: the server of the 429 test
    starts now and makes that request, so that by the time the test (the last file) runs, much of the
    minute it must wait out has passed while the other tests ran."""
    database = SqliteDatabase()
    server = Server(database.url, {"PROMPTSTORE_DEFAULT_PLAN": "free"})
    from support import SECTIONS, call

    call(server.url, server.key, "POST", "/api/v2/prompts", {"name": "Limited", "sections": SECTIONS})
    _free.update(database=database, server=server)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _free:
        _free["server"].stop()  # type: ignore[attr-defined]
        _free["database"].drop()  # type: ignore[attr-defined]
    # What ran, for CI (.ci/run reads it). In CI a skipped test fails the run, as on the Node.js side: a part
    # that did not run must never vanish silently.
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    stats = reporter.stats if reporter is not None else {}
    counts = {
        "passed": len([r for r in stats.get("passed", []) if r.when == "call"]),
        "failed": len(stats.get("failed", [])) + len(stats.get("error", [])),
        "skipped": len(stats.get("skipped", [])),
    }
    if os.environ.get("CI") and counts["skipped"] > 0 and session.exitstatus == 0:
        session.exitstatus = 1
        print(f"\nCI: {counts['skipped']} Python client tests were skipped; CI runs them all", file=sys.stderr)
    report = Path(__file__).resolve().parents[1] / ".tmp" / "pytest-report.json"
    report.parent.mkdir(exist_ok=True)
    failures = [
        {"test": r.nodeid, "why": "\n".join(str(r.longrepr).splitlines()[-6:])}
        for r in stats.get("failed", []) + stats.get("error", [])
    ]
    report.write_text(json.dumps({**counts, "exitstatus": int(session.exitstatus), "failures": failures}))


@pytest.fixture
def free_server() -> Server:
    """A server on the free plan (60 requests a minute) holding the prompt ``limited``, its window started."""
    return _free["server"]  # type: ignore[return-value]
