"""Variables: the server's rule (packages/core/src/prompts/variables.ts), kept in step by tests/test_variables.py."""

from __future__ import annotations

import re
from typing import List, Mapping, Union

from .errors import MissingVariablesError, UnexpectedVariablesError
from .types import Prompt

__all__ = ["VARIABLE", "variables_of", "fill", "VariableValue"]

#: ``{{``, optional whitespace, a name (a letter or ``_``, then letters, digits, ``_``, ``.`` or ``-``),
#: optional whitespace, ``}}``. Anything else, such as ``{{ 1st }}``, is plain text.
VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}")

VariableValue = Union[str, int, float, bool]


def variables_of(text: str) -> List[str]:
    """Every ``{{ name }}`` of a text, each once, in order of first appearance.

    >>> variables_of("Hi {{ name }}, {{name}} works at {{ company.name }}")
    ['name', 'company.name']
    """
    seen: dict = {}
    for match in VARIABLE.finditer(text):
        seen.setdefault(match.group(1), None)
    return list(seen)


def _text(value: bool) -> str:
    # As the TypeScript client's String(value) writes them, so both clients fill alike.
    return "true" if value else "false"


def fill(prompt: Union[Prompt, str], values: Mapping[str, VariableValue], *, strict: bool = False) -> str:
    """Replaces every ``{{ name }}`` of a prompt (or a text) with its value.

    Raises :class:`MissingVariablesError` naming every variable without a value; with ``strict``, also
    :class:`UnexpectedVariablesError` naming every value the text does not use. Values are inserted as they
    are: a value that itself holds ``{{ x }}`` is not filled again.

    >>> fill("You help customers of {{ company }}. Answer in {{ language }}.", {"company": "Acme", "language": "French"})
    'You help customers of Acme. Answer in French.'
    """
    text = prompt if isinstance(prompt, str) else prompt.prompt
    names = variables_of(text)
    missing = [name for name in names if name not in values]
    if missing:
        raise MissingVariablesError(missing)
    if strict:
        used = set(names)
        unexpected = [name for name in values if name not in used]
        if unexpected:
            raise UnexpectedVariablesError(unexpected)

    def value_of(match: "re.Match[str]") -> str:
        value = values[match.group(1)]
        return _text(value) if isinstance(value, bool) else str(value)

    return VARIABLE.sub(value_of, text)
