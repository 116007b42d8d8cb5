"""What the datasets and evaluations share: the streams a client holds open, and the answers worth trying again."""

from __future__ import annotations

import http.client
import socket
import threading
from typing import Any, Dict, Mapping, Optional, Set, Tuple
from urllib.parse import urlencode

from ._http import HttpSettings, answer_error, connect, headers_for, request
from .errors import ClientClosedError, NetworkError, PromptstoreError, TimeoutError

#: The progress stream sends an event at least every 15 s: three missed and the connection is taken as dead.
IDLE = 45.0

_UNSET: Any = object()


def _drop_none(values: Mapping[str, Any]) -> Dict[str, Any]:
    return {name: value for name, value in values.items() if value is not None}


def _transient(error: PromptstoreError) -> bool:
    """No answer, a 5xx or a 429: worth waiting out and trying again; not the caller's mistake."""
    if isinstance(error, ClientClosedError):
        return False
    return isinstance(error, NetworkError) or error.status == 429 or error.status >= 500


class _Streams:
    """The connections answers are being read from (an export, a wait), so that ``close()`` can end them."""

    def __init__(self, closed: threading.Event) -> None:
        self.closed = closed
        self._lock = threading.Lock()
        self._open: Set[http.client.HTTPConnection] = set()

    def open(
        self, settings: HttpSettings, path: str, query: Mapping[str, Any], accept: str
    ) -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """A GET whose answer is read as it arrives: its headers within the client's ``timeout``; a failed
        answer raised as the typed error it stands for."""
        label = f"GET {path}"
        params = _drop_none(query)
        target = path + (f"?{urlencode(params)}" if params else "")
        conn, prefix = connect(settings, settings.timeout)
        with self._lock:
            if self.closed.is_set():
                raise ClientClosedError("the client was closed", code="closed", request=label)
            self._open.add(conn)
        try:
            try:
                conn.request("GET", prefix + target, headers=headers_for(settings, {"accept": accept}))
                res = conn.getresponse()
            except socket.timeout:
                raise TimeoutError(settings.timeout, label) from None
            except (OSError, http.client.HTTPException) as error:
                if self.closed.is_set():
                    raise ClientClosedError("the client was closed", code="closed", request=label) from None
                raise NetworkError(f"{label}: {error}", code="network_error", request=label) from error
            if res.status != 200:
                raise answer_error(res.status, res.headers, res.read().decode("utf-8", "replace"), label)
        except BaseException:
            self.done(conn)
            raise
        return conn, res

    def done(self, conn: http.client.HTTPConnection, res: Optional[http.client.HTTPResponse] = None) -> None:
        with self._lock:
            self._open.discard(conn)
        if res is not None:
            res.close()
        conn.close()

    def close_all(self) -> None:
        with self._lock:
            conns = list(self._open)
        for conn in conns:
            if conn.sock is not None:
                try:
                    # Wakes a thread blocked reading: close() alone does not interrupt a recv.
                    conn.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
