"""Sticky rollout assignment, computed in the client (docs/releases.md): a copy of the server's function
(packages/core/src/labels.ts), kept in step by tests/test_rollout.py over the shared test vectors. With it,
``get(id, version=..., assign=...)`` serves either arm of a rollout from memory, without a request per read."""

from __future__ import annotations

import random
import threading
from typing import Any, Callable, Dict, Optional, Tuple

from .errors import BadRequestError
from .types import Prompt, ReadKey

_MASK = 0xFFFFFFFF


def check_assign(assign: Optional[str]) -> None:
    """Raises the 400 the server answers for an assign value it refuses (more than 200 characters, or a NUL),
    so that a read served from memory fails as a read of the service would."""
    if assign is None:
        return
    if "\x00" in assign:
        raise BadRequestError("assign: contains U+0000 (NUL), which cannot be stored", status=400)
    if len(assign) > 200:
        raise BadRequestError("assign: must be at most 200 characters", status=400)


def murmur3(data: bytes, seed: int = 0) -> int:
    """MurmurHash3, x86 32-bit: the server's (packages/core/src/labels.ts).

    >>> murmur3(b""), hex(murmur3(b"hello")), hex(murmur3(b"The quick brown fox jumps over the lazy dog"))
    (0, '0x248bfa47', '0x2e4ff723')
    """
    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed & _MASK
    tail = len(data) & ~3
    for i in range(0, tail, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * c1) & _MASK
        k = ((k << 15) | (k >> 17)) & _MASK
        k = (k * c2) & _MASK
        h ^= k
        h = ((h << 13) | (h >> 19)) & _MASK
        h = (h * 5 + 0xE6546B64) & _MASK
    rest = len(data) & 3
    if rest:
        k = int.from_bytes(data[tail:], "little")
        k = (k * c1) & _MASK
        k = ((k << 15) | (k >> 17)) & _MASK
        k = (k * c2) & _MASK
        h ^= k
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h


def rollout_bucket(prompt_id: str, label: str, assign: str) -> int:
    """Where an assign value falls, 0 to 9999: murmur3 of the UTF-8 of ``<prompt id>/<label>/<assign>``.

    >>> rollout_bucket("support-bot", "production", "user-1")
    5058
    """
    return murmur3(f"{prompt_id}/{label}/{assign}".encode("utf-8")) % 10_000


def rollout_arm(prompt_id: str, label: str, percent: float, assign: Optional[str]) -> str:
    """``candidate`` when the assign value's bucket is below percent × 100, else ``current``; without an
    assign value, at random, as the server does.

    >>> rollout_arm("support-bot", "production", 51, "user-1"), rollout_arm("support-bot", "production", 50, "user-1")
    ('candidate', 'current')
    """
    bucket = random.random() * 10_000 if assign is None else rollout_bucket(prompt_id, label, assign)
    return "candidate" if bucket < percent * 100 else "current"


def other_arm_version(read: Prompt) -> Optional[str]:
    """The full hash the other arm of a held rollout read serves; None without a rollout."""
    rollout = read.rollout
    if not rollout:
        return None
    # The label that served (production, or the fallback that served) is the one in the rollout.
    if rollout.get("arm") == "current":
        return rollout.get("candidate")
    return read.labels.get(read.label) or read.production_version


def other_arm_view(read: Prompt, pinned: Prompt) -> Prompt:
    """What the server answers for the other arm: the label's read with the content of ``pinned`` (that arm's
    version read by its hash, same guard); ``version`` and ``rollout.arm`` name the arm."""
    rollout = dict(read.rollout or {})
    rollout["arm"] = "candidate" if rollout.get("arm") == "current" else "current"
    content = pinned.raw
    data: Dict[str, Any] = {}
    # Field by field in the order the server writes them (packages/server/src/http/reads/read-json.ts).
    for key, value in read.raw.items():
        # Tools and model settings are the version's content: the pinned arm's, or none.
        if key in ("tools", "model"):
            continue
        if key == "labels":
            for own in ("tools", "model"):
                if own in content:
                    data[own] = content[own]
        if key in ("prompt", "sections", "variables", "version"):
            data[key] = content[key]
        elif key == "rollout":
            data[key] = rollout
        else:
            data[key] = value
    return Prompt.from_json(data)


def same_rollout(a: Prompt, b: Prompt) -> bool:
    """Whether two reads of a label are the same rollout, arms aside: the same two versions served."""

    def current_of(read: Prompt) -> Optional[str]:
        return read.version if (read.rollout or {}).get("arm") == "current" else other_arm_version(read)

    return (
        bool(a.rollout)
        and bool(b.rollout)
        and a.label == b.label
        and (a.rollout or {}).get("candidate") == (b.rollout or {}).get("candidate")
        and current_of(a) == current_of(b)
    )


class Arms:
    """Serves a held read of a label: the read itself without a rollout; in one, the arm the assign value gets.
    The other arm's version is read once by its hash (held for good: a hash never changes) as soon as the
    label's read is seen with a rollout, so that later calls make no request. The label's read itself is read
    again on any event of its prompt (_memory.py): a rollout changed, completed or aborted is never served
    from memory."""

    def __init__(
        self,
        get: Callable[[ReadKey], Prompt],
        peek: Callable[[ReadKey], Optional[Prompt]],
        background: Callable[[Callable[[], None]], bool],
    ) -> None:
        self._get = get
        self._peek = peek
        self._background = background
        self._lock = threading.Lock()
        #: The composed other arm, by held label read (by identity; the read is kept so its id stays its own).
        self._composed: Dict[int, Tuple[Prompt, Prompt]] = {}

    def serve(self, key: ReadKey, read: Prompt, assign: Optional[str]) -> Prompt:
        other = other_arm_version(read)
        if other is None:
            return read
        rollout = read.rollout or {}
        pinned_key = ReadKey(key.prompt_id, other, key.guard)
        if rollout.get("arm") == rollout_arm(key.prompt_id, read.label, rollout.get("percent", 0), assign):
            # Held from now on for the next caller of the other arm; a failure is retried by that caller.
            if self._peek(pinned_key) is None:
                self._background(lambda: self._prefetch(pinned_key))
            return read
        return self._compose(read, self._get(pinned_key))

    def held(self, key: ReadKey, read: Prompt, assign: Optional[str]) -> Prompt:
        """When the service cannot answer: the arm the assign value gets of a read held (even out of date), if
        the other arm's version is held too; else the read as held."""
        other = other_arm_version(read)
        if other is None:
            return read
        rollout = read.rollout or {}
        if rollout.get("arm") == rollout_arm(key.prompt_id, read.label, rollout.get("percent", 0), assign):
            return read
        pinned = self._peek(ReadKey(key.prompt_id, other, key.guard))
        return read if pinned is None else self._compose(read, pinned)

    def _compose(self, read: Prompt, pinned: Prompt) -> Prompt:
        with self._lock:
            held = self._composed.get(id(read))
            if held is not None and held[0] is read and held[1].version == pinned.version:
                return held[1]
        view = other_arm_view(read, pinned)
        with self._lock:
            if len(self._composed) >= 1024:
                self._composed.clear()
            self._composed[id(read)] = (read, view)
        return view

    def _prefetch(self, key: ReadKey) -> None:
        try:
            self._get(key)
        except Exception:  # noqa: BLE001, S110 - the caller that needs this arm reads it again and sees the error
            pass
