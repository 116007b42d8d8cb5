"""The shapes of the API, as frozen dataclasses and typed dicts (the server's OpenAPI document describes them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple, TypedDict

__all__ = [
    "Section",
    "Prompt",
    "PromptChange",
    "ReadKey",
    "Json",
    "SectionInput",
    "CreatePromptInput",
    "SaveVersionInput",
]

Json = Dict[str, Any]


@dataclass(frozen=True)
class Section:
    """One section of a version: ``content`` under ``title``; disabled sections are stored, never served."""

    id: str
    title: str
    content: str
    enabled: bool = True


@dataclass(frozen=True)
class Prompt:
    """A prompt as :meth:`Promptstore.get` serves it: the assembled text, its sections, tools, variables and
    the version served. Frozen: every caller is served the same object, which nobody can change.

    ``label`` is ``production``, ``latest`` or ``version`` (what the reference named), or ``fallback`` when
    this is the caller's fallback text, not a read of the service (then ``fallback`` is True).

    >>> p = Prompt.from_json({"id": "bot", "name": "Bot", "description": "", "prompt": "Hi {{ name }}",
    ...     "sections": [{"id": "s1", "title": "Role", "content": "Hi {{ name }}", "enabled": True}],
    ...     "variables": ["name"], "version": "ab" * 32, "label": "production",
    ...     "production_version": "ab" * 32, "created_at": "2026-01-01T00:00:00.000Z",
    ...     "updated_at": "2026-01-01T00:00:00.000Z"})
    >>> p.id, p.variables, p.sections[0].title, p.tools
    ('bot', ('name',), 'Role', ())
    """

    id: str
    name: str
    description: str
    prompt: str
    sections: Tuple[Section, ...]
    variables: Tuple[str, ...]
    version: str
    label: str
    production_version: Optional[str]
    created_at: str
    updated_at: str
    #: Function-calling tools in the chat-completions format; empty when the version defines none.
    tools: Tuple[Mapping[str, Any], ...] = ()
    fallback: bool = False
    #: The service's answer as received (``data`` of the envelope); empty for a fallback.
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def labels(self) -> Mapping[str, str]:
        """Every label of the prompt to its version, production included when set (docs/releases.md)."""
        return self.raw.get("labels") or {}

    @property
    def model(self) -> Optional[Mapping[str, Any]]:
        """The version's model settings (``name``, ``temperature``, ``top_p``, ``max_output_tokens``, ``stop``,
        ``response_format``, ``extra``), or None when it has none. Content: part of the version's hash."""
        return self.raw.get("model")

    @property
    def rollout(self) -> Optional[Mapping[str, Any]]:
        """When the label that served has a gradual rollout: ``candidate``, ``percent`` and this read's ``arm``."""
        return self.raw.get("rollout")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Prompt":
        """A prompt from the ``data`` of a v2 read (``GET /api/v2/prompts/{id}``)."""
        return cls(
            id=data["id"],
            name=data["name"],
            description=data.get("description", ""),
            prompt=data["prompt"],
            sections=tuple(
                Section(id=s["id"], title=s["title"], content=s["content"], enabled=s.get("enabled", True))
                for s in data.get("sections", [])
            ),
            variables=tuple(data.get("variables", [])),
            version=data["version"],
            label=data.get("label", "production"),
            production_version=data.get("production_version"),
            created_at=data.get("created_at", ""),
            updated_at=data.get("updated_at", ""),
            tools=tuple(data.get("tools") or ()),
            raw=data,
        )


class ReadKey(NamedTuple):
    """What one held read is kept under: the prompt, the version reference and the guard.

    The reference is everything that chooses the version (``production``, ``latest``, a hash or a prefix),
    so a new way to choose one is a new kind of reference, not a new cache.
    """

    prompt_id: str
    ref: str
    guard: bool


@dataclass(frozen=True)
class PromptChange:
    """What ``on_change`` is told: the version now served for a prompt and reference (also on the first read)."""

    prompt_id: str
    ref: str
    guard: bool
    version: str
    #: The version served before; None on the first read.
    previous_version: Optional[str]


class SectionInput(TypedDict, total=False):
    """A section to write: ``title`` and ``content``; ``enabled`` defaults to true."""

    title: str
    content: str
    enabled: bool


class ResponseFormat(TypedDict, total=False):
    """``{"type": "text"}``, ``{"type": "json_object"}``, or ``{"type": "json_schema", "json_schema": {...}}``."""

    type: str
    json_schema: Json


class ModelSettings(TypedDict, total=False):
    """A version's model settings; ``name`` is required when settings are sent. Unknown keys are refused:
    provider-specific settings go in ``extra``."""

    name: str
    temperature: float
    top_p: float
    max_output_tokens: int
    stop: List[str]
    response_format: ResponseFormat
    extra: Json


class CreatePromptInput(TypedDict, total=False):
    """Body of ``POST /api/v2/prompts``: ``name`` and ``sections`` or ``markdown``."""

    name: str
    description: str
    id: str
    sections: List[SectionInput]
    markdown: str
    tools: List[Json]
    model: ModelSettings
    message: str
    publish: bool


class SaveVersionInput(TypedDict, total=False):
    """Body of ``PUT /api/v2/prompts/{id}``: the full content of the new version."""

    sections: List[SectionInput]
    markdown: str
    tools: List[Json]
    model: ModelSettings
    message: str
    publish: bool
    name: str
    description: str
    base_version: str

