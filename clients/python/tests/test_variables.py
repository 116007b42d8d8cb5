"""The client keeps a copy of the server's variable rule: these texts run through both (the server's own
packages/core, under Node) and the test fails when they disagree."""

from __future__ import annotations

import json
import subprocess

from promptstore import MissingVariablesError, fill, variables_of
from support import REPO

TEXTS = [
    "",
    "no variables at all",
    "Hello {{ name }}",
    "Hello {{name}}",
    "{{   spaced   }} and {{\tname\n}} and {{\r\nwrapped\r\n}}",
    "{{ user.name }} {{ first-name }} {{ _private }} {{ a1.b-2_c }} {{ trailing. }} {{ trailing- }}",
    "{{ A }} {{ a }} {{ Z9 }}",
    "{{ 1st }} {{ -dash }} {{ .dot }} {{ $x }} {{ é }} {{ na me }} {{}} {{ }}",
    "{{ name }} unclosed {{ other",
    "single close {{ name } and single braces { name }",
    "triple {{{ name }}} braces",
    "nested {{ {{ inner }} }}",
    "repeated {{ a }} {{ b }} {{ a }} {{a}} {{ b }}",
    "adjacent {{a}}{{b}}{{a}}",
    "{{ constructor }} {{ __proto__ }} {{ toString }}",
    "multi\nline {{ x }}\r\n{{ y }}\rend",
    "{{ x }}}} and {{{{ y }}",
    "nbsp {{\u00a0name\u00a0}} and em space {{\u2003x\u2003}}",
]


def value_for(name: str, i: int) -> str:
    return f"$&-{name}-\\1" if i % 3 == 0 else f"{{{{ {name} }}}}!" if i % 3 == 1 else name.upper()


SERVER = """
import { extractVariables, fillVariables } from "@promptstore/core/prompts/variables";
const cases = JSON.parse(process.argv[1]);
console.log(JSON.stringify(cases.map(([text, values]) => ({
  names: extractVariables([{ title: "T", content: text, enabled: true }]),
  filled: fillVariables(text, values),
}))));
"""


def test_the_client_follows_the_servers_rule():
    names = [variables_of(text) for text in TEXTS]
    cases = [[text, {n: value_for(n, i) for i, n in enumerate(found)}] for text, found in zip(TEXTS, names)]
    out = subprocess.run(
        ["node", "--input-type=module", "-e", SERVER, json.dumps(cases)],
        cwd=REPO / "packages" / "server",
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    server = json.loads(out)
    for (text, values), found, theirs in zip(cases, names, server):
        assert found == theirs["names"], text
        assert fill(text, values) == theirs["filled"], text
        assert fill(text, values, strict=True) == theirs["filled"], text


def test_missing_variables_are_each_named_in_order():
    try:
        fill("{{ a }} {{ b }} {{ c }}", {"b": 1})
    except MissingVariablesError as error:
        assert error.missing == ["a", "c"]
        assert str(error) == "no variables a, c"[:0] + "no value for the variables a, c"
    else:
        raise AssertionError("no error")


def test_values_are_written_as_the_typescript_client_writes_them():
    assert fill("{{ a }} {{ b }} {{ c }}", {"a": True, "b": 3, "c": False}) == "true 3 false"
