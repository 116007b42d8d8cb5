"""The reads ``get()`` holds, per :class:`ReadKey`: served from memory while the change stream keeps them
current, or for ``ttl`` seconds while it cannot; concurrent callers share one read. One lock guards it all;
hooks are called outside it."""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import Future
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ._rollout import same_rollout
from .types import Prompt, PromptChange, ReadKey

HASH_OR_PREFIX = re.compile(r"^[0-9a-f]{7,64}$")

#: Reads a key from the service.
ReadPrompt = Callable[[ReadKey], Prompt]
#: Runs work nobody waits for (False when it cannot: the client is closed).
Background = Callable[[Callable[[], None]], bool]
#: While the stream makes its first connection: an event set when it ends (a read sent before the stream is
#: live would have to be sent again once it is; waiting makes the first get() one read, not two).
Gate = Callable[[], Optional[threading.Event]]


class _Entry:
    __slots__ = ("key", "pinned", "value", "stale", "seq", "validated_at", "gen", "inflight", "retry_at", "failures")

    def __init__(self, key: ReadKey) -> None:
        self.key = key
        #: A hash or prefix names one version, which never changes.
        self.pinned = HASH_OR_PREFIX.match(key.ref) is not None
        self.value: Optional[Prompt] = None
        #: An event (or a write of this client) says ``value`` is no longer what the reference serves.
        self.stale = False
        #: The sequence number of the read that produced ``value``.
        self.seq = 0
        #: When ``value`` was last known current (monotonic seconds).
        self.validated_at = 0.0
        #: Bumped by every invalidation: a read sent before it cannot produce a current value.
        self.gen = 0
        self.inflight: Optional["Future[Prompt]"] = None
        #: No background refresh before this time, after one failed.
        self.retry_at = 0.0
        self.failures = 0


