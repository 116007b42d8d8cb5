"""The change-event stream (``GET /api/v2/events``, docs/events.md) of mode ``watch``: one background thread per
client, reconnected with backoff (or after the wait the service names), resumed from the last event id, and
applied to the memory it keeps current."""

from __future__ import annotations

import json
import random
import socket
import threading
from typing import TYPE_CHECKING, Any, Callable, Optional, Tuple

from ._http import HttpSettings, answer_error, connect, headers_for
from .errors import NetworkError, PromptstoreError

if TYPE_CHECKING:
    import http.client

    from ._memory import Memory

EVENT_TYPES = frozenset(
    {
        "prompt.created",
        "prompt.version_saved",
        "prompt.published",
        "prompt.deleted",
        # The release path (docs/releases.md): labels other than production, rollouts, release requests.
        "prompt.label_moved",
        "prompt.label_removed",
        "prompt.rollout_changed",
        "release.requested",
        "release.approved",
        "release.rejected",
        # Evaluations (docs/evaluations.md): told to on_event; an evaluation's end changes no prompt.
        "evaluation.completed",
        # Includes (docs/includes.md): told to on_event; a stale pin changes nothing the prompt serves.
        "include.outdated",
    }
)
# Events that change no prompt: told to on_event, nothing held is touched.
TOLD_ONLY = frozenset({"evaluation.completed", "include.outdated"})
LABEL = "GET /api/v2/events"


