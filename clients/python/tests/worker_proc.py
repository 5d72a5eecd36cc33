"""A worker process for the shutdown tests: python3 worker_proc.py URL
QUEUE SECONDS GRACE. Each job sleeps SECONDS (printing "started <id>"
first) and completes with {"slept": SECONDS}; SIGTERM shuts it down."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ocyless import Client, Worker  # noqa: E402

url, queue, secs, grace = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])


def handle(job):
    print(f"started {job.id}", flush=True)
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline and not job.lost.is_set():
        time.sleep(0.01)
    return {"slept": secs}


def finished(job, err):
    print(f"finished {job.id} {type(err).__name__ if err else 'ok'}", flush=True)


print("ready", flush=True)
Worker(Client(url), handle, queues=[queue], concurrency=2, shutdown_grace=grace, name="proc-worker",
       on_finish=finished).run()
print("exited", flush=True)
