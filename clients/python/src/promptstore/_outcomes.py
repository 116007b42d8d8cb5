"""Outcomes and the fleet report (docs/outcomes.md): ``record()`` checks an outcome, puts it in a bounded buffer
and returns; a daemon thread sends batches to ``POST /api/v2/outcomes`` by count and by time, one request at a
time. A server that is away (no answer, a 5xx, a 429) keeps the batch for a later try, with backoff (or the
wait a 429 names); a full buffer drops its oldest. Every batch carries the instance's report of what it
serves, and with ``report_serving`` a heartbeat carries it at least every ``heartbeat`` seconds."""

from __future__ import annotations

import math
import re
import time
from collections import abc
from typing import Any, Dict, Mapping, NamedTuple, Optional, Tuple, Union

from .types import Prompt

#: The client's name and version in a fleet report (the package's ``__version__``; a test keeps them equal).
SDK = "python/0.1.0"

PER_BATCH = 1000
LATENCY_MS = 3_600_000
TOKENS = 100_000_000
TAGS = 10
TAG_KEY_LENGTH = 100
TAG_VALUE_LENGTH = 200
SERVING = 1000

#: ``outcomes=`` keys and their defaults (seconds for times).
DEFAULTS: Dict[str, float] = {
    "batch_size": 500,
    "flush_interval": 5.0,
    "buffer_size": 10_000,
    "retry_delay": 1.0,
    "max_retry_delay": 60.0,
    "heartbeat": 15.0,
    "close_timeout": 5.0,
}

FULL_HASH = re.compile(r"[0-9a-f]{64}")
_PROMPT_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_LABEL_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_NO_LABEL = ("latest", "version")


class ReadRef(NamedTuple):
    """The wire fields of a read: its prompt, version, label (None for a read by version or latest) and arm."""

    prompt: str
    version: str
    label: Optional[str]
    arm: Optional[str]


#: An outcome in the buffer: (read, ok, latency_ms, score, tokens in, tokens out, tags, time.time()).
Entry = Tuple[ReadRef, bool, Optional[float], Optional[float], Optional[int], Optional[int], Optional[Dict[str, str]], float]

#: What :func:`wire_label` answers for a value that is no label at all.
NOT_A_LABEL = object()


def _mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)``, a dict first: the ABC's check costs a microsecond."""
    return type(value) is dict or isinstance(value, abc.Mapping)


def wire_label(label: Any) -> Union[str, None, object]:
    """The label a read names on the wire: a label's name, None for a read of latest or by version (the read
    says ``latest`` or ``version``), or ``NOT_A_LABEL`` when it is no label at all."""
    if label in _NO_LABEL:
        return None
    if isinstance(label, str) and _LABEL_NAME.fullmatch(label):
        return label
    return NOT_A_LABEL


def read_ref(read: Any) -> Union[ReadRef, str]:
    """The read's wire fields (a :class:`Prompt` as ``get()`` returned it, or its JSON), or why it cannot be recorded."""
    if isinstance(read, Prompt):
        fallback, prompt_id, version, label, rollout = read.fallback, read.id, read.version, read.label, read.rollout
    elif _mapping(read):
        fallback, prompt_id, version = read.get("fallback"), read.get("id"), read.get("version")
        label, rollout = read.get("label"), read.get("rollout")
    else:
        return "read: must be what get() returned"
    if fallback is True:
        return "read: a fallback, not a version the service served"
    if not isinstance(prompt_id, str) or not _PROMPT_ID.fullmatch(prompt_id):
        return "read.id: must be a prompt's id"
    if not isinstance(version, str) or not FULL_HASH.fullmatch(version):
        return "read.version: must be a version's full hash"
    label = wire_label(label)
    if label is NOT_A_LABEL:
        return "read.label: must be a label's name, latest or version"
    arm = rollout.get("arm") if _mapping(rollout) else None
    if arm not in (None, "current", "candidate"):
        return "read.rollout.arm: must be current or candidate"
    return ReadRef(prompt_id, version, label, arm)  # type: ignore[arg-type]


def _number(value: Any, maximum: float) -> bool:
    kind = type(value)
    if kind is not int and kind is not float and (not isinstance(value, (int, float)) or isinstance(value, bool)):
        return False
    return 0 <= value <= maximum


