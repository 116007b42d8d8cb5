"""Datasets of test cases (docs/evaluations.md, "Datasets"): ``client.datasets``."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from ._http import HttpSettings, path_of, request
from .errors import ClientClosedError, NetworkError, TimeoutError
from .types import Json
from ._streams import _UNSET, _drop_none, _Streams

__all__ = ["Datasets", "DatasetExport", "FILE_FORMATS", "FileData"]

#: What an import takes: JSONL (one case a line) or CSV (a header; every column a variable but ``expected``,
#: ``tags`` and ``messages``).
FILE_FORMATS = {"jsonl": "application/x-ndjson", "csv": "text/csv"}


class DatasetExport:
    """A dataset version's cases as the server streams them (``GET /api/v2/datasets/{id}/export``), read one
    line at a time: iterate it (each item a case, parsed), or use it as a context manager, or ``close()`` it to
    end the request early."""

    def __init__(
        self,
        streams: _Streams,
        conn: http.client.HTTPConnection,
        res: http.client.HTTPResponse,
        dataset_id: str,
        idle: float,
    ) -> None:
        self.id = dataset_id
        #: The version exported (the head unless one was asked for).
        self.version: str = res.headers.get("x-dataset-version") or ""
        #: How many cases it holds.
        self.count = int(res.headers.get("x-dataset-cases") or 0)
        self._streams = streams
        self._conn = conn
        self._res = res
        self._idle = idle
        self._label = f"GET {path_of('api', 'v2', 'datasets', dataset_id, 'export')}"

    def __iter__(self) -> Iterator[Json]:
        try:
            if self._conn.sock is not None:
                self._conn.sock.settimeout(self._idle)
            while True:
                try:
                    raw = self._res.readline()
                except socket.timeout:
                    raise TimeoutError(self._idle, self._label) from None
                except (OSError, http.client.HTTPException, ValueError) as error:
                    if self._streams.closed.is_set():
                        raise ClientClosedError("the client was closed", code="closed", request=self._label) from None
                    raise NetworkError(f"{self._label}: the answer broke off: {error}", request=self._label) from error
                if not raw:
                    return
                line = raw.decode("utf-8").strip()
                if line:
                    yield json.loads(line)
        finally:
            self.close()

    def close(self) -> None:
        self._streams.done(self._conn, self._res)

    def __enter__(self) -> "DatasetExport":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


FileData = Union[str, bytes]


class Datasets:
    """Datasets of test cases (docs/evaluations.md, "Datasets"): ``client.datasets``. Reads need a key with
    scope ``read``, changes ``write``. A version is the hash of its cases: the same cases again make none
    (``created`` is False).

    >>> created = client.datasets.create("Support questions", [{"vars": {"customer": "Ada"}, "expected": "Hi Ada"}])  # doctest: +SKIP
    >>> created["id"], created["cases"]  # doctest: +SKIP
    ('ds_...', 1)
    """

    def __init__(self, settings: HttpSettings, closed: threading.Event, streams: _Streams) -> None:
        self._http = settings
        self._closed = closed
        self._streams = streams

    def list(self) -> List[Json]:
        """``GET /api/v2/datasets``: the project's datasets, each with its head ``version`` and ``cases`` count."""
        return self._call("GET", "/api/v2/datasets")["datasets"]

    def get(self, dataset_id: str, *, version: Optional[str] = None) -> Json:
        """``GET /api/v2/datasets/{id}``: the dataset at its head, or at ``version`` (a hash or a 7+ prefix)."""
        return self._call("GET", self._path(dataset_id), query={"version": version})

    def create(
        self,
        name: str,
        cases: Optional[Sequence[Mapping[str, Any]]] = None,
        *,
        description: Optional[str] = None,
        from_examples: Optional[str] = None,
        message: Optional[str] = None,
    ) -> Json:
        """``POST /api/v2/datasets``: a dataset with its first ``cases`` (each ``{"vars", "messages"?,
        "expected"?, "tags"?}``; at most 1 000 a request, add more with :meth:`append`), or from a prompt's
        saved examples (``from_examples``: its id). Answers ``{"id", "name", "version", "cases"}``."""
        body = _drop_none(
            {
                "name": name,
                "cases": None if cases is None else list(cases),
                "description": description,
                "from_examples": from_examples,
                "message": message,
            }
        )
        return self._call("POST", "/api/v2/datasets", body=body, idempotent=False)

    def replace(
        self,
        dataset_id: str,
        cases: Sequence[Mapping[str, Any]],
        *,
        message: Optional[str] = None,
        base: Optional[str] = None,
    ) -> Json:
        """``PUT /api/v2/datasets/{id}``: a new version holding exactly these cases (none when an existing
        version holds them). With ``base`` (a full version hash), refused (409) if the head has moved since."""
        body = _drop_none({"cases": list(cases), "message": message, "base": base})
        return self._call("PUT", self._path(dataset_id), body=body, idempotent=False)

    def append(
        self,
        dataset_id: str,
        cases: Sequence[Mapping[str, Any]],
        *,
        message: Optional[str] = None,
        base: Optional[str] = None,
    ) -> Json:
        """``POST /api/v2/datasets/{id}/cases``: a new version, the head's cases and then these."""
        body = _drop_none({"cases": list(cases), "message": message, "base": base})
        return self._call("POST", self._path(dataset_id, "cases"), body=body, idempotent=False)

    def update(self, dataset_id: str, *, name: Optional[str] = None, description: Any = _UNSET) -> Json:
        """``PATCH /api/v2/datasets/{id}``: renames it or changes its description (None removes it); not
        content, no version."""
        body: Dict[str, Any] = {} if name is None else {"name": name}
        if description is not _UNSET:
            body["description"] = description
        return self._call("PATCH", self._path(dataset_id), body=body, idempotent=False)

    def delete(self, dataset_id: str) -> Json:
        """``DELETE /api/v2/datasets/{id}``: the dataset with every version and case."""
        return self._call("DELETE", self._path(dataset_id), idempotent=False)

    def versions(self, dataset_id: str) -> Json:
        """``GET /api/v2/datasets/{id}/versions``: ``{"id", "head", "versions": [...]}``, newest first."""
        return self._call("GET", self._path(dataset_id, "versions"))

    def cases(
        self,
        dataset_id: str,
        *,
        version: Optional[str] = None,
        after: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> Json:
        """``GET /api/v2/datasets/{id}/cases``: one page of a version's cases, in order, after the position
        ``after``; ``next_after`` continues (None on the last page)."""
        query = {"version": version, "after": after, "limit": limit}
        return self._call("GET", self._path(dataset_id, "cases"), query=query)

    def cases_all(self, dataset_id: str, *, version: Optional[str] = None, limit: int = 1000) -> Iterator[Json]:
        """Every case (``{"position", "id", "case"}``) of a version, page by page: the head when the first page
        is read, held to that version to the end."""
        after: Optional[int] = None
        while True:
            page = self.cases(dataset_id, version=version, after=after, limit=limit)
            version = page["version"]
            yield from page["cases"]
            after = page.get("next_after")
            if after is None:
                return

    def export(self, dataset_id: str, *, version: Optional[str] = None) -> DatasetExport:
        """``GET /api/v2/datasets/{id}/export``: a version's cases streamed as JSONL, one parsed case at a time;
        a dataset of any size is never held whole.

        >>> with client.datasets.export(dataset_id) as exported:  # doctest: +SKIP
        ...     for case in exported:
        ...         print(exported.version, case["vars"])
        """
        conn, res = self._streams.open(
            self._http, self._path(dataset_id, "export"), {"version": version}, "application/x-ndjson"
        )
        return DatasetExport(self._streams, conn, res, dataset_id, self._http.timeout)

    def import_file(
        self,
        data: FileData,
        *,
        name: str,
        format: str = "jsonl",
        description: Optional[str] = None,
        message: Optional[str] = None,
    ) -> Json:
        """``POST /api/v2/datasets/import``: a new dataset whose first version is a file, JSONL or CSV
        (``format``), read by the server as it arrives.

        >>> with open("cases.csv", encoding="utf-8") as f:  # doctest: +SKIP
        ...     created = client.datasets.import_file(f.read(), name="From CSV", format="csv")
        """
        query = {"name": name, "description": description, "message": message}
        return self._call("POST", "/api/v2/datasets/import", query=query, content=_file(data, format), idempotent=False)

    def import_into(
        self,
        dataset_id: str,
        data: FileData,
        *,
        format: str = "jsonl",
        mode: Optional[str] = None,
        message: Optional[str] = None,
        base: Optional[str] = None,
    ) -> Json:
        """``POST /api/v2/datasets/{id}/import``: a new version from a file: its cases replace the head's
        (``mode="replace"``, the default) or follow them (``"append"``). A bad line refuses the whole file
        (``line 12: ...``) and stores nothing."""
        query = {"mode": mode, "message": message, "base": base}
        path = self._path(dataset_id, "import")
        return self._call("POST", path, query=query, content=_file(data, format), idempotent=False)

    def _path(self, dataset_id: str, *rest: str) -> str:
        return path_of("api", "v2", "datasets", dataset_id, *rest)

    def _call(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        content: Optional[Tuple[bytes, str]] = None,
        idempotent: bool = True,
    ) -> Any:
        return request(
            self._http, method, path, query=query, body=body, content=content, idempotent=idempotent, closed=self._closed
        )


def _file(data: FileData, format: str) -> Tuple[bytes, str]:
    if format not in FILE_FORMATS:
        raise ValueError(f"format must be one of {', '.join(FILE_FORMATS)}, not {format!r}")
    return (data.encode("utf-8") if isinstance(data, str) else bytes(data)), FILE_FORMATS[format]