class Memory:
    def __init__(
        self,
        read: ReadPrompt,
        ttl: float,
        background: Background,
        on_change: Optional[Callable[[PromptChange], None]],
        on_error: Callable[[BaseException], None],
        gate: Gate,
        gate_timeout: float,
    ) -> None:
        self._read = read
        self._ttl = ttl
        self._background = background
        self._on_change = on_change
        self._on_error = on_error
        self._gate = gate
        self._gate_timeout = gate_timeout
        self._lock = threading.Lock()
        self._entries: Dict[str, Dict[ReadKey, _Entry]] = {}
        self._seq = 0
        #: Reads numbered above this are covered by the stream: every later change reaches us as an event.
        self._cover_from = float("inf")
        self._live = False

    def get(self, key: ReadKey, watch: Callable[[], None]) -> Prompt:
        """What ``get()`` serves: the value held when current (refreshed in the background once the TTL has run
        out while the stream is not live), else the read that brings it."""
        start: Optional["Future[Prompt]"] = None
        with self._lock:
            entry = self._entries.get(key.prompt_id, {}).get(key)
            if entry is not None and entry.value is not None and not entry.stale:
                value = entry.value
                if entry.pinned or (self._live and entry.seq > self._cover_from):
                    return value
                expired = time.monotonic() - entry.validated_at >= self._ttl
                refresh = expired and time.monotonic() >= entry.retry_at and entry.inflight is None
            else:
                refresh = False
                value = None
                if entry is None:
                    entry = _Entry(key)
                    self._entries.setdefault(key.prompt_id, {})[key] = entry
                future, start = self._claim(entry)
        watch()
        if value is not None:
            if refresh:
                self._refresh_in_background(entry)
            return value
        if start is not None:
            self._run(entry, start)
        return future.result()

    def peek(self, key: ReadKey) -> Optional[Prompt]:
        """The value held, current or not: served before a fallback when the service cannot answer."""
        with self._lock:
            entry = self._entries.get(key.prompt_id, {}).get(key)
            return entry.value if entry is not None else None

    def held(self) -> List[Prompt]:
        """Every read held (what ``get()`` serves from memory, current or being read again): the fleet report's source."""
        with self._lock:
            return [e.value for refs in self._entries.values() for e in refs.values() if e.value is not None]

    def counts(self) -> Tuple[int, int]:
        """Reads held, and reads in flight."""
        with self._lock:
            entries = [e for refs in self._entries.values() for e in refs.values()]
            return sum(e.value is not None for e in entries), sum(e.inflight is not None for e in entries)

    def invalidate(self, prompt_id: str) -> None:
        """After a write of this client: the moving references of the prompt are read again."""
        with self._lock:
            entries = [e for e in self._entries.get(prompt_id, {}).values() if not e.pinned]
            todo = [e for e in entries if self._invalidate(e)]
        for entry in todo:
            self._refresh_in_background(entry)

    def drop(self, prompt_id: str) -> None:
        """The prompt is gone: every reference held, pinned ones too, is forgotten; the next get() asks."""
        with self._lock:
            for entry in list(self._entries.get(prompt_id, {}).values()):
                entry.gen += 1
                entry.value = None
                entry.stale = False
                self._forget(entry)

    # ------------------------------------------------------------------ what the stream tells

    def stream_ready(self, resumed: bool) -> None:
        """Unless it resumed, every change from now on reaches us; what was read before is read once more."""
        with self._lock:
            if resumed and self._cover_from != float("inf"):
                return
            self._cover_from = self._seq
            todo = [
                e
                for refs in self._entries.values()
                for e in refs.values()
                if not e.pinned and e.value is not None and e.inflight is None
            ]
        for entry in todo:
            self._refresh_in_background(entry)

    def stream_reset(self) -> None:
        """The stream could not replay what was missed: every moving reference is read again."""
        with self._lock:
            self._cover_from = self._seq
            todo = [e for refs in self._entries.values() for e in refs.values() if not e.pinned]
            todo = [e for e in todo if self._invalidate(e)]
        for entry in todo:
            self._refresh_in_background(entry)

    def set_live(self, live: bool) -> None:
        with self._lock:
            self._live = live

    def stream_dropped(self) -> None:
        with self._lock:
            if self._live:
                # What the stream kept current was current until now: from now on the TTL counts.
                now = time.monotonic()
                for refs in self._entries.values():
                    for entry in refs.values():
                        if entry.seq > self._cover_from:
                            entry.validated_at = now
            self._live = False

    def apply_event(self, event: Mapping[str, Any]) -> None:
        prompt_id = event["prompt_id"]
        if event.get("type") == "prompt.deleted":
            self.drop(prompt_id)
            return
        read = event.get("read")
        changes: List[PromptChange] = []
        todo: List[_Entry] = []
        with self._lock:
            for entry in self._entries.get(prompt_id, {}).values():
                if entry.pinned:
                    continue
                # A label's move carries the label's new read: served at once, as a publish's is for production.
                if (
                    event.get("type") == "prompt.label_moved"
                    and isinstance(read, dict)
                    and entry.key.ref == event.get("label")
                    and entry.key.guard
                    and read.get("version") == event.get("version")
                    and read.get("rollout") is None
                ):
                    entry.gen += 1
                    self._seq += 1
                    change = self._store(entry, Prompt.from_json(read), self._seq, time.monotonic(), todo)
                    if change is not None:
                        changes.append(change)
                    continue
                # A label's read (or a read in a rollout) cannot be checked against the event's two pointers:
                # it is read again, so a moved or removed label is never served from memory afterwards.
                if (
                    entry.key.ref not in ("production", "latest")
                    or event.get("type") == "prompt.rollout_changed"
                    or (entry.value is not None and entry.value.rollout is not None)
                ):
                    if self._invalidate(entry):
                        todo.append(entry)
                    continue
                production = event.get("production_version")
                target = event.get("latest_version") if entry.key.ref == "latest" else production or event.get("latest_version")
                if (
                    isinstance(read, dict)
                    and entry.key.ref == "production"
                    and entry.key.guard
                    and read.get("version") == target
                    and read.get("production_version") == production
                ):
                    # The event carries what production now serves: served at once, without a request. A read
                    # in flight may predate the change: it is sent again when it lands.
                    entry.gen += 1
                    self._seq += 1
                    change = self._store(entry, Prompt.from_json(read), self._seq, time.monotonic(), todo)
                    if change is not None:
                        changes.append(change)
                    continue
                value = entry.value
                current = (
                    value is not None
                    and not entry.stale
                    and entry.inflight is None
                    and value.version == target
                    and value.production_version == production
                )
                if not current and self._invalidate(entry):
                    todo.append(entry)
        for entry in todo:
            self._refresh_in_background(entry)
        self._notify(changes)

    # ------------------------------------------------------------------ entries

    def _claim(self, entry: _Entry) -> Tuple["Future[Prompt]", Optional["Future[Prompt]"]]:
        """The read in flight for the entry, shared; or a new one, which the caller must run (second item)."""
        if entry.inflight is not None:
            return entry.inflight, None
        future: "Future[Prompt]" = Future()
        entry.inflight = future
        return future, future

    def _refresh_in_background(self, entry: _Entry) -> None:
        with self._lock:
            if entry.inflight is not None:
                return
            _, start = self._claim(entry)
        assert start is not None
        if not self._background(lambda: self._run(entry, start, background=True)):
            self._finish(entry, start)
            start.cancel()

    def _run(self, entry: _Entry, future: "Future[Prompt]", background: bool = False) -> None:
        """Reads the entry until an answer lands that no invalidation overtook, and settles ``future``."""
        gate = None if entry.pinned else self._gate()
        if gate is not None:
            gate.wait(self._gate_timeout)
        while True:
            with self._lock:
                gen = entry.gen
                # Numbered when sent, not when asked for: the stream covers a read sent after it went live.
                self._seq += 1
                seq = self._seq
            started = time.monotonic()
            try:
                value = self._read(entry.key)
            except BaseException as error:  # noqa: BLE001 - settles the future with it; raised to every waiter
                with self._lock:
                    if entry.gen != gen:
                        continue
                    entry.failures += 1
                    entry.retry_at = time.monotonic() + min(self._ttl, 2 ** min(entry.failures, 10))
                    self._finish(entry, future)
                future.set_exception(error)
                if background:
                    self._on_error(error)
                return
            todo: List[_Entry] = []
            with self._lock:
                if entry.gen != gen:
                    continue
                change = self._store(entry, value, seq, started, todo)
                self._finish(entry, future)
                served = entry.value
            future.set_result(served if served is not None else value)
            for stale in todo:
                self._refresh_in_background(stale)
            self._notify([change] if change is not None else [])
            return

    def _finish(self, entry: _Entry, future: "Future[Prompt]") -> None:
        if entry.inflight is future:
            entry.inflight = None
        if entry.value is None:
            self._forget(entry)

    def _store(self, entry: _Entry, value: Prompt, seq: int, started: float, todo: List[_Entry]) -> Optional[PromptChange]:
        previous = entry.value
        entry.value = value
        entry.stale = False
        entry.seq = seq
        entry.validated_at = started
        entry.retry_at = 0.0
        entry.failures = 0
        # Read before the stream was first live: a change between this read and the stream's start would be missed.
        if self._live and seq <= self._cover_from and not entry.pinned:
            todo.append(entry)
        # A new read of a label in a rollout may bring the other arm (chosen at random): the same versions are served.
        if previous is None or (previous.version != value.version and not same_rollout(previous, value)):
            key = entry.key
            return PromptChange(key.prompt_id, key.ref, key.guard, value.version, previous.version if previous else None)
        return None

    def _forget(self, entry: _Entry) -> None:
        if entry.value is not None or entry.inflight is not None:
            return
        refs = self._entries.get(entry.key.prompt_id)
        if refs is not None:
            refs.pop(entry.key, None)
            if not refs:
                del self._entries[entry.key.prompt_id]

    def _invalidate(self, entry: _Entry) -> bool:
        """Marks an entry out of date; True when it should be read again now (it holds a value)."""
        entry.gen += 1
        if entry.value is not None:
            entry.stale = True
            return True
        return False

    def _notify(self, changes: List[PromptChange]) -> None:
        if self._on_change is None:
            return
        for change in changes:
            try:
                self._on_change(change)
            except Exception as error:  # noqa: BLE001 - the application's hook must not break a read
                self._on_error(error)
