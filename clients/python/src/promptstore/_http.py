"""One request with the client's policy: a timeout per attempt, retries with backoff and full jitter, and the
wait a 429 names. Every request opens its own connection, so that any thread may send one at any time."""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple
from urllib.parse import quote, urlencode, urlsplit

from .errors import ClientClosedError, NetworkError, PromptstoreError, TimeoutError, error_for_status

USER_AGENT = "promptstore-python"


@dataclass
class HttpSettings:
    base_url: str
    api_key: str
    timeout: float = 10.0
    retries: int = 2
    retry_base_delay: float = 0.2
    retry_max_delay: float = 5.0
    max_retry_after: float = 60.0
    headers: Dict[str, str] = field(default_factory=dict)
    ssl_context: Optional[ssl.SSLContext] = None


def path_of(*parts: str) -> str:
    """A path with every part percent-encoded: ``path_of("api", "v2", "prompts", id)``."""
    return "/" + "/".join(quote(part, safe="") for part in parts)


def backoff(attempt: int, base: float, maximum: float) -> float:
    """Full jitter: a random wait up to the exponential step, so that clients do not retry in step."""
    return random.random() * min(maximum, base * 2**attempt)


def retry_after_seconds(headers: "http.client.HTTPMessage") -> Optional[float]:
    """Seconds to wait from ``Retry-After`` (seconds or an HTTP date), else ``X-RateLimit-Reset`` (seconds)."""
    value = headers.get("retry-after")
    if value is not None:
        try:
            seconds = float(value)
            if seconds >= 0:
                return seconds
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(value)
                return max(0.0, when.timestamp() - time.time())
            except (TypeError, ValueError):
                pass
    reset = headers.get("x-ratelimit-reset")
    try:
        seconds = float(reset) if reset is not None else -1.0
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def connect(settings: HttpSettings, timeout: float) -> Tuple[http.client.HTTPConnection, str]:
    """A connection to the service, and the path prefix of its base URL."""
    url = urlsplit(settings.base_url)
    if url.scheme == "https":
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            url.hostname or "", url.port, timeout=timeout, context=settings.ssl_context
        )
    elif url.scheme == "http":
        conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=timeout)
    else:
        raise ValueError(f"base_url must be http:// or https://, not {settings.base_url!r}")
    return conn, url.path.rstrip("/")


def headers_for(settings: HttpSettings, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The client's own headers, then the key, then the request's."""
    headers = {"accept": "application/json", "user-agent": USER_AGENT, **settings.headers}
    headers["x-api-key"] = settings.api_key
    if extra:
        headers.update(extra)
    return headers


def answer_error(status: int, headers: "http.client.HTTPMessage", text: str, label: str) -> PromptstoreError:
    """A failed answer as the error it stands for: the envelope's message, else the status and the body's start."""
    envelope: Any = None
    try:
        envelope = json.loads(text) if text else None
    except ValueError:
        pass
    message = envelope.get("error") if isinstance(envelope, dict) else None
    if not isinstance(message, str):
        message = f"{label}: HTTP {status}" + (f" {text[:200]}" if text else "")
    code = envelope.get("code") if isinstance(envelope, dict) else None
    return error_for_status(status)(
        message,
        status=status,
        code=code if isinstance(code, str) else None,
        request_id=headers.get("x-request-id"),
        retry_after=retry_after_seconds(headers) if status in (429, 503) else None,
        request=label,
    )


def _refused_unsent(error: BaseException) -> bool:
    """The connection was never made: nothing was sent, so any request, a write too, may be sent again."""
    return isinstance(error, (ConnectionRefusedError, socket.gaierror))


def request(
    settings: HttpSettings,
    method: str,
    path: str,
    *,
    query: Optional[Mapping[str, Any]] = None,
    body: Any = None,
    idempotent: bool,
    closed: Optional[threading.Event] = None,
    raw: bool = False,
    content: Optional[Tuple[bytes, str]] = None,
) -> Any:
    """Sends a request and returns the ``data`` of its success envelope.

    Reads (``idempotent``) are retried with backoff after a 5xx, a timeout or a broken connection; writes only
    when the connection was refused (nothing was sent). A 429 (and a 503 with ``Retry-After``) is waited out
    for the seconds the service names, bounded by ``max_retry_after``, for any request: it was refused unseen.
    ``content`` sends bytes as they are (a file to import) with their content type, instead of ``body`` as JSON.
    """
    params = {name: _param(value) for name, value in (query or {}).items() if value is not None}
    target = path + (f"?{urlencode(params)}" if params else "")
    label = f"{method} {path}"
    headers = headers_for(settings)
    payload: Optional[bytes] = None
    if content is not None:
        payload, headers["content-type"] = content
    elif body is not None:
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers["content-type"] = "application/json"
    attempt = 0
    while True:
        if closed is not None and closed.is_set():
            raise ClientClosedError("the client was closed", code="closed", request=label)
        error, retry, wait, data = _attempt(settings, method, target, label, headers, payload, idempotent, raw)
        if error is None:
            return data
        if not retry or attempt >= settings.retries:
            raise error
        delay = (
            min(wait, settings.max_retry_after)
            if wait is not None
            else backoff(attempt, settings.retry_base_delay, settings.retry_max_delay)
        )
        attempt += 1
        if closed is not None:
            if closed.wait(delay):
                raise error
        else:
            time.sleep(delay)


def _param(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _attempt(
    settings: HttpSettings,
    method: str,
    target: str,
    label: str,
    headers: Dict[str, str],
    payload: Optional[bytes],
    idempotent: bool,
    raw: bool = False,
) -> Tuple[Optional[PromptstoreError], bool, Optional[float], Any]:
    conn, prefix = connect(settings, settings.timeout)
    try:
        try:
            conn.request(method, prefix + target, body=payload, headers=headers)
            res = conn.getresponse()
            text = res.read().decode("utf-8", errors="replace")
        except socket.timeout:
            return TimeoutError(settings.timeout, label), idempotent, None, None
        except (OSError, http.client.HTTPException) as error:
            failure = NetworkError(f"{label}: {error}", code="network_error", request=label)
            failure.__cause__ = error
            return failure, idempotent or _refused_unsent(error), None, None
    finally:
        conn.close()
    status = res.status
    if 200 <= status < 300:
        try:
            envelope = json.loads(text)
        except ValueError:
            envelope = None
        if raw and isinstance(envelope, dict):
            return None, False, None, envelope
        if not isinstance(envelope, dict) or envelope.get("success") is not True:
            error = PromptstoreError(
                f"{label}: the answer is not a success envelope",
                status=status,
                request_id=res.headers.get("x-request-id"),
                request=label,
            )
            return error, False, None, None
        return None, False, None, envelope.get("data")
    error = answer_error(status, res.headers, text, label)
    if status == 429:
        return error, True, error.retry_after if error.retry_after is not None else 1.0, None
    if status >= 500 and idempotent:
        return error, True, error.retry_after, None
    return error, False, None, None
