"""What the tests run against: the real ``promptstore`` binary on a free port and a fresh database, and a TCP
proxy of our own for what the server cannot be made to do on demand (count connections, cut streams, be
unreachable, answer 500 once). Never mocks."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

REPO = Path(__file__).resolve().parents[3]
BIN = REPO / "packages" / "server" / "bin" / "promptstore.js"


def secret_key_env(database_url: str) -> Dict[str, str]:
    """PostgreSQL has no file beside it for a generated key: the server must be given one."""
    if database_url.startswith("postgres"):
        return {"PROMPTSTORE_SECRET_KEY": "5ec7e7c0ffee" * 5 + "5ec7"}
    return {}


class Server:
    """``promptstore serve --port 0 --json`` on a database; ``key`` is the one it prints on a first start."""

    def __init__(self, database_url: str, env: Optional[Dict[str, str]] = None) -> None:
        full_env = {**os.environ, "DATABASE_URL": database_url, "LOG_LEVEL": "warn", **secret_key_env(database_url), **(env or {})}
        self.process = subprocess.Popen(
            ["node", str(BIN), "serve", "--port", "0", "--json"],
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.key = ""
        self.url = ""
        deadline = time.monotonic() + 30
        assert self.process.stdout is not None
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the server exited: {self.process.stderr.read() if self.process.stderr else ''}")
            if not line.startswith('{"event"'):
                continue
            event = json.loads(line)
            if event["event"] == "bootstrap":
                self.key = event["key"]["key"]
            if event["event"] == "listening":
                self.url = event["url"]
                break
        if not self.url:
            raise RuntimeError("the server did not start within 30 s")
        # Its later output is read (and dropped) so that a full pipe never blocks it.
        threading.Thread(target=self.process.stdout.read, daemon=True).start()
        threading.Thread(target=self.process.stderr.read, daemon=True).start()  # type: ignore[union-attr]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


def call(url: str, key: str, method: str = "GET", path: str = "/", body: Any = None) -> Any:
    """One plain request (urllib), for what the test does beside the client under test."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method, headers={"x-api-key": key})
    if data is not None:
        req.add_header("content-type", "application/json")
    with urllib.request.urlopen(req, timeout=10) as res:
        return json.loads(res.read())["data"]


class SqliteDatabase:
    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="promptstore-py-")
        self.url = str(Path(self.dir) / "store.sqlite")

    def drop(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


class PostgresDatabase:
    """A fresh database beside TEST_DATABASE_URL's, made and dropped with ``psql``."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        self.name = f"promptstore_py_{uuid.uuid4().hex[:12]}"
        base = admin_url.rsplit("/", 1)[0]
        self.url = f"{base}/{self.name}"
        self._psql(f"CREATE DATABASE {self.name}")

    def _psql(self, sql: str) -> None:
        subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", self.admin_url, "-c", sql], check=True)

    def drop(self) -> None:
        self._psql(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")


class Proxy:
    """A TCP proxy in front of a server. It counts connections (the client opens one per request), can cut
    every open connection (``cut()``), refuse new ones (``down``), or answer the next connections with a 500
    (``fail_next``)."""

    def __init__(self, upstream: str) -> None:
        host, port = upstream.replace("http://", "").rstrip("/").split(":")
        self.upstream = (host, int(port))
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(128)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.down = False
        #: Connections for paths starting with one of these are closed unanswered (the events stream, say).
        self.refuse: List[str] = []
        self.connections = 0
        self.paths: List[str] = []
        self._fail = 0
        self._open: List[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def fail_next(self, count: int) -> None:
        with self._lock:
            self._fail = count

    def count(self, prefix: str) -> int:
        with self._lock:
            return sum(1 for path in self.paths if path.startswith(prefix))

    def cut(self) -> None:
        with self._lock:
            sockets, self._open = self._open, []
        for sock in sockets:
            _shut(sock)

    def close(self) -> None:
        self._closed = True
        _shut(self.listener)
        self.cut()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.down:
                _shut(client)
                continue
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(65536)
            if not chunk:
                _shut(client)
                return
            head += chunk
        path = head.split(b" ", 2)[1].decode()
        with self._lock:
            self.connections += 1
            self.paths.append(path)
            fail = self._fail > 0
            if fail:
                self._fail -= 1
        if any(path.startswith(prefix) for prefix in self.refuse):
            _shut(client)
            return
        if fail:
            body = b'{"success":false,"error":"proxy: a failure on purpose"}'
            client.sendall(
                b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\nconnection: close\r\n"
                + f"content-length: {len(body)}\r\n\r\n".encode()
                + body
            )
            _shut(client)
            return
        try:
            upstream = socket.create_connection(self.upstream)
        except OSError:
            _shut(client)
            return
        with self._lock:
            self._open += [client, upstream]
        upstream.sendall(head)
        threading.Thread(target=_pipe, args=(client, upstream), daemon=True).start()
        _pipe(upstream, client)


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while True:
            chunk = source.recv(65536)
            if not chunk:
                break
            target.sendall(chunk)
    except OSError:
        pass
    _shut(source)
    _shut(target)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def wait_for(check: Callable[[], bool], timeout: float = 10.0, what: str = "a condition") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)


SECTIONS = [
    {"title": "Role", "content": "You help customers of {{ company }}."},
    {"title": "Output Format", "content": "Answer in {{ language }}."},
]


def sections(tag: str) -> List[Dict[str, str]]:
    return [
        {"title": "Role", "content": f"You help customers of {{{{ company }}}}. ({tag})"},
        {"title": "Output Format", "content": "Answer in {{ language }}."},
    ]
