"""The Promptstore client: typed methods for every v2 endpoint, and ``get()``, which serves prompts from memory
and keeps them current through the change-event stream."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Union

from ._datasets import Datasets
from ._evaluations import Evaluations
from ._streams import _Streams
from ._http import HttpSettings, path_of, request
from ._memory import Memory
from ._reporter import Reporter
from ._rollout import Arms, check_assign
from ._stream import ChangeStream
from .errors import ClientClosedError, NetworkError, PromptstoreError
from .types import CreatePromptInput, Json, Prompt, PromptChange, ReadKey, SaveVersionInput, Section
from .variables import VariableValue, fill, variables_of

__all__ = ["Promptstore", "Fallback", "MODES"]

#: ``watch`` (default): in memory, kept current by the change-event stream, opened on the first read; while it
#: is down a TTL applies. ``ttl``: in memory for ``ttl`` seconds, then served stale while read again in the
#: background. ``none``: every ``get()`` asks the service. A version named by its hash is kept for good.
MODES = ("watch", "ttl", "none")

#: A fallback for ``get()``: the prompt text.
Fallback = str

EPOCH = "1970-01-01T00:00:00.000Z"


def _unreachable(error: BaseException) -> bool:
    """Failures where the service could not serve at all: the fallback's cases."""
    if isinstance(error, ClientClosedError):
        return False
    return isinstance(error, NetworkError) or (
        isinstance(error, PromptstoreError) and (error.status >= 500 or error.status == 429)
    )


def _fallback_prompt(prompt_id: str, text: str) -> Prompt:
    return Prompt(
        id=prompt_id,
        name=prompt_id,
        description="",
        prompt=text,
        sections=(Section(id="fallback", title="Fallback", content=text),),
        variables=tuple(variables_of(text)),
        version="fallback",
        label="fallback",
        production_version=None,
        created_at=EPOCH,
        updated_at=EPOCH,
        fallback=True,
    )


