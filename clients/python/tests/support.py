"""What the tests run against: the real ``promptstore`` binary on a free port and a fresh database, and a TCP
proxy of our own for what the server cannot be made to do on demand (count connections, cut streams, be
unreachable, answer 500 once). Never mocks."""

from __future__ import annotations

import http.client
import json
import os
import select
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

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
        # Passwords (the bootstrap owner's) at the test cost, as in the Node.js suites (test/support/binary.ts).
        full_env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "LOG_LEVEL": "warn",
            "PROMPTSTORE_PASSWORD_HASH_COST": "test",
            **secret_key_env(database_url),
            **(env or {}),
        }
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


OUTCOMES = "/api/v2/outcomes"


class OutcomeReceiver:
    """An HTTP server in front of the real server that answers ``POST /api/v2/outcomes`` itself, keeping each
    batch (an outcome tagged ``refuse`` is refused, as the server refuses one it cannot place), and forwards
    every other request (not the events stream: clients under test use mode ``ttl`` or ``none``). For what the
    server cannot be made to do on demand: be away (``down``: connections closed unanswered), answer a failure
    (``fail_next``, with headers such as ``Retry-After``), or be slow (``delay_next``)."""

    def __init__(self, upstream: str) -> None:
        host, port = upstream.replace("http://", "").rstrip("/").split(":")
        self.upstream = (host, int(port))
        #: The batches taken, as sent.
        self.batches: List[Dict[str, Any]] = []
        #: When each outcomes request arrived (monotonic seconds), answered or not.
        self.arrivals: List[float] = []
        self.down = False
        self._failures: List[Tuple[int, Dict[str, str]]] = []
        self._delays: List[float] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                receiver._handle(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that gave up on a slow answer

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def fail_next(self, count: int, status: int, headers: Optional[Dict[str, str]] = None) -> None:
        with self._lock:
            self._failures += [(status, headers or {})] * count

    def delay_next(self, count: int, seconds: float) -> None:
        with self._lock:
            self._delays += [seconds] * count

    def count(self) -> int:
        """Outcomes requests that arrived."""
        with self._lock:
            return len(self.arrivals)

    def latencies(self) -> List[List[Any]]:
        """Each batch's ``latency_ms`` values: how the tests name outcomes."""
        with self._lock:
            return [[o.get("latency_ms") for o in b["outcomes"]] for b in self.batches]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        if not handler.path.startswith(OUTCOMES):
            self._forward(handler, body)
            return
        with self._lock:
            self.arrivals.append(time.monotonic())
            failure = self._failures.pop(0) if self._failures else None
            delay = self._delays.pop(0) if self._delays else 0.0
        if self.down:
            handler.close_connection = True
            _shut(handler.connection)
            return
        if failure is not None:
            status, headers = failure
            self._answer(handler, status, {"success": False, "error": f"a failure on purpose: {status}"}, headers)
            return
        if delay:
            time.sleep(delay)
            if _gone(handler.connection):
                return
        batch = json.loads(body)
        refused = [
            {"index": i, "field": f"outcomes[{i}].version", "message": "refused"}
            for i, o in enumerate(batch["outcomes"])
            if (o.get("tags") or {}).get("refuse")
        ]
        with self._lock:
            self.batches.append(batch)
        accepted = len(batch["outcomes"]) - len(refused)
        self._answer(handler, 200, {"success": True, "data": {"accepted": accepted, "refused": refused}})

    def _answer(self, handler: BaseHTTPRequestHandler, status: int, body: Any, headers: Optional[Dict[str, str]] = None) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        for name, value in {"content-type": "application/json", **(headers or {})}.items():
            handler.send_header(name, value)
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _forward(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        conn = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            headers = {k: v for k, v in handler.headers.items() if k.lower() not in ("host", "connection")}
            conn.request(handler.command, handler.path, body=body or None, headers=headers)
            res = conn.getresponse()
            data = res.read()
        finally:
            conn.close()
        handler.send_response(res.status)
        for name, value in res.getheaders():
            if name.lower() not in ("connection", "transfer-encoding", "content-length", "keep-alive"):
                handler.send_header(name, value)
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)


def _gone(sock: socket.socket) -> bool:
    """Whether the peer closed the connection (a client that gave up waiting)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


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


class StandIn:
    """The OpenAI stand-in of the server's tests, started through ``node`` (tests/stand_in.mjs): models ``caps``
    and ``slow`` answer the system prompt they were sent, in capitals."""

    def __init__(self) -> None:
        script = Path(__file__).resolve().parent / "stand_in.mjs"
        self.process = subprocess.Popen(
            ["node", str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the stand-in did not start: {self.process.stderr.read() if self.process.stderr else ''}")
        started = json.loads(line)
        self.url: str = started["url"]
        self.base_url: str = started["base_url"]
        self.api_key: str = started["api_key"]
        self._lock = threading.Lock()

    def requests(self) -> int:
        """How many requests it was sent so far."""
        assert self.process.stdin is not None and self.process.stdout is not None
        with self._lock:
            self.process.stdin.write("requests\n")
            self.process.stdin.flush()
            return int(json.loads(self.process.stdout.readline())["requests"])

    def stop(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


def cli(database_url: str, *args: str, env: Optional[Dict[str, str]] = None) -> Any:
    """One ``promptstore`` command with ``--json`` on a database, as an operator's shell runs it; its output."""
    full_env = {**os.environ, "DATABASE_URL": database_url, **secret_key_env(database_url), **(env or {})}
    done = subprocess.run(
        ["node", str(BIN), *args, "--json"], env=full_env, capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"promptstore {' '.join(args)} failed: {done.stdout}{done.stderr}")
    return json.loads(done.stdout)