class ChangeStream:
    def __init__(
        self,
        settings: HttpSettings,
        memory: "Memory",
        *,
        reconnect_delay: float,
        max_reconnect_delay: float,
        heartbeat_timeout: float,
        on_event: Optional[Callable[[Any], None]],
        on_error: Callable[[BaseException], None],
        closed: threading.Event,
    ) -> None:
        self.settings = settings
        self.memory = memory
        self.reconnect_delay = reconnect_delay
        self.max_reconnect_delay = max_reconnect_delay
        self.heartbeat_timeout = heartbeat_timeout
        self.on_event = on_event
        self.on_error = on_error
        self.closed = closed
        #: idle, connecting, live, down or closed.
        self.state = "idle"
        #: The id of the last event received: the next connection's ``Last-Event-ID``.
        self.last_event_id = ""
        self._server_retry: Optional[float] = None
        self._cond = threading.Condition()
        self._live = False
        self._refused: Optional[PromptstoreError] = None
        self._attempted = threading.Event()
        self._conn: Optional["http.client.HTTPConnection"] = None
        self._thread: Optional[threading.Thread] = None

    def open(self) -> None:
        with self._cond:
            if self.closed.is_set() or self.state != "idle":
                return
            self.state = "connecting"
            self._thread = threading.Thread(target=self._run, name="promptstore-events", daemon=True)
            self._thread.start()

    def ready(self, timeout: float) -> bool:
        """True once live; False when closed or not live within ``timeout``; raises the 401/403 that refused it."""
        self.open()
        with self._cond:
            self._cond.wait_for(lambda: self._live or self._refused is not None or self.closed.is_set(), timeout)
            if self._live:
                return True
            if self._refused is not None:
                raise self._refused
            return False

    def first_connection(self) -> Optional[threading.Event]:
        """While the first connection is being made: an event set when it ends, live or not."""
        if self._attempted.is_set() or self.state != "connecting":
            return None
        return self._attempted

    def close(self) -> None:
        """Ends the connection and waits for the thread; called once the client's ``closed`` is set."""
        with self._cond:
            self.state = "closed"
            self._live = False
            self._cond.notify_all()
            conn = self._conn
        self.memory.set_live(False)
        if conn is not None and conn.sock is not None:
            try:
                # Wakes the thread blocked reading the stream: close() alone does not interrupt a recv.
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self._attempted.set()

    # ------------------------------------------------------------------ the thread

    def _run(self) -> None:
        attempt = 0
        while not self.closed.is_set():
            try:
                was_live, wait = self._connect_once()
            except Exception as error:  # noqa: BLE001 - a failure of the stream goes to on_error, never up
                was_live, wait = False, None
                if not self.closed.is_set():
                    self.on_error(error)
            self._dropped()
            self._attempted.set()
            if self.closed.is_set():
                return
            if was_live:
                attempt = 0
            base = self._server_retry if self._server_retry is not None else self.reconnect_delay
            step = min(self.max_reconnect_delay, base * 2**attempt)
            delay = min(wait, self.max_reconnect_delay) if wait is not None else step / 2 + random.random() * step / 2
            attempt += 1
            self.closed.wait(delay)

    def _connect_once(self) -> Tuple[bool, Optional[float]]:
        self.state = "connecting"
        resumed = self.last_event_id != ""
        extra = {"accept": "text/event-stream", "cache-control": "no-cache"}
        if resumed:
            extra["last-event-id"] = self.last_event_id
        conn, prefix = connect(self.settings, self.settings.timeout)
        with self._cond:
            if self.closed.is_set():
                return False, None
            self._conn = conn
        try:
            try:
                # include=read: each live event carries the production read it leads to (docs/events.md).
                conn.request("GET", f"{prefix}/api/v2/events?include=read", headers=headers_for(self.settings, extra))
                res = conn.getresponse()
            except OSError as error:
                if self.closed.is_set():
                    return False, None
                raise NetworkError(f"{LABEL}: {error}", request=LABEL) from error
            if res.status != 200:
                error = answer_error(res.status, res.headers, res.read().decode("utf-8", "replace"), LABEL)
                self.on_error(error)
                if res.status in (401, 403):
                    with self._cond:
                        self._refused = error
                        self._cond.notify_all()
                if error.retry_after is not None and res.status in (429, 503):
                    return False, error.retry_after
                if res.status < 500 and res.status != 429:
                    # A refused key, or a server without the stream: try again seldom.
                    return False, self.max_reconnect_delay
                return False, None
            if conn.sock is not None:
                # The server sends a heartbeat every 15 s: silence this long means a dead connection.
                conn.sock.settimeout(self.heartbeat_timeout)
            return self._read(res, resumed), None
        finally:
            with self._cond:
                self._conn = None
            conn.close()

    def _read(self, res: "http.client.HTTPResponse", resumed: bool) -> bool:
        was_live = False
        event_type, data, has_data = "", [], False
        try:
            while not self.closed.is_set():
                raw = res.readline()
                if not raw:
                    break
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if line == "":
                    if has_data and self._message(event_type or "message", "\n".join(data), resumed):
                        was_live = True
                    event_type, data, has_data = "", [], False
                    continue
                if line.startswith(":"):
                    continue
                name, _, value = line.partition(":")
                if value.startswith(" "):
                    value = value[1:]
                if name == "event":
                    event_type = value
                elif name == "data":
                    data.append(value)
                    has_data = True
                elif name == "id" and "\0" not in value:
                    self.last_event_id = value
                elif name == "retry" and value.isdigit():
                    self._server_retry = int(value) / 1000
        except (OSError, ValueError) as error:
            if not self.closed.is_set():
                failure = NetworkError(f"{LABEL}: the stream broke: {error}", request=LABEL)
                failure.__cause__ = error
                self.on_error(failure)
        return was_live

    def _message(self, event_type: str, data: str, resumed: bool) -> bool:
        """Applies one message; True once the stream is live (ready or reset)."""
        if self.closed.is_set():
            return False
        try:
            payload = json.loads(data)
        except ValueError:
            return self._live
        if not isinstance(payload, dict):
            return self._live
        if event_type == "ready":
            if isinstance(payload.get("last_event_id"), int) and self.last_event_id == "":
                self.last_event_id = str(payload["last_event_id"])
            self.memory.stream_ready(resumed)
            self._became_live()
            return True
        if event_type == "reset":
            if isinstance(payload.get("last_event_id"), int):
                self.last_event_id = str(payload["last_event_id"])
            self.memory.stream_reset()
            self._became_live()
            return True
        if event_type in EVENT_TYPES and isinstance(payload.get("prompt_id"), str):
            if event_type not in TOLD_ONLY:
                self.memory.apply_event(payload)
            if self.on_event is not None:
                try:
                    self.on_event(payload)
                except Exception as error:  # noqa: BLE001 - the application's hook must not end the stream
                    self.on_error(error)
        return self._live

    def _became_live(self) -> None:
        self.memory.set_live(True)
        with self._cond:
            self._live = True
            self._refused = None
            self.state = "live"
            self._cond.notify_all()
        self._attempted.set()

    def _dropped(self) -> None:
        if self.closed.is_set():
            return
        self.memory.stream_dropped()
        with self._cond:
            self._live = False
            self.state = "down"