class Promptstore:
    """A client of one Promptstore project. One instance per process is the intended use; it is thread-safe.

    Requests time out after ``timeout`` seconds. Reads are retried with exponential backoff and full jitter
    after a 5xx, a timeout or a broken connection; writes only when the connection was refused (nothing was
    sent). A 429 is waited out (``Retry-After``, else ``X-RateLimit-Reset``, at most ``max_retry_after``) and
    sent again. Call :meth:`close` when done (or use it as a context manager): it ends the stream's thread.

    Options: ``mode`` (see :data:`MODES`), ``ttl`` (seconds, 60), ``guard`` (default of ``get``'s, True),
    ``timeout`` (10), ``retries`` (2), ``retry_base_delay`` (0.2), ``retry_max_delay`` (5),
    ``max_retry_after`` (60), ``reconnect_delay`` (1), ``max_reconnect_delay`` (30), ``heartbeat_timeout``
    (45), ``fallback`` (per prompt id, or a function of the id and reference), ``on_change``, ``on_event``,
    ``on_error`` (failures in the background), ``headers``; ``outcomes`` (how :meth:`record`'s outcomes are batched:
    ``batch_size`` 500, ``flush_interval`` 5, ``buffer_size`` 10 000, ``retry_delay`` 1, ``max_retry_delay`` 60,
    ``heartbeat`` 15, ``close_timeout`` 5) and ``report_serving`` (False: see :meth:`record`).

    >>> import os
    >>> from promptstore import Promptstore
    >>> with Promptstore(base_url=os.environ["PROMPTSTORE_URL"], api_key=os.environ["PROMPTSTORE_API_KEY"]) as client:  # doctest: +SKIP
    ...     prompt = client.get("support-bot")
    ...     system = client.fill(prompt, {"company": "Acme", "language": "French"})
    ...     print(prompt.version == client.get("support-bot").version)  # the second from memory
    True
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        mode: str = "watch",
        ttl: float = 60.0,
        guard: bool = True,
        timeout: float = 10.0,
        retries: int = 2,
        retry_base_delay: float = 0.2,
        retry_max_delay: float = 5.0,
        max_retry_after: float = 60.0,
        reconnect_delay: float = 1.0,
        max_reconnect_delay: float = 30.0,
        heartbeat_timeout: float = 45.0,
        fallback: Union[Mapping[str, Fallback], Callable[[str, str], Optional[Fallback]], None] = None,
        on_change: Optional[Callable[[PromptChange], None]] = None,
        on_event: Optional[Callable[[Dict[str, Any]], None]] = None,
        on_error: Optional[Callable[[BaseException], None]] = None,
        headers: Optional[Mapping[str, str]] = None,
        outcomes: Optional[Mapping[str, float]] = None,
        report_serving: bool = False,
    ) -> None:
        if not base_url:
            raise ValueError("Promptstore: base_url is required")
        if not api_key:
            raise ValueError("Promptstore: api_key is required")
        if mode not in MODES:
            raise ValueError(f"Promptstore: mode must be one of {', '.join(MODES)}")
        self.mode = mode
        self._guard = guard
        self._fallback = fallback
        self._on_error_hook = on_error
        self._http = HttpSettings(
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            retries=retries,
            retry_base_delay=retry_base_delay,
            retry_max_delay=retry_max_delay,
            max_retry_after=max_retry_after,
            headers=dict(headers or {}),
        )
        self._closed = threading.Event()
        self._lifecycle = threading.Lock()
        self._streams = _Streams(self._closed)
        #: Datasets of test cases (docs/evaluations.md): ``list``, ``get``, ``create``, ``replace``, ``append``,
        #: ``import_file``, ``export``, ...
        self.datasets = Datasets(self._http, self._closed, self._streams)
        #: Evaluations (docs/evaluations.md): ``run``, ``get``, ``cases``, ``stop``, ``wait``, ...
        self.evaluations = Evaluations(self._http, self._closed, self._streams)
        self._workers: Optional[ThreadPoolExecutor] = None
        self._outcomes = Reporter(self._http, outcomes, report_serving, lambda: self._memory.held(), self._on_error)
        if report_serving:
            # A change of what is served is reported soon, not only at the next heartbeat.
            on_change = self._outcomes.on_change(on_change)
        self._memory = Memory(
            self._read,
            ttl,
            self._background,
            on_change,
            self._on_error,
            lambda: self._stream.first_connection() if self.mode == "watch" else None,
            timeout,
        )
        self._arms = Arms(lambda key: self._memory.get(key, self._open_stream), self._memory.peek, self._background)
        self._stream = ChangeStream(
            self._http,
            self._memory,
            reconnect_delay=reconnect_delay,
            max_reconnect_delay=max_reconnect_delay,
            heartbeat_timeout=heartbeat_timeout,
            on_event=on_event,
            on_error=self._on_error,
            closed=self._closed,
        )

    # ------------------------------------------------------------------ reads kept in memory

    def get(
        self,
        prompt_id: str,
        *,
        version: str = "production",
        guard: Optional[bool] = None,
        fallback: Optional[Fallback] = None,
        cache: bool = True,
        assign: Optional[str] = None,
    ) -> Prompt:
        """Reads a prompt: ``production`` unless ``version`` names ``latest``, a label, a full hash or a unique
        prefix of 7+ characters; with the guard unless ``guard=False``. Served from memory when held (see
        :data:`MODES`); when the service cannot be reached (no answer, a timeout, 5xx or 429) what is held is
        served, even out of date, else the ``fallback`` (``prompt.fallback`` is True), else the error is raised.

        When the label has a gradual rollout, ``assign`` (a user or tenant id, say) picks the arm: the same
        prompt, label and value always get the one the server would give, computed from memory with both arms
        held (docs/releases.md). Without it, each call is assigned at random, as the server does.

        >>> prompt = client.get("support-bot")                        # doctest: +SKIP
        >>> draft = client.get("support-bot", version="latest", guard=False)  # doctest: +SKIP
        >>> pinned = client.get("support-bot", version=prompt.version)  # doctest: +SKIP
        >>> safe = client.get("support-bot", fallback="You are a helpful support agent.")  # doctest: +SKIP
        >>> sticky = client.get("support-bot", assign="user-42")  # doctest: +SKIP
        """
        key = self._key(prompt_id, version, guard)
        check_assign(assign)
        try:
            if self.mode == "none" or not cache:
                read = self._read(key, assign)
                self._outcomes.served(read)
                return read
            return self._arms.serve(key, self._memory.get(key, self._open_stream), assign)
        except PromptstoreError as error:
            if not _unreachable(error):
                raise
            held = self._memory.peek(key)
            if held is not None:
                return self._arms.held(key, held, assign)
            text = fallback if fallback is not None else self._configured_fallback(prompt_id, version)
            if text is None:
                raise
            return _fallback_prompt(prompt_id, text)

    def fill(self, prompt: Union[Prompt, str], values: Mapping[str, VariableValue], *, strict: bool = False) -> str:
        """Fills the ``{{ variables }}`` of a prompt (or a text): see :func:`promptstore.fill`.

        >>> Promptstore("http://127.0.0.1:3000", "ps_...").fill("Hi {{ name }}", {"name": "Ada"})
        'Hi Ada'
        """
        return fill(prompt, values, strict=strict)

    def ready(self, timeout: Optional[float] = None) -> bool:
        """Opens the change stream now (mode ``watch``) instead of on the first read. True once it is live;
        False when the client does not watch, is closed, or the stream is not live within ``timeout`` seconds.
        Raises the typed error when the service refuses the key (:class:`AuthenticationError`, 401).
        """
        if self.mode != "watch" or self._closed.is_set():
            return False
        return self._stream.ready(self._http.timeout if timeout is None else timeout)

    @property
    def status(self) -> Dict[str, Any]:
        """Where things stand: ``mode``, ``stream`` (idle, connecting, live, down, closed), ``last_event_id``,
        ``cached`` (reads held) and ``reading`` (reads in flight)."""
        cached, reading = self._memory.counts()
        return {
            "mode": self.mode,
            "stream": self._stream.state,
            "last_event_id": self._stream.last_event_id,
            "cached": cached,
            "reading": reading,
        }

    def record(
        self,
        read: Prompt,
        ok: bool,
        *,
        latency_ms: Optional[float] = None,
        score: Optional[float] = None,
        tokens: Optional[Mapping[str, int]] = None,
        tags: Optional[Mapping[str, str]] = None,
    ) -> None:
        """Reports how the answer to a read went (docs/outcomes.md): ``read`` is what :meth:`get` returned (its
        prompt, version, label and rollout arm go with the outcome), ``ok`` whether the answer was usable,
        ``latency_ms`` how long it took, ``score`` feedback from 0 to 1, ``tokens`` ``{"input": n, "output": n}``,
        ``tags`` up to 10 string pairs. It puts the outcome in memory and returns at once, from any thread: no
        request, and it never raises. A thread sends batches in the background (``outcomes=`` options). A value
        that is not valid, or a fallback's read, is dropped and counted (``outcome_stats()["invalid"]``), each
        kind of problem told to ``on_error`` once. Every batch carries this instance's fleet report (what it
        serves, per prompt and label); with ``report_serving=True`` a heartbeat sends it even with no outcome.

        >>> prompt = client.get("support-bot", assign="user-42")  # doctest: +SKIP
        >>> client.record(prompt, ok=True, latency_ms=812, tokens={"input": 120, "output": 40})  # doctest: +SKIP
        """
        self._outcomes.record(read, ok, latency_ms, score, tokens, tags)

    def outcome_stats(self) -> Dict[str, int]:
        """Counts of :meth:`record`'s outcomes: ``recorded`` (= ``sent`` + ``refused`` + ``dropped`` + ``pending``),
        ``sent`` (the server took them), ``refused`` (the server would not), ``dropped`` (the oldest, when the
        buffer was full; what ``close()`` could not send), ``invalid`` (never kept), ``pending``."""
        return self._outcomes.stats()

    def flush(self, timeout: Optional[float] = None) -> bool:
        """Sends the outcomes pending now and waits (at most ``timeout`` seconds): True once they are sent, False
        when the server could not take them (they stay pending, and are tried again later)."""
        return self._outcomes.flush(timeout)

    def close(self) -> None:
        """Ends the stream and its thread and the background reads, and waits for them. What is held stays
        readable; reads of anything else raise :class:`ClientClosedError`. Calling it twice does nothing.
        The outcomes pending are sent, once, waiting at most ``outcomes["close_timeout"]`` (5 s); what could not
        be sent is counted as dropped."""
        with self._lifecycle:
            if self._closed.is_set():
                return
            self._closed.set()
            workers = self._workers
        self._stream.close()
        self._streams.close_all()
        if workers is not None:
            workers.shutdown(wait=True)
        self._outcomes.close()

    def __enter__(self) -> "Promptstore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ typed endpoints

    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Json:
        """``GET /api/v2/prompts``: ``{"project": ..., "prompts": [...], "next_cursor": ...}``, oldest first."""
        return self._call("GET", "/api/v2/prompts", query={"limit": limit, "cursor": cursor})

    def list_all(self) -> Iterator[Json]:
        """Every prompt of the project, page by page (100 a request)."""
        cursor: Optional[str] = None
        while True:
            page = self.list(limit=100, cursor=cursor)
            yield from page["prompts"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def get_v1(self, prompt_id: str) -> Json:
        """The frozen v1 read (``GET /api/v1/prompts/{id}``): production with the guard. Not kept in memory."""
        return self._call("GET", path_of("api", "v1", "prompts", prompt_id))

    def versions(self, prompt_id: str) -> Json:
        """``GET /api/v2/prompts/{id}/versions``: the history, newest first, with both pointers."""
        return self._call("GET", path_of("api", "v2", "prompts", prompt_id, "versions"))

    def create(self, prompt: CreatePromptInput) -> Json:
        """``POST /api/v2/prompts``: a prompt and its first version, from ``sections`` or ``markdown``.

        >>> client.create({"name": "Support Bot", "sections": [{"title": "Role", "content": "Hi"}]})  # doctest: +SKIP
        {'id': 'support-bot', 'version': '91defeb4...', 'published': False, ...}
        """
        created = self._call("POST", "/api/v2/prompts", body=prompt, idempotent=False)
        self._memory.invalidate(created["id"])
        return created

    def save(self, prompt_id: str, version: SaveVersionInput) -> Json:
        """``PUT /api/v2/prompts/{id}``: a new version with the full content (identical content makes none)."""
        try:
            return self._call("PUT", path_of("api", "v2", "prompts", prompt_id), body=version, idempotent=False)
        finally:
            self._memory.invalidate(prompt_id)

    def publish(
        self,
        prompt_id: str,
        version: Optional[str] = None,
        *,
        label: Optional[str] = None,
        percent: Optional[int] = None,
    ) -> Json:
        """``POST /api/v2/prompts/{id}/publish``: production (or ``label``) to ``version`` (default ``latest``);
        with ``percent``, a gradual rollout (docs/releases.md). Rolling back is publishing an older hash. This
        client's next ``get()`` serves it."""
        body: Dict[str, Any] = {} if version is None else {"version": version}
        if label is not None:
            body["label"] = label
        if percent is not None:
            body["percent"] = percent
        try:
            return self._call("POST", path_of("api", "v2", "prompts", prompt_id, "publish"), body=body, idempotent=False)
        finally:
            self._memory.invalidate(prompt_id)

    def remove_label(self, prompt_id: str, label: str) -> Json:
        """``DELETE /api/v2/prompts/{id}/labels/{label}``: removes a label (not production) from a prompt."""
        try:
            return self._call("DELETE", path_of("api", "v2", "prompts", prompt_id, "labels", label), idempotent=False)
        finally:
            self._memory.invalidate(prompt_id)

    def delete(self, prompt_id: str) -> Json:
        """``DELETE /api/v2/prompts/{id}``: the prompt and all its versions, for good; what is held is dropped."""
        try:
            return self._call("DELETE", path_of("api", "v2", "prompts", prompt_id), idempotent=False)
        finally:
            self._memory.drop(prompt_id)

    def import_prompt(self, prompt: Json) -> Json:
        """``POST /api/v2/import``: one prompt with versions made elsewhere, hashes kept. Idempotent."""
        try:
            return self._call("POST", "/api/v2/import", body=prompt)
        finally:
            self._memory.invalidate(str(prompt.get("id", "")))

    def audit(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Json:
        """``GET /api/v2/audit``: the project's audit trail, newest first (a ``publish`` key)."""
        return self._call("GET", "/api/v2/audit", query={"limit": limit, "cursor": cursor})

    def webhooks(self) -> List[Json]:
        """``GET /api/v2/webhooks``: the project's webhook endpoints (a ``publish`` key)."""
        return self._call("GET", "/api/v2/webhooks")["webhooks"]

    def create_webhook(self, webhook: Json) -> Json:
        """``POST /api/v2/webhooks``: ``url``, ``events``, ``description``, ``enabled``; the secret, shown once."""
        return self._call("POST", "/api/v2/webhooks", body=webhook, idempotent=False)

    def webhook(self, webhook_id: str) -> Json:
        """``GET /api/v2/webhooks/{id}``."""
        return self._call("GET", path_of("api", "v2", "webhooks", webhook_id))

    def update_webhook(self, webhook_id: str, changes: Json) -> Json:
        """``PATCH /api/v2/webhooks/{id}``: any of ``url``, ``events``, ``description``, ``enabled``."""
        return self._call("PATCH", path_of("api", "v2", "webhooks", webhook_id), body=changes, idempotent=False)

    def delete_webhook(self, webhook_id: str) -> Json:
        """``DELETE /api/v2/webhooks/{id}``."""
        return self._call("DELETE", path_of("api", "v2", "webhooks", webhook_id), idempotent=False)

    def rotate_webhook_secret(self, webhook_id: str) -> Json:
        """``POST /api/v2/webhooks/{id}/rotate-secret``: a new signing secret, shown once."""
        return self._call("POST", path_of("api", "v2", "webhooks", webhook_id, "rotate-secret"), idempotent=False)

    def webhook_deliveries(self, webhook_id: str, *, limit: Optional[int] = None, status: Optional[str] = None) -> List[Json]:
        """``GET /api/v2/webhooks/{id}/deliveries``: recent deliveries, newest first."""
        path = path_of("api", "v2", "webhooks", webhook_id, "deliveries")
        return self._call("GET", path, query={"limit": limit, "status": status})["deliveries"]

    def openapi(self) -> Json:
        """``GET /api/v2/openapi.json``: the OpenAPI 3.1 document of v2."""
        return request(self._http, "GET", "/api/v2/openapi.json", idempotent=True, closed=self._closed, raw=True)

    # ------------------------------------------------------------------ inside

    def _key(self, prompt_id: str, version: str, guard: Optional[bool]) -> ReadKey:
        return ReadKey(prompt_id, version, self._guard if guard is None else guard)

    def _read(self, key: ReadKey, assign: Optional[str] = None) -> Prompt:
        query = {
            "version": None if key.ref == "production" else key.ref,
            "guard": None if key.guard else False,
            "assign": assign,
        }
        data = self._call("GET", path_of("api", "v2", "prompts", key.prompt_id), query=query)
        return Prompt.from_json(data)

    def _call(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        idempotent: bool = True,
    ) -> Any:
        return request(self._http, method, path, query=query, body=body, idempotent=idempotent, closed=self._closed)

    def _configured_fallback(self, prompt_id: str, ref: str) -> Optional[Fallback]:
        given = self._fallback
        if given is None:
            return None
        if callable(given):
            return given(prompt_id, ref)
        return given.get(prompt_id)

    def _open_stream(self) -> None:
        if self.mode == "watch":
            self._stream.open()

    def _background(self, work: Callable[[], None]) -> bool:
        with self._lifecycle:
            if self._closed.is_set():
                return False
            if self._workers is None:
                self._workers = ThreadPoolExecutor(max_workers=4, thread_name_prefix="promptstore-read")
            self._workers.submit(work)
            return True

    def _on_error(self, error: BaseException) -> None:
        if self._closed.is_set() or self._on_error_hook is None:
            return
        try:
            self._on_error_hook(error)
        except Exception:  # noqa: BLE001, S110 - a failing on_error has nowhere left to go
            pass
