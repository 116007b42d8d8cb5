from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable, Iterator, List

import pytest

# The package under test is the source tree, not an installed copy.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from promptstore import Promptstore  # noqa: E402

from support import PostgresDatabase, Proxy, Server, SqliteDatabase  # noqa: E402

UNLIMITED = {"PROMPTSTORE_DEFAULT_PLAN": "unlimited"}


class Fixture:
    def __init__(self, database: "SqliteDatabase | PostgresDatabase") -> None:
        self.database = database
        self.key = ""
        self.servers: List[Server] = []
        self.proxies: List[Proxy] = []
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