def _count(value: Any) -> bool:
    if type(value) is int:
        return 0 <= value <= TOKENS
    return _number(value, TOKENS) and (isinstance(value, int) or float(value).is_integer())


def _utf16_length(text: str) -> int:
    """Length as the server counts it (JavaScript's: UTF-16 code units)."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def _text(value: Any, minimum: int, maximum: int) -> bool:
    """A string the server takes: its length within bounds, encodable (no lone surrogate), no NUL."""
    if not isinstance(value, str) or "\x00" in value:
        return False
    length = len(value) if len(value) * 2 <= maximum else _utf16_length(value)
    if not minimum <= length <= maximum:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def entry_of(
    ref: ReadRef, ok: Any, latency_ms: Any, score: Any, tokens: Any, tags: Any, at: float
) -> Union[Entry, str]:
    """The buffer's entry for an outcome, or why it cannot be kept (naming the field, as the server would)."""
    if ok is not True and ok is not False:
        return "ok: must be True or False"
    if latency_ms is not None and not _number(latency_ms, LATENCY_MS):
        return "latency_ms: must be a number from 0 to 3600000"
    if score is not None and not _number(score, 1):
        return "score: must be a number from 0 to 1"
    tokens_in = tokens_out = None
    if tokens is not None:
        if not _mapping(tokens):
            return "tokens: must be a mapping with input and output"
        tokens_in, tokens_out = tokens.get("input"), tokens.get("output")
        if tokens_in is not None and not _count(tokens_in):
            return "tokens.input: must be a whole number from 0 to 100000000"
        if tokens_out is not None and not _count(tokens_out):
            return "tokens.output: must be a whole number from 0 to 100000000"
        tokens_in = None if tokens_in is None else int(tokens_in)
        tokens_out = None if tokens_out is None else int(tokens_out)
    kept: Optional[Dict[str, str]] = None
    if tags is not None:
        if not _mapping(tags):
            return "tags: must be a mapping of strings"
        if len(tags) > TAGS:
            return "tags: must have at most 10 entries"
        for key, value in tags.items():
            if not _text(key, 1, TAG_KEY_LENGTH):
                return "tags: keys must be 1 to 100 characters of text"
            if not _text(value, 0, TAG_VALUE_LENGTH):
                return "tags: values must be strings of at most 200 characters of text"
        kept = dict(tags) if tags else None
    return (ref, ok, latency_ms, score, tokens_in, tokens_out, kept, at)


def _iso(at: float) -> str:
    millis = int(round(at * 1000))
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(millis // 1000)) + ".%03dZ" % (millis % 1000)


def wire_outcome(entry: Entry) -> Dict[str, Any]:
    """An entry as the server takes it."""
    ref, ok, latency_ms, score, tokens_in, tokens_out, tags, at = entry
    out: Dict[str, Any] = {"prompt": ref.prompt, "version": ref.version}
    if ref.label is not None:
        out["label"] = ref.label
    if ref.arm is not None:
        out["arm"] = ref.arm
    out["ok"] = ok
    if latency_ms is not None:
        out["latency_ms"] = latency_ms
    if score is not None:
        out["score"] = score
    if tokens_in is not None or tokens_out is not None:
        out["tokens"] = {k: v for k, v in (("input", tokens_in), ("output", tokens_out)) if v is not None}
    if tags is not None:
        out["tags"] = tags
    out["at"] = _iso(at)
    return out


def settings_of(given: Optional[Mapping[str, float]]) -> Dict[str, float]:
    """``outcomes=`` with its defaults; an unknown key or a value out of range is a ``ValueError``."""
    settings = dict(DEFAULTS)
    for key, value in (given or {}).items():
        if key not in DEFAULTS:
            raise ValueError(f"Promptstore: outcomes has no {key!r} (known: {', '.join(DEFAULTS)})")
        if not _number(value, math.inf) or (key in ("batch_size", "buffer_size") and value < 1):
            raise ValueError(f"Promptstore: outcomes[{key!r}] must be a positive number")
        settings[key] = value
    settings["batch_size"] = min(PER_BATCH, int(settings["batch_size"]))
    settings["buffer_size"] = int(settings["buffer_size"])
    return settings
