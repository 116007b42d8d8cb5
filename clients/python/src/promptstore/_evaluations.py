"""Evaluations (docs/evaluations.md): ``client.evaluations``, and ``evaluate()``'s typed result."""

from __future__ import annotations

from dataclasses import dataclass

import http.client
import json
import socket
import threading
import time
from typing import Any, Callable, Iterator, List, Mapping, Optional, Sequence, Tuple

from ._http import HttpSettings, backoff, path_of, request
from .errors import ClientClosedError, NetworkError, PromptstoreError, ServerError, TimeoutError
from .types import Json
from ._streams import IDLE, _drop_none, _Streams, _transient

__all__ = ["Evaluations", "EvaluationResult", "Threshold"]


class Evaluations:
    """Evaluations (docs/evaluations.md): ``client.evaluations``. Starting one needs a key with scope
    ``write`` (it spends model calls); reading needs ``read``.

    >>> started = client.evaluations.run(  # doctest: +SKIP
    ...     "support-bot",
    ...     versions=["production", "latest"],
    ...     dataset="ds_0123456789abcdef01234567",
    ...     checks=[{"type": "expected", "trim": True}, {"type": "contains", "value": "refund"}],
    ...     connection="con_0123456789abcdef01234567",
    ... )
    >>> done = client.evaluations.wait(started["id"], on_progress=lambda p: print(p["progress"]))  # doctest: +SKIP
    >>> [(v["ref"], v["pass_rate"]) for v in done["versions"]], done["compare"]  # doctest: +SKIP
    ([('production', 0.75), ('latest', 0.5)], {'regressions': 1, 'improvements': 0})
    """

    def __init__(self, settings: HttpSettings, closed: threading.Event, streams: _Streams) -> None:
        self._http = settings
        self._closed = closed
        self._streams = streams

    def run(
        self,
        prompt_id: str,
        *,
        versions: Sequence[Any],
        dataset: str,
        checks: Sequence[Mapping[str, Any]],
        connection: str,
        model: Optional[Mapping[str, Any]] = None,
        guard: Optional[bool] = None,
        concurrency: Optional[int] = None,
    ) -> Json:
        """``POST /api/v2/prompts/{id}/evaluations``: one to four ``versions`` (a hash, a 7+ prefix,
        ``latest``, a label, or ``{"draft": {...}}``) over a ``dataset`` (its id, or ``<id>@<version>``),
        judged by ``checks``, the model of ``connection`` answering (``model`` overrides the versions'
        settings). Answers at once: ``status`` ``running`` (follow it with :meth:`wait`), or, when every case
        was already judged for this content, the whole evaluation, ``done`` and ``reused`` (nothing was sent to
        the provider). Everything that can be refused is refused first, the message naming the field."""
        body = _drop_none(
            {
                "versions": list(versions),
                "dataset": dataset,
                "checks": list(checks),
                "connection": connection,
                "model": None if model is None else dict(model),
                "guard": guard,
                "concurrency": concurrency,
            }
        )
        path = path_of("api", "v2", "prompts", prompt_id, "evaluations")
        return request(self._http, "POST", path, body=body, idempotent=False, closed=self._closed)

    def list(self, prompt_id: str, *, limit: Optional[int] = None) -> List[Json]:
        """``GET /api/v2/prompts/{id}/evaluations``: the prompt's evaluations, newest first."""
        path = path_of("api", "v2", "prompts", prompt_id, "evaluations")
        return self._call(path, {"limit": limit})["evaluations"]

    def get(
        self,
        evaluation_id: str,
        *,
        only: Optional[str] = None,
        after: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> Json:
        """``GET /api/v2/evaluations/{id}``: status, progress, per version the counts, ``pass_rate``,
        ``scores``, tokens and latency, ``compare``, and ``cases`` (``{"items", "next"}``): ``only`` keeps one
        class (``regression``, ``improvement``, ``changed``, ``errored``, ``failed``, ``passed``, ``pending``),
        ``after`` and ``limit`` (1-200, default 50) page."""
        return self._call(self._path(evaluation_id), {"only": only, "after": after, "limit": limit})

    def cases(
        self,
        evaluation_id: str,
        *,
        only: Optional[str] = None,
        after: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> Json:
        """``GET /api/v2/evaluations/{id}/cases``: a page of cases, each with every version's answer, verdicts
        and any error; ``next`` is the next page's ``after`` (None on the last)."""
        return self._call(self._path(evaluation_id, "cases"), {"only": only, "after": after, "limit": limit})

    def cases_all(self, evaluation_id: str, *, only: Optional[str] = None, limit: int = 200) -> Iterator[Json]:
        """Every case of an evaluation (of one class with ``only``), page by page."""
        after: Optional[int] = None
        while True:
            page = self.cases(evaluation_id, only=only, after=after, limit=limit)
            yield from page["items"]
            after = page.get("next")
            if after is None:
                return

    def stop(self, evaluation_id: str) -> Json:
        """``POST /api/v2/evaluations/{id}/stop``: stops it wherever it runs; what was judged stays kept, the
        rest is ``pending``, the status ``stopped`` (``done`` if every case had been judged)."""
        return request(
            self._http, "POST", self._path(evaluation_id, "stop"), idempotent=False, closed=self._closed
        )

    def wait(
        self,
        evaluation_id: str,
        *,
        timeout: Optional[float] = None,
        interval: float = 1.0,
        on_progress: Optional[Callable[[Json], None]] = None,
    ) -> Json:
        """The evaluation once it has ended (``done``, ``failed`` or ``stopped``), following its progress
        stream (``GET /api/v2/evaluations/{id}/events``: one request however long it runs). ``on_progress`` is
        told every ``{"status", "progress": {"done", "total"}}``. A stream that breaks, or a 5xx or 429 answer,
        is followed again (after ``interval`` seconds, then with backoff; ``retries`` + 1 failures in a row
        raise); a refusal (401, 404) raises at once. After ``timeout`` seconds, raises a
        :class:`PromptstoreError` with ``code`` ``timeout`` (the evaluation runs on); :meth:`Promptstore.close`
        ends it with :class:`ClientClosedError`."""
        label = f"GET {self._path(evaluation_id, 'events')}"
        deadline = None if timeout is None else time.monotonic() + timeout

        def timed_out() -> PromptstoreError:
            return PromptstoreError(
                f"evaluation {evaluation_id}: not ended within {timeout:g} s", code="timeout", request=label
            )

        failures = 0
        while True:
            if self._closed.is_set():
                raise ClientClosedError("the client was closed", code="closed", request=label)
            if deadline is not None and time.monotonic() >= deadline:
                raise timed_out()
            wait: Optional[float] = None
            try:
                ended = self._follow_once(evaluation_id, deadline, on_progress)
                if ended is not None:
                    return ended
                failures = 0
            except PromptstoreError as error:
                if self._closed.is_set():
                    raise ClientClosedError("the client was closed", code="closed", request=label) from None
                if deadline is not None and time.monotonic() >= deadline:
                    raise timed_out() from None
                if not _transient(error) or failures >= self._http.retries:
                    raise
                failures += 1
                if error.retry_after is not None:
                    wait = min(error.retry_after, self._http.max_retry_after)
            delay = wait if wait is not None else interval + backoff(failures, self._http.retry_base_delay, self._http.retry_max_delay)
            if deadline is not None:
                delay = min(delay, max(0.0, deadline - time.monotonic()))
            if self._closed.wait(delay):
                raise ClientClosedError("the client was closed", code="closed", request=label)

    def _follow_once(
        self, evaluation_id: str, deadline: Optional[float], on_progress: Optional[Callable[[Json], None]]
    ) -> Optional[Json]:
        """One connection of the progress stream: the evaluation once ``done`` came, None when it ended first."""
        path = self._path(evaluation_id, "events")
        label = f"GET {path}"
        conn, res = self._streams.open(self._http, path, {}, "text/event-stream")
        try:
            event_type, data = "", []  # type: Tuple[str, List[str]]
            while True:
                idle = IDLE if deadline is None else max(0.001, min(IDLE, deadline - time.monotonic()))
                if conn.sock is not None:
                    conn.sock.settimeout(idle)
                try:
                    raw = res.readline()
                except socket.timeout:
                    raise TimeoutError(idle, label) from None
                except (OSError, http.client.HTTPException, ValueError) as error:
                    raise NetworkError(f"{label}: the stream broke: {error}", request=label) from error
                if not raw:
                    return None
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if line == "":
                    if data:
                        ended = self._message(event_type or "message", "\n".join(data), res, label, on_progress)
                        if ended is not None:
                            return ended
                    event_type, data = "", []
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
        finally:
            self._streams.done(conn, res)

    @staticmethod
    def _message(
        event_type: str,
        data: str,
        res: http.client.HTTPResponse,
        label: str,
        on_progress: Optional[Callable[[Json], None]],
    ) -> Optional[Json]:
        try:
            payload = json.loads(data)
        except ValueError:
            return None
        if event_type == "done":
            return payload
        if event_type == "progress" and on_progress is not None:
            on_progress(payload)
        elif event_type == "error":
            # The server could not go on (its log has the request id): a failure worth trying again.
            message = payload.get("message") if isinstance(payload, dict) else None
            code = payload.get("code") if isinstance(payload, dict) else None
            raise ServerError(
                message if isinstance(message, str) else f"{label}: the stream failed",
                status=500,
                code=code if isinstance(code, str) else "internal",
                request_id=res.headers.get("x-request-id"),
                request=label,
            )
        return None

    def evaluate(
        self,
        prompt_id: str,
        *,
        content: Optional[Mapping[str, Any]] = None,
        version: Optional[str] = None,
        label: Optional[str] = None,
        against: Optional[str] = "production",
        dataset: Optional[str] = None,
        checks: Optional[Sequence[Mapping[str, Any]]] = None,
        connection: Optional[str] = None,
        model: Optional[Mapping[str, Any]] = None,
        min_pass_rate: float = 1.0,
        timeout: Optional[float] = None,
    ) -> EvaluationResult:
        """Evaluates a version (``version``: a reference) or content not yet saved (``content``: what a save takes,
        ``{"sections": [...]}`` or ``{"markdown": ...}``, evaluated under the hash it will save as), waits for the
        end, and says whether it passed. With ``label``, the label's required evaluation runs (through its own
        route, so that its gate counts it: a version that passes may then move the label) and its thresholds
        decide; otherwise ``dataset``, ``checks`` and ``connection`` run beside ``against`` (``None``: alone), and
        the bar is ``min_pass_rate`` of cases passing every check (every case by default).

        >>> result = client.evaluations.evaluate("support", content={"markdown": "# Role\\nBe brief."}, label="production")  # doctest: +SKIP
        >>> result.passed, [(t.name, t.actual, t.ok) for t in result.thresholds]  # doctest: +SKIP
        (True, [('pass rate', '1', True)])
        """
        if (content is None) == (version is None):
            raise ValueError("evaluate: give content or version, one of them")
        candidate: Any = {"draft": dict(content)} if content is not None else version
        requirement: Optional[Json] = None
        if label is not None:
            settings = request(
                self._http, "GET", path_of("api", "v2", "labels", label), idempotent=True, closed=self._closed
            )
            requirement = settings.get("required_evaluation")
            if requirement is None:
                raise ValueError(f"evaluate: label {label} has no required evaluation")
            body = {"draft": dict(content)} if content is not None else {"version": version}
            path = path_of("api", "v2", "prompts", prompt_id, "labels", label, "evaluations")
            started = request(self._http, "POST", path, body=body, idempotent=False, closed=self._closed)
        else:
            if dataset is None or checks is None or connection is None:
                raise ValueError("evaluate: without a label, give dataset, checks and connection")
            started = self.run(
                prompt_id,
                versions=[candidate] if against is None else [against, candidate],
                dataset=dataset,
                checks=checks,
                connection=connection,
                model=model,
            )
        ended = started if started["status"] != "running" else self.wait(started["id"], timeout=timeout)
        if ended["status"] != "done":
            raise PromptstoreError(
                f"evaluation {ended['id']} ended {ended['status']}: {ended.get('reason')}",
                code=f"evaluation_{ended['status']}",
                request=f"evaluation {ended['id']}",
            )
        found = thresholds_of(ended, requirement, min_pass_rate)
        return EvaluationResult(all(t.ok for t in found), tuple(found), ended, label)

    def _path(self, evaluation_id: str, *rest: str) -> str:
        return path_of("api", "v2", "evaluations", evaluation_id, *rest)

    def _call(self, path: str, query: Mapping[str, Any]) -> Any:
        return request(self._http, "GET", path, query=query, idempotent=True, closed=self._closed)


@dataclass(frozen=True)
class Threshold:
    """One bar an evaluated version had to clear: its name, the bar, what it reached, whether it cleared it."""

    name: str
    required: str
    actual: str
    ok: bool


@dataclass(frozen=True)
class EvaluationResult:
    """What :meth:`Evaluations.evaluate` found: ``passed`` when every threshold holds (what a label's gate, or
    ``promptstore eval``, asks). ``evaluation`` is the whole evaluation as the server answered it; the candidate
    is its last version (``against`` comes first when compared)."""

    passed: bool
    thresholds: Tuple[Threshold, ...]
    evaluation: Json
    #: The label whose required evaluation this was, or None.
    required_by: Optional[str]

    @property
    def candidate(self) -> Json:
        return self.evaluation["versions"][-1]

    @property
    def regressions(self) -> int:
        compare = self.evaluation.get("compare")
        return 0 if compare is None else int(compare["regressions"])


def _rate(value: Optional[float]) -> str:
    return "none" if value is None else f"{value:g}"


def thresholds_of(evaluation: Json, requirement: Optional[Mapping[str, Any]], min_pass_rate: float) -> List[Threshold]:
    """The thresholds of a finished evaluation's candidate (its last version): a label's requirement's (pass
    rate, per check, no regression), or ``min_pass_rate`` alone. Counted as the gate counts them: errored and
    pending cases do not pass."""
    candidate = evaluation["versions"][-1]
    judged = candidate["passed"] + candidate["failed"] + candidate["errored"] + candidate["pending"]
    rate = 0.0 if judged == 0 else candidate["passed"] / judged
    least = float(requirement["min_pass_rate"]) if requirement else min_pass_rate
    out = [Threshold("pass rate", f">= {least:g}", f"{round(rate, 4):g}", rate >= least and candidate["pending"] == 0)]
    for name, bar in ((requirement or {}).get("min_check_pass_rates") or {}).items():
        got = candidate.get("check_pass_rates", {}).get(name)
        out.append(Threshold(f'check "{name}"', f">= {float(bar):g}", _rate(got), got is not None and got >= bar))
    if requirement and requirement.get("no_regression") and len(evaluation["versions"]) > 1:
        regressions = int((evaluation.get("compare") or {}).get("regressions", 0))
        out.append(Threshold("no regression", "0", str(regressions), regressions == 0))
    return out
