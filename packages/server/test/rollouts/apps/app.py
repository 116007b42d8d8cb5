"""An application as a team writes one (issue 40's end-to-end test), with the Python client: it reads the
prompt for a stream of users (``assign``: each user's sticky arm), asks the model (the OpenAI stand-in) with the
text it got, and records whether the answer was usable. Every read is a line on stdout: ``<epoch ms> <version>``.
It stops when its stdin closes, and sends its last outcomes before it exits."""
import json
import os
import sys
import threading
import time
import urllib.request

from promptstore import Promptstore

env = os.environ
stopping = threading.Event()


def watch_stdin() -> None:
    sys.stdin.read()
    stopping.set()


threading.Thread(target=watch_stdin, daemon=True).start()

client = Promptstore(
    base_url=env["PROMPTSTORE_URL"],
    api_key=env["PROMPTSTORE_API_KEY"],
    outcomes={"batch_size": 100, "flush_interval": 0.2},
)
name = env["APP_NAME"]
i = 0
while not stopping.is_set():
    read = client.get(env["PROMPT_ID"], assign=f"{name}-user-{i}")
    started = time.perf_counter()
    body = json.dumps(
        {
            "model": "app",
            "messages": [
                {"role": "system", "content": read.prompt},
                {"role": "user", "content": f"question {i} from {name}"},
            ],
        }
    ).encode()
    request = urllib.request.Request(
        env["MODEL_URL"] + "/v1/chat/completions",
        data=body,
        headers={"authorization": "Bearer " + env["MODEL_KEY"], "content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer = json.loads(response.read())["choices"][0]["message"]["content"]
    client.record(read, answer != "REFUSED", latency_ms=(time.perf_counter() - started) * 1000)
    sys.stdout.write(f"{int(time.time() * 1000)} {read.version}\n")
    sys.stdout.flush()
    i += 1
    time.sleep(0.005)
client.close()
sys.stderr.write(json.dumps(client.outcome_stats()) + "\n")
