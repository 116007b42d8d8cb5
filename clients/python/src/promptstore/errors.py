"""The errors the client raises.

Every failure of a request is a :class:`PromptstoreError`: an answer of the service carries its status, the
failure envelope's message and the answer's request id, and is raised as the subclass for its status
(:class:`NotFoundError` for 404, ...). A request that got no answer is a :class:`NetworkError` or a
:class:`TimeoutError` (status 0).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Type

__all__ = [
    "PromptstoreError",
    "BadRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "ConflictError",
    "RateLimitError",
    "ServerError",
    "NetworkError",
    "TimeoutError",
    "ClientClosedError",
    "MissingVariablesError",
    "UnexpectedVariablesError",
    "error_for_status",
]


class PromptstoreError(Exception):
    """A request failed.

    ``str(error)`` is the failure envelope's ``error`` (it names the field at fault), ``status`` the HTTP
    status (0 when no answer arrived), ``request_id`` the answer's ``X-Request-Id`` (quote it when reporting a
    problem), ``retry_after`` the seconds the service asked to wait (429 and 503), ``request`` the
    ``METHOD path`` of the request.

    >>> error = NotFoundError("id: no prompt support-bot in this project", status=404, request_id="req-1")
    >>> isinstance(error, PromptstoreError), error.status, error.request_id
    (True, 404, 'req-1')
    """

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        code: Optional[str] = None,
        request_id: Optional[str] = None,
        retry_after: Optional[float] = None,
        request: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.request_id = request_id
        self.retry_after = retry_after
        self.request = request


class BadRequestError(PromptstoreError):
    """400: the input is invalid; the message names the field."""


class AuthenticationError(PromptstoreError):
    """401: the API key is missing or invalid."""


class PermissionDeniedError(PromptstoreError):
    """403: a plan limit, or a key whose scope does not allow the action (the message names the scope)."""


class NotFoundError(PromptstoreError):
    """404: no such prompt (or version) in this project."""


class ConflictError(PromptstoreError):
    """409: an ambiguous version prefix, a taken id, or ``latest`` moved since ``base_version``."""


class RateLimitError(PromptstoreError):
    """429: the organization's rate limit; ``retry_after`` says for how long."""


class ServerError(PromptstoreError):
    """5xx: the service failed; reads are retried with backoff before this is raised."""


class NetworkError(PromptstoreError):
    """No answer: the service could not be reached, or the connection broke. ``status`` is 0."""


class TimeoutError(NetworkError):  # noqa: A001 - the client's own, a NetworkError; builtins' is not shadowed for users
    """No answer within the client's ``timeout`` (seconds). ``status`` is 0."""

    def __init__(self, timeout: float, request: str) -> None:
        super().__init__(f"{request}: no answer within {timeout:g} s", code="timeout", request=request)
        self.timeout = timeout


class ClientClosedError(PromptstoreError):
    """The client was closed: it sends nothing more (what it holds stays readable)."""


_BY_STATUS: Dict[int, Type[PromptstoreError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    429: RateLimitError,
}


def error_for_status(status: int) -> Type[PromptstoreError]:
    """The class raised for an answer with this status.

    >>> error_for_status(404).__name__, error_for_status(503).__name__, error_for_status(418).__name__
    ('NotFoundError', 'ServerError', 'PromptstoreError')
    """
    if status >= 500:
        return ServerError
    return _BY_STATUS.get(status, PromptstoreError)


def _names(names: Sequence[str]) -> str:
    return ", ".join(names)


class MissingVariablesError(ValueError):
    """:func:`promptstore.fill` was given no value for these variables (each named, in order of appearance).

    >>> from promptstore import fill
    >>> try:
    ...     fill("Hello {{ name }} from {{ company }}", {"name": "Ada"})
    ... except MissingVariablesError as error:
    ...     print(error.missing)
    ['company']
    """

    def __init__(self, missing: List[str]) -> None:
        plural = "" if len(missing) == 1 else "s"
        super().__init__(f"no value for the variable{plural} {_names(missing)}")
        self.missing = missing


class UnexpectedVariablesError(ValueError):
    """:func:`promptstore.fill` with ``strict=True`` was given values the text does not reference.

    >>> from promptstore import fill
    >>> try:
    ...     fill("Hello {{ name }}", {"name": "Ada", "nmae": "typo"}, strict=True)
    ... except UnexpectedVariablesError as error:
    ...     print(error.unexpected)
    ['nmae']
    """

    def __init__(self, unexpected: List[str]) -> None:
        plural = "" if len(unexpected) == 1 else "s"
        super().__init__(f"the text has no variable{plural} {_names(unexpected)}")
        self.unexpected = unexpected
