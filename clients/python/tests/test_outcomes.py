"""``record()`` and the fleet report of the Python client (docs/outcomes.md), in hostile conditions: the client
reads the real server through an outcomes receiver (support.OutcomeReceiver) that answers
``POST /api/v2/outcomes`` itself and can be away, answer 5xx, 413 or 429 with Retry-After, or be slow. Exact
numbers: batches, outcomes per batch, drops. The happy path against the server's own endpoint is
test_outcomes_endpoint.py."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import promptstore
from promptstore._outcomes import SDK
from support import call, sections, wait_for

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
#: Long enough never to come during a test: sends happen by count, flush() or close().
NEVER = 3600.0


def setup(fx, **options):
    """A published prompt, and a client reading it through a receiver that keeps its outcomes."""
    server = fx.start()
    receiver = fx.receiver(server.url)
    created = call(server.url, fx.key, "POST", "/api/v2/prompts", {"name": "Support", "sections": sections("v1"), "publish": True})
    errors = []
    given = {"flush_interval": NEVER, "retry_delay": NEVER, **options.pop("outcomes", {})}
    options.setdefault("mode", "ttl")
    client = fx.client(receiver.url, on_error=errors.append, outcomes=given, **options)
    read = client.get("support")
    return server, receiver, client, read, created["version"], errors


def record_many(client, read, start, stop):
    for i in range(start, stop):
        client.record(read, ok=i % 2 == 0, latency_ms=i)


def stats(recorded=0, sent=0, refused=0, dropped=0, invalid=0, pending=0):
    return dict(recorded=recorded, sent=sent, refused=refused, dropped=dropped, invalid=invalid, pending=pending)


def test_batches_go_by_count_the_rest_by_flush_each_outcome_as_the_server_takes_it(fx):
    _, receiver, client, read, version, _ = setup(fx, outcomes={"batch_size": 500})
    client.record(read, ok=False, latency_ms=0, score=0.75, tokens={"input": 120, "output": 40}, tags={"route": "chat"})
    for i in range(1, 1200):
        assert client.record(read, ok=i % 3 != 0, latency_ms=i) is None
    wait_for(lambda: client.outcome_stats()["sent"] == 1000, 10, "two full batches")
    assert [len(b) for b in receiver.latencies()] == [500, 500]
    assert client.outcome_stats() == stats(recorded=1200, sent=1000, pending=200)
    assert client.flush() is True
    assert receiver.latencies() == [list(range(0, 500)), list(range(500, 1000)), list(range(1000, 1200))]
    assert receiver.count() == 3
    first = receiver.batches[0]["outcomes"][0]
    assert list(first) == ["prompt", "version", "label", "ok", "latency_ms", "score", "tokens", "tags", "at"]
    assert first == {
        "prompt": "support",
        "version": version,
        "label": "production",
        "ok": False,
        "latency_ms": 0,
        "score": 0.75,
        "tokens": {"input": 120, "output": 40},
        "tags": {"route": "chat"},
        "at": first["at"],
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", first["at"])
    assert receiver.batches[0]["outcomes"][1] == {
        "prompt": "support", "version": version, "label": "production", "ok": True, "latency_ms": 1, "at": receiver.batches[0]["outcomes"][1]["at"],
    }
    # Every batch carries the instance's report, though report_serving is off.
    instances = {b["instance"]["id"] for b in receiver.batches}
    assert len(instances) == 1 and UUID.match(instances.pop())
    assert receiver.batches[0]["instance"]["sdk"] == SDK
    assert receiver.batches[0]["instance"]["serving"] == [{"prompt": "support", "label": "production", "version": version}]
    assert client.outcome_stats() == stats(recorded=1200, sent=1200)


def test_batches_go_by_time(fx):
    _, receiver, client, read, _, _ = setup(fx, outcomes={"flush_interval": 0.05})
    record_many(client, read, 0, 3)
    wait_for(lambda: client.outcome_stats()["sent"] == 3, 10, "the timed batch")
    assert receiver.latencies() == [[0, 1, 2]]
    record_many(client, read, 3, 5)
    wait_for(lambda: client.outcome_stats()["sent"] == 5, 10, "the second timed batch")
    assert receiver.latencies() == [[0, 1, 2], [3, 4]]


def test_a_full_buffer_drops_its_oldest_counted_exactly(fx):
    _, receiver, client, read, _, _ = setup(fx, outcomes={"buffer_size": 100, "batch_size": 1000})
    record_many(client, read, 0, 130)
    assert client.outcome_stats() == stats(recorded=130, dropped=30, pending=100)
    assert client.flush() is True
    assert receiver.latencies() == [list(range(30, 130))]
    assert client.outcome_stats() == stats(recorded=130, sent=100, dropped=30)


def test_the_server_away_keeps_the_batch_and_drops_the_oldest_while_away(fx):
    _, receiver, client, read, _, errors = setup(fx, outcomes={"buffer_size": 50, "batch_size": 1000})
    receiver.down = True
    record_many(client, read, 0, 40)
    assert client.flush() is False
    assert receiver.count() == 1 and len(errors) == 1
    assert client.outcome_stats() == stats(recorded=40, pending=40)
    # The 40 came back to the front of the buffer: 30 more overflow it by 20, the 20 oldest.
    record_many(client, read, 40, 70)
    assert client.outcome_stats() == stats(recorded=70, dropped=20, pending=50)
    receiver.down = False
    assert client.flush() is True
    assert receiver.latencies() == [list(range(20, 70))]
    assert client.outcome_stats() == stats(recorded=70, sent=50, dropped=20)


def test_5xx_answers_the_same_batch_is_sent_again_after_the_backoff_and_taken_once(fx):
    _, receiver, client, read, _, errors = setup(fx, outcomes={"retry_delay": 0.01, "max_retry_delay": 0.02})
    receiver.fail_next(2, 503)
    record_many(client, read, 0, 5)
    assert client.flush() is False
    wait_for(lambda: client.outcome_stats()["sent"] == 5, 10, "the batch after two 503s")
    assert receiver.count() == 3
    assert receiver.latencies() == [[0, 1, 2, 3, 4]]
    assert [e.status for e in errors] == [503, 503]


def test_a_429s_retry_after_is_obeyed_bounded_by_max_retry_after(fx):
    _, receiver, client, read, _, _ = setup(fx, max_retry_after=0.4, outcomes={"retry_delay": 0.001, "max_retry_delay": 0.001})
    receiver.fail_next(1, 429, {"retry-after": "3600"})
    record_many(client, read, 0, 2)
    client.flush()
    wait_for(lambda: client.outcome_stats()["sent"] == 2, 10, "the batch after the 429")
    refused, taken = receiver.arrivals
    # Not after the 1 ms backoff, not after an hour: after the 0.4 s the client allows.
    assert taken - refused >= 0.39
    assert receiver.latencies() == [[0, 1]]


def test_a_slow_server_record_never_waits_one_request_at_a_time_a_timeout_resent(fx):
    _, receiver, client, read, _, _ = setup(fx, timeout=1.5, outcomes={"batch_size": 10, "retry_delay": 0.01, "max_retry_delay": 0.01})
    receiver.delay_next(1, 6)
    record_many(client, read, 0, 10)
    wait_for(lambda: receiver.count() == 1, 10, "the first batch to be in flight")
    record_many(client, read, 10, 35)
    assert client.outcome_stats() == stats(recorded=35, pending=35)
    wait_for(lambda: client.outcome_stats()["sent"] == 35, 15, "four batches")
    # The first attempt timed out unanswered: tried again after the backoff, with all that came meanwhile.
    assert receiver.count() == 5
    assert receiver.latencies() == [list(range(0, 10)), list(range(10, 20)), list(range(20, 30)), list(range(30, 35))]


def test_refusals_one_by_one_from_the_answer_a_whole_batch_on_a_400_never_sent_again(fx):
    _, receiver, client, read, _, _ = setup(fx)
    client.record(read, ok=True, latency_ms=0)
    client.record(read, ok=True, latency_ms=1, tags={"refuse": "yes"})
    client.record(read, ok=True, latency_ms=2)
    assert client.flush() is True
    assert client.outcome_stats() == stats(recorded=3, sent=2, refused=1)
    receiver.fail_next(1, 400)
    record_many(client, read, 3, 7)
    assert client.flush() is True
    assert client.outcome_stats() == stats(recorded=7, sent=2, refused=5)
    assert receiver.count() == 2
    assert receiver.latencies() == [[0, 1, 2]]


def test_a_413_halves_the_batch_until_it_fits(fx):
    _, receiver, client, read, _, _ = setup(fx)
    receiver.fail_next(1, 413)
    record_many(client, read, 0, 8)
    assert client.flush() is True
    assert receiver.latencies() == [list(range(0, 4)), list(range(4, 8))]
    assert receiver.count() == 3


class Raising(dict):
    def get(self, key, default=None):
        raise RuntimeError("a mapping that raises")


def test_bad_values_are_dropped_and_counted_never_raised_each_kind_told_once(fx):
    _, receiver, client, read, _, errors = setup(fx)
    # A fallback: what get() serves when the service cannot be reached.
    fallback = fx.client("http://127.0.0.1:9", mode="none", retries=0).get("support", fallback="You help.")
    assert fallback.fallback is True
    bad = [
        (read, dict(ok="yes")),
        (read, dict(ok=1)),
        (read, dict(ok=True, latency_ms=-1)),
        (read, dict(ok=True, latency_ms=float("nan"))),
        (read, dict(ok=True, latency_ms=True)),
        (read, dict(ok=True, score=1.5)),
        (read, dict(ok=True, tokens={"input": 1.5})),
        (read, dict(ok=True, tags={f"k{i}": "v" for i in range(11)})),
        (read, dict(ok=True, tags={"note": "\ud800"})),
        (read, dict(ok=True, tags={"note": "x" * 201})),
        (fallback, dict(ok=True)),
        ({"id": "support", "version": "abc", "label": "production"}, dict(ok=True)),
        (None, dict(ok=True)),
        (read, dict(ok=True, tokens=Raising())),
    ]
    for r, o in bad:
        client.record(r, **o)
    # An emoji is 2 UTF-16 units, as the server counts: 100 of them is 200, within bounds.
    client.record(read, ok=True, latency_ms=3_600_000, score=0, tokens={"output": 0}, tags={"note": "🚀" * 100})
    assert client.outcome_stats() == stats(recorded=1, invalid=14, pending=1)
    assert [str(e) for e in errors] == [
        "record(): ok: must be True or False; the outcome was not kept",
        "record(): latency_ms: must be a number from 0 to 3600000; the outcome was not kept",
        "record(): score: must be a number from 0 to 1; the outcome was not kept",
        "record(): tokens.input: must be a whole number from 0 to 100000000; the outcome was not kept",
        "record(): tags: must have at most 10 entries; the outcome was not kept",
        "record(): tags: values must be strings of at most 200 characters of text; the outcome was not kept",
        "record(): read: a fallback, not a version the service served; the outcome was not kept",
        "record(): read.version: must be a version's full hash; the outcome was not kept",
        "record(): read: must be what get() returned; the outcome was not kept",
        "record(): RuntimeError: a mapping that raises; the outcome was not kept",
    ]
    assert client.flush() is True
    assert receiver.count() == 1


def test_close_sends_what_is_pending_and_what_it_cannot_send_is_dropped(fx):
    _, receiver, client, read, _, _ = setup(fx)
    record_many(client, read, 0, 7)
    client.close()
    assert receiver.latencies() == [list(range(0, 7))]
    client.record(read, ok=True)
    assert client.outcome_stats() == stats(recorded=8, sent=7, dropped=1)

    second = fx.client(receiver.url, mode="none", outcomes={"flush_interval": NEVER})
    read = second.get("support")
    receiver.down = True
    record_many(second, read, 0, 3)
    second.close()
    assert second.outcome_stats() == stats(recorded=3, dropped=3)


def test_close_waits_at_most_close_timeout(fx):
    _, receiver, client, read, _, _ = setup(fx, timeout=30, outcomes={"close_timeout": 0.2})
    receiver.delay_next(1, 20)
    record_many(client, read, 0, 4)
    client.close()
    # close() came back while the server still holds the batch: it is still being sent.
    assert receiver.count() == 1 and receiver.batches == []
    assert client.outcome_stats() == stats(recorded=4, pending=4)


def test_record_is_thread_safe(fx):
    _, receiver, client, read, _, _ = setup(fx, outcomes={"batch_size": 1000, "buffer_size": 100_000})
    threads = [threading.Thread(target=record_many, args=(client, read, n * 1000, (n + 1) * 1000)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert client.flush() is True
    assert client.outcome_stats() == stats(recorded=8000, sent=8000)
    assert sorted(x for batch in receiver.latencies() for x in batch) == list(range(8000))


def test_a_client_that_records_nothing_and_does_not_report_serving_sends_nothing_and_starts_no_thread(fx):
    _, receiver, client, _, _, _ = setup(fx)
    client.get("support", version="latest")
    assert client.flush() is True
    assert client._outcomes._thread is None
    client.close()
    assert receiver.count() == 0


def test_report_serving_a_heartbeat_reports_per_prompt_and_label_the_hash_served_a_rollouts_candidate(fx):
    server, receiver, client, _, _, _ = setup(fx, report_serving=True, outcomes={"heartbeat": 0.1})
    v2 = client.save("support", {"sections": sections("v2")})["version"]
    v3 = client.save("support", {"sections": sections("v3")})["version"]
    client.publish("support", v2, label="staging")
    client.publish("support", v3, percent=50)
    other = client.create({"name": "Other", "sections": sections("o"), "publish": True})
    client.get("support", assign="user-1")
    client.get("support", assign="user-2")
    client.get("support", version="staging")
    client.get("support", version=v2)
    client.get("other", version="latest")

    def report():
        return sorted(receiver.batches[-1]["instance"]["serving"], key=lambda s: (s["prompt"], s.get("label", ""), s["version"])) if receiver.batches else []

    expected = sorted(
        [
            {"prompt": "support", "label": "production", "version": v3},
            {"prompt": "support", "label": "staging", "version": v2},
            {"prompt": "support", "version": v2},
            {"prompt": "other", "version": other["version"]},
        ],
        key=lambda s: (s["prompt"], s.get("label", ""), s["version"]),
    )
    wait_for(lambda: report() == expected, 10, "the full report")
    assert receiver.batches[-1]["outcomes"] == []
    # Heartbeats go on without any outcome, each with the same id.
    seen = receiver.count()
    wait_for(lambda: receiver.count() >= seen + 2, 10, "two more heartbeats")
    ids = {b["instance"]["id"] for b in receiver.batches}
    assert len(ids) == 1 and UUID.match(ids.pop())


def test_each_client_has_its_own_id_mode_none_reports_its_last_reads_and_the_sdk_is_named_with_the_packages_version(fx):
    _, receiver, client, read, _, _ = setup(fx)
    second = fx.client(receiver.url, mode="none", outcomes={"flush_interval": NEVER})
    client.record(read, ok=True)
    # Mode none holds nothing: what it serves is what its reads last answered.
    second.record(second.get("support", version="latest"), ok=True)
    client.flush()
    second.flush()
    assert len(receiver.batches) == 2
    assert receiver.batches[0]["instance"]["id"] != receiver.batches[1]["instance"]["id"]
    assert receiver.batches[1]["instance"]["serving"] == [{"prompt": "support", "version": read.version}]
    assert "label" not in receiver.batches[1]["outcomes"][0]
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text("utf-8")
    version = re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1)  # type: ignore[union-attr]
    assert SDK == f"python/{promptstore.__version__}" == f"python/{version}"
