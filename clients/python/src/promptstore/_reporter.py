"""The sender of outcomes and fleet reports (docs/outcomes.md): a bounded buffer that ``record()`` appends to
under a lock, and one daemon thread that sends batches, waits out failures and beats the heartbeat. Nothing
here ever raises into the application, and ``record()`` never waits for the network."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import deque
from dataclasses import replace
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional, Tuple

from ._http import HttpSettings, request
from ._outcomes import FULL_HASH, SDK, SERVING, Entry, ReadRef, entry_of, read_ref, settings_of, wire_label, wire_outcome
from ._rollout import other_arm_version
from .errors import PromptstoreError
from .types import Prompt

PATH = "/api/v2/outcomes"


class Reporter:
    """Outcomes recorded by one client, and its fleet report. Thread-safe."""

    def __init__(
        self,
        http: HttpSettings,
        outcomes: Optional[Mapping[str, float]],
        report_serving: bool,
        held: Callable[[], List[Prompt]],
        on_error: Callable[[BaseException], None],
    ) -> None:
        settings = settings_of(outcomes)
        self._http = replace(http, retries=0)
        self._batch_size = int(settings["batch_size"])
        self._buffer_size = int(settings["buffer_size"])
        self._flush_interval = settings["flush_interval"]
        self._retry_delay = settings["retry_delay"]
        self._max_retry_delay = settings["max_retry_delay"]
        self._heartbeat = settings["heartbeat"]
        self.close_timeout = settings["close_timeout"]
        self._report_serving = report_serving
        self._held = held
        self._on_error = on_error
        #: This client instance's id in fleet reports: random, the same for its whole life.
        self.instance_id = str(uuid.uuid4())
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._buffer: Deque[Entry] = deque()
        self._recorded = self._sent = self._refused = self._dropped = self._invalid = 0
        self._inflight = 0
        #: Entries at the front that the running drain is to send (all that was pending when it began).
        self._due = 0
        self._failures = 0
        #: When the oldest entry not yet due came (monotonic): the time trigger is ``flush_interval`` after.
        self._pending_since: Optional[float] = None
        self._retry_at: Optional[float] = None
        self._retry_after: Optional[float] = None
        self._count_reached = False
        self._next_beat = time.monotonic() + self._heartbeat
        self._flush_asked = 0
        self._flush_done = 0
        self._closing = False
        self._thread: Optional[threading.Thread] = None
        self._warned: set = set()
        self._warned_lock = threading.Lock()
        #: What reads outside the memory served (mode ``none``, ``cache=False``), per prompt and label.
        self._unheld: Dict[str, ReadRef] = {}
        #: The last read recorded and its wire fields (reads are frozen; one pair, swapped whole).
        self._last: Tuple[Any, Any] = (None, None)
        if report_serving:
            with self._cond:
                self._start()

    # ------------------------------------------------------------------ the application's threads

    def record(self, read: Any, ok: Any, latency_ms: Any, score: Any, tokens: Any, tags: Any) -> None:
        try:
            # The same read (held in memory) is recorded again and again: its wire fields are found once.
            last = self._last
            if last[0] is read:
                ref = last[1]
            else:
                ref = read_ref(read)
                if isinstance(read, Prompt):
                    self._last = (read, ref)
            entry = ref if isinstance(ref, str) else entry_of(ref, ok, latency_ms, score, tokens, tags, time.time())
        except Exception as error:  # noqa: BLE001 - a mapping that raises, say: that outcome is lost, never the application
            entry = f"{type(error).__name__}: {error}"
        if isinstance(entry, str):
            self._refuse(entry)
            return
        with self._lock:  # the condition's lock, taken directly: cheaper than the condition's own methods
            self._recorded += 1
            if self._closing:
                self._dropped += 1
                return
            if len(self._buffer) >= self._buffer_size:
                self._buffer.popleft()
                self._dropped += 1
                if self._due > 0:
                    self._due -= 1
            self._buffer.append(entry)
            if self._pending_since is None:
                self._pending_since = time.monotonic()
                if self._thread is None:
                    self._start()
                self._cond.notify()
            if len(self._buffer) >= self._batch_size and not self._count_reached:
                self._count_reached = True
                self._cond.notify()

    def served(self, read: Prompt) -> None:
        """A read served outside the memory: what the fleet report says this instance serves."""
        ref = read_ref(read)
        if isinstance(ref, str):
            return
        key = f"{ref.prompt}\x00{ref.label or ''}"
        with self._cond:
            if len(self._unheld) < SERVING or key in self._unheld:
                self._unheld[key] = ref

    def on_change(self, given: Optional[Callable[[Any], None]]) -> Callable[[Any], None]:
        """The memory's ``on_change``: tells of a change of what is served, then the application's hook."""

        def changed(change: Any) -> None:
            self.serving_changed()
            if given is not None:
                given(change)

        return changed

    def serving_changed(self) -> None:
        """What this instance serves changed: reported soon (report_serving), not only at the next heartbeat."""
        if not self._report_serving:
            return
        with self._cond:
            self._next_beat = min(self._next_beat, time.monotonic() + min(1.0, self._heartbeat))
            self._cond.notify()

    def stats(self) -> Dict[str, int]:
        with self._cond:
            return {
                "recorded": self._recorded,
                "sent": self._sent,
                "refused": self._refused,
                "dropped": self._dropped,
                "invalid": self._invalid,
                "pending": len(self._buffer) + self._inflight,
            }

    def flush(self, timeout: Optional[float]) -> bool:
        """Sends what is pending now; True once it is sent, False when the server could not take it (it stays
        pending) or ``timeout`` seconds passed."""
        with self._cond:
            if self._thread is None or self._closing:
                return not self._buffer and not self._inflight
            self._flush_asked += 1
            asked = self._flush_asked
            self._cond.notify_all()
            self._cond.wait_for(lambda: self._flush_done >= asked, timeout)
            return not self._buffer and not self._inflight

    def close(self) -> None:
        """Sends what is pending once, waiting at most ``close_timeout``; what could not be sent is dropped."""
        with self._cond:
            if self._closing:
                return
            self._closing = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(self.close_timeout)

    def serving(self) -> List[Dict[str, str]]:
        """What this instance serves, one version per prompt and label (none for reads by version or latest):
        the version of the read held; in a rollout, the candidate (every instance serves both arms, and the
        candidate shows that it has the rollout, and after an abort that it no longer does); then reads outside
        memory."""
        found: Dict[str, Dict[str, str]] = {}
        held = self._held()
        # A rollout's other arm is held by its hash (_rollout.py): it is the label's, not a read by version.
        arms = {f"{read.id}\x00{other}" for read in held for other in [other_arm_version(read)] if other}
        for read in held:
            label = wire_label(read.label)
            version = (read.rollout or {}).get("candidate") or read.version
            if not (label is None or isinstance(label, str)) or not FULL_HASH.fullmatch(version):
                continue
            key = f"{read.id}\x00{label or ''}"
            if label is None:
                if f"{read.id}\x00{read.version}" in arms:
                    continue
                # A read of latest says more than one pinned to a hash.
                if key in found and read.label != "latest":
                    continue
            found[key] = {"prompt": read.id, "version": version} if label is None else {"prompt": read.id, "label": label, "version": version}
        with self._cond:
            unheld = list(self._unheld.items())
        for key, ref in unheld:
            if key not in found:
                found[key] = {"prompt": ref.prompt, "version": ref.version}
                if ref.label is not None:
                    found[key] = {"prompt": ref.prompt, "label": ref.label, "version": ref.version}
        return list(found.values())[:SERVING]

    # ------------------------------------------------------------------ the sender's thread

    def _refuse(self, problem: str) -> None:
        with self._cond:
            self._invalid += 1
        with self._warned_lock:
            if problem in self._warned or len(self._warned) >= 100:
                return
            self._warned.add(problem)
        self._on_error(ValueError(f"record(): {problem}; the outcome was not kept"))

    def _start(self) -> None:
        """Starts the sender's thread (the lock held)."""
        self._thread = threading.Thread(target=self._run, name="promptstore-outcomes", daemon=True)
        self._thread.start()

    def _why(self, now: float) -> Optional[str]:
        """Why the thread should send now (the lock held): ``all``, ``count``, ``heartbeat``, or None."""
        if self._flush_asked > self._flush_done:
            return "all"
        if self._retry_at is not None:
            if now < self._retry_at:
                return None
            self._retry_at = None
            return "all"
        if self._count_reached and len(self._buffer) >= self._batch_size:
            return "count"
        if self._pending_since is not None and now >= self._pending_since + self._flush_interval:
            return "all"
        if self._report_serving and now >= self._next_beat:
            return "heartbeat"
        return None

    def _wait(self, now: float) -> Optional[float]:
        """How long the thread may sleep before something is due (the lock held)."""
        deadlines = []
        if self._retry_at is not None:
            deadlines.append(self._retry_at)
        elif self._pending_since is not None:
            deadlines.append(self._pending_since + self._flush_interval)
        if self._report_serving:
            deadlines.append(self._next_beat)
        return max(0.0, min(deadlines) - now) if deadlines else None

    def _run(self) -> None:
        while True:
            with self._cond:
                why: Optional[str] = None
                while not self._closing:
                    now = time.monotonic()
                    why = self._why(now)
                    if why is not None:
                        break
                    self._cond.wait(self._wait(now))
                closing = self._closing
                asked = self._flush_asked
            if closing or why is None:
                self._final()
                return
            self._drain(why)
            with self._cond:
                self._flush_done = max(self._flush_done, asked)
                self._cond.notify_all()

    def _final(self) -> None:
        self._drain("final")
        with self._cond:
            self._dropped += len(self._buffer)
            self._buffer.clear()
            self._flush_done = self._flush_asked
            self._cond.notify_all()

    def _drain(self, why: str) -> None:
        """Sends, a batch at a time, full batches, and (unless ``count``) all that was pending when it began; a
        heartbeat sends its report even with no outcome. It stops at a failure: the batch goes back to the front
        and (unless ``final``) a retry is due after the backoff or the wait a 429 named."""
        with self._cond:
            self._count_reached = False
            self._retry_at = None
            self._due = 0 if why == "count" else len(self._buffer)
            self._pending_since = None
        reported = False
        while True:
            with self._cond:
                if not (len(self._buffer) >= self._batch_size or self._due > 0 or (why == "heartbeat" and not reported)):
                    break
                batch = [self._buffer.popleft() for _ in range(min(self._batch_size, len(self._buffer)))]
                self._due = max(0, self._due - len(batch))
                self._inflight = len(batch)
            serving = self._serving_safely()
            if not batch and not serving:
                break
            verdict = self._send(batch, serving)
            reported = True
            with self._cond:
                self._inflight = 0
                if verdict == "done":
                    self._failures = 0
                    continue
                room = self._buffer_size - len(self._buffer)
                kept = batch[len(batch) - room :] if room < len(batch) else batch
                self._dropped += len(batch) - len(kept)
                self._buffer.extendleft(reversed(kept))
                self._due += len(kept)
                if verdict == "smaller":
                    continue
                if why != "final":
                    self._retry_at = time.monotonic() + self._next_delay()
                break
        with self._cond:
            now = time.monotonic()
            if self._buffer and self._pending_since is None:
                self._pending_since = now
            if self._report_serving and (reported or why == "heartbeat"):
                self._next_beat = now + self._heartbeat

    def _serving_safely(self) -> List[Dict[str, str]]:
        try:
            return self.serving()
        except Exception as error:  # noqa: BLE001 - a report is not worth a lost batch
            self._on_error(error)
            return []

    def _next_delay(self) -> float:
        """The wait before the next try (the lock held): the 429's, bounded; else backoff, half of it random."""
        self._failures += 1
        asked, self._retry_after = self._retry_after, None
        if asked is not None:
            return min(asked, self._http.max_retry_after)
        step = min(self._max_retry_delay, self._retry_delay * 2 ** (self._failures - 1))
        # Half fixed, half random: clients that lost the same server do not come back in step.
        return step / 2 + random.random() * step / 2

    def _send(self, batch: List[Entry], serving: List[Dict[str, str]]) -> str:
        """One batch, one request: ``done`` (taken, some perhaps refused, or refused whole), ``retry``, or
        ``smaller`` (a 413: the batch size is halved). Never raises."""
        body = {
            "outcomes": [wire_outcome(entry) for entry in batch],
            "instance": {"id": self.instance_id, "sdk": SDK, "serving": serving},
        }
        try:
            data = request(self._http, "POST", PATH, body=body, idempotent=True)
        except Exception as error:  # noqa: BLE001 - every failure is counted here, never raised
            self._on_error(error)
            status = error.status if isinstance(error, PromptstoreError) else 0
            with self._cond:
                if status == 413 and len(batch) > 1:
                    self._batch_size = max(1, len(batch) // 2)
                    return "smaller"
                if status in (0, 408, 429) or status >= 500:
                    retry_after = error.retry_after if isinstance(error, PromptstoreError) else None
                    self._retry_after = retry_after
                    return "retry"
                # Refused whole (400, 401, 403, 404, 413 of one outcome): sent again it would be refused again.
                self._refused += len(batch)
                return "done"
        refused = data.get("refused") if isinstance(data, dict) else None
        count = min(len(refused), len(batch)) if isinstance(refused, list) else 0
        with self._cond:
            self._refused += count
            self._sent += len(batch) - count
        return "done"
