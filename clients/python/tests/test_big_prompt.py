"""A 250 KB system prompt through the Python client against the real server.

The prompt is core's test fixture (``bigPromptMarkdown()``), produced at test time by Node so that every
package's tests see the same bytes; the expected sections and hash come from core too.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from support import REPO, call, wait_for

SCRIPT = """
import { bigPromptMarkdown, editedBigPrompt } from "@promptstore/core/testing/big-prompt";
import { markdownToSections } from "@promptstore/core/prompts/markdown";
import { contentHash } from "@promptstore/core/prompts/hash";
const markdown = bigPromptMarkdown();
const edited = editedBigPrompt(markdown);
const view = (md) => {
  const sections = markdownToSections(md);
  return { markdown: md, sections, hash: contentHash({ sections, tools: [] }) };
};
process.stdout.write(JSON.stringify({ original: view(markdown), edited: view(edited) }));
"""


@pytest.fixture(scope="module")
def big():
    out = subprocess.run(
        ["node", "--input-type=module", "-e", SCRIPT], cwd=REPO, capture_output=True, check=True, text=True
    )
    return json.loads(out.stdout)


def plain(sections):
    return [{"title": s.title, "content": s.content, "enabled": s.enabled} for s in sections]


def test_a_250_kb_prompt_is_read_byte_for_byte_and_a_new_version_arrives_through_the_stream(fx, big):
    original, edited = big["original"], big["edited"]
    assert len(original["markdown"].encode()) > 245_000
    server = fx.start()
    created = call(
        server.url, fx.key, "POST", "/api/v2/prompts",
        {"id": "agent", "name": "Agent", "markdown": original["markdown"], "publish": True},
    )
    assert created["version"] == original["hash"]
    client = fx.client(server.url)
    first = client.get("agent")
    assert first.version == original["hash"]
    assert plain(first.sections) == original["sections"]
    wait_for(lambda: client.status["stream"] == "live" and client.status["reading"] == 0, 20, "the stream")

    saved = call(server.url, fx.key, "PUT", "/api/v2/prompts/agent", {"markdown": edited["markdown"], "publish": True})
    assert saved["version"] == edited["hash"]
    wait_for(lambda: client.get("agent").version == edited["hash"], 20, "the new version")
    assert plain(client.get("agent").sections) == edited["sections"]
    unchanged = call(server.url, fx.key, "PUT", "/api/v2/prompts/agent", {"sections": edited["sections"]})
    assert unchanged["created"] is False and unchanged["version"] == edited["hash"]
