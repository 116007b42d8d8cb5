"""npm run bench, the Python client's part: a read from memory (µs per get()) and publish-to-on_change latency
with 100 watching clients, against the real binary on SQLite. Writes its section of bench/results.md between
its markers, leaving the other sections alone.

    python3 clients/python/bench/run.py     (BENCH_PY_CLIENTS, BENCH_PY_PUBLISHES, BENCH_PY_CALLS shorten it)
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE.parent / "tests"))

from promptstore import Promptstore, PromptChange  # noqa: E402
from support import REPO, Server, SqliteDatabase, call, wait_for  # noqa: E402

RESULTS = REPO / "bench" / "results.md"
START = "<!-- python client bench: start -->"
END = "<!-- python client bench: end -->"
CLIENTS = int(os.environ.get("BENCH_PY_CLIENTS", "100"))
PUBLISHES = int(os.environ.get("BENCH_PY_PUBLISHES", "10"))
CALLS = int(os.environ.get("BENCH_PY_CALLS", "200000"))
TARGET_P99_MS = 250


def sections(tag: str) -> list:
    return [{"title": "Role", "content": f"You help customers of {{{{ company }}}}. ({tag})"}]


def percentile(values: List[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p / 100 * len(ordered))) - 1))]


def read_bench(server: Server) -> Dict[str, float]:
    out: Dict[str, float] = {}
    for mode in ("watch", "ttl"):
        with Promptstore(server.url, server.key, mode=mode) as client:
            client.get("bench")
            if mode == "watch":
                wait_for(lambda: client.status["stream"] == "live" and client.status["reading"] == 0, 10, "the stream")
            for _ in range(10_000):
                client.get("bench")
            started = time.perf_counter()
            for _ in range(CALLS):
                client.get("bench")
            out[mode] = (time.perf_counter() - started) / CALLS * 1e6
    return out


def propagation_bench(server: Server) -> Dict[str, float]:
    seen: Dict[str, Dict[int, float]] = {}
    lock = threading.Lock()

    def on_change_of(index: int):
        def on_change(change: PromptChange) -> None:
            at = time.perf_counter()
            with lock:
                seen.setdefault(change.version, {}).setdefault(index, at)

        return on_change

    clients = [Promptstore(server.url, server.key, on_change=on_change_of(i)) for i in range(CLIENTS)]
    try:
        for client in clients:
            client.get("bench")
        wait_for(lambda: all(c.status["stream"] == "live" and c.status["reading"] == 0 for c in clients), 60, "streams")
        latencies: List[float] = []
        stale = 0
        for n in range(PUBLISHES):
            saved = call(server.url, server.key, "PUT", "/api/v2/prompts/bench", {"sections": sections(f"run {n}")})
            version = saved["version"]
            call(server.url, server.key, "POST", "/api/v2/prompts/bench/publish", {"version": version})
            published = time.perf_counter()
            wait_for(lambda: len(seen.get(version, {})) == CLIENTS, 30, "every client to serve the publish")
            latencies += [(at - published) * 1000 for at in seen[version].values()]
            stale += sum(1 for c in clients if c.get("bench").version != version)
            time.sleep(0.2)
        return {
            "p50": statistics.median(latencies),
            "p99": percentile(latencies, 99),
            "max": max(latencies),
            "stale": stale,
            "samples": len(latencies),
        }
    finally:
        for client in clients:
            client.close()


def main() -> None:
    database = SqliteDatabase()
    server = Server(database.url, {"PROMPTSTORE_DEFAULT_PLAN": "unlimited"})
    try:
        call(server.url, server.key, "POST", "/api/v2/prompts", {"name": "Bench", "sections": sections("v0"), "publish": True})
        read = read_bench(server)
        prop = propagation_bench(server)
    finally:
        server.stop()
        database.drop()
    met = "met" if prop["p99"] <= TARGET_P99_MS and prop["stale"] == 0 else "**missed**"
    section = f"""{START}
## Python client

Written by `python3 clients/python/bench/run.py` (part of `npm run bench`) on {datetime.now(timezone.utc).isoformat(timespec="seconds")} ({os.cpu_count()} cores, Python {platform.python_version()}), against the real binary on SQLite.

**Read from memory.** `client.get(id)` once the prompt is held, {CALLS:,} calls after a warm-up: **{read["watch"]:.2f} µs per
call** in mode `watch` (stream live), {read["ttl"]:.2f} µs in mode `ttl`. A call takes one lock and two dictionary lookups.

**Publish to `on_change`.** {CLIENTS} clients in mode `watch`, in one Python process (each with its stream on its own
thread), hold a published prompt; a new version is published {PUBLISHES} times. Latency runs from the moment the publish
response arrived to each client's `on_change` (the event carries the production read: no request). After every
publish each client's `get()` must serve the new version from memory ("stale" counts those that did not).

| clients | publishes | p50 ms | p99 ms | max ms | stale | p99 ≤ {TARGET_P99_MS} ms |
|---:|---:|---:|---:|---:|---:|---|
| {CLIENTS} | {PUBLISHES} | {prop["p50"]:.1f} | {prop["p99"]:.1f} | {prop["max"]:.1f} | {prop["stale"]} | {met} |
{END}"""
    existing = RESULTS.read_text("utf-8") if RESULTS.exists() else "# Benchmark results\n"
    if START in existing:
        head, rest = existing.split(START, 1)
        text = head + section + rest.split(END, 1)[1]
    else:
        text = existing.rstrip() + "\n\n" + section + "\n"
    RESULTS.write_text(text, "utf-8")
    print(f"wrote the Python client section of {RESULTS}")
    print(f"get(): {read['watch']:.2f} µs (watch), {read['ttl']:.2f} µs (ttl); publish→on_change p50 {prop['p50']:.1f} ms, p99 {prop['p99']:.1f} ms")


if __name__ == "__main__":
    main()
