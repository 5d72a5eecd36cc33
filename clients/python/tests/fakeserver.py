"""An in-test fake of the batch routes of api-v3 §9 (PATCH /jobs, PATCH
/jobs?take=, POST /jobs/heartbeat), which the real server does not have
yet, plus the few routes a worker needs around them (take, the
heartbeat_timeout read). It records every request and can be told to
answer the next requests with a given status."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import parse_qs, urlsplit


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A long poll the worker cut short at stop: nothing to report.
        pass


class FakeJob:
    def __init__(self, id: int, queue: str, input: Any):
        self.id, self.queue, self.input = id, queue, input
        self.status, self.attempt, self.output = "queued", 0, None
        self.error: Optional[dict] = None
        self.heartbeats = 0


class Fake:
    def __init__(self, heartbeat_timeout: str = "0s"):
        self.lock = threading.Condition()
        self.jobs: dict[int, FakeJob] = {}
        self.queued: dict[str, list[int]] = {}
        self.requests: list[tuple[str, str, Any]] = []
        self.forced: list[tuple[int, str]] = []  # answers of the next requests, in order
        self.heartbeat_timeout = heartbeat_timeout
        self.server = _Server(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add(self, queue: str, inputs: list) -> list[int]:
        with self.lock:
            self.queued.setdefault(queue, [])
            ids = []
            for x in inputs:
                j = FakeJob(len(self.jobs) + 1, queue, x)
                self.jobs[j.id] = j
                self.queued[queue].append(j.id)
                ids.append(j.id)
            self.lock.notify_all()
            return ids

    def retake(self, id: int) -> None:
        """The job times out and another worker takes it (attempt + 1)."""
        with self.lock:
            self.jobs[id].attempt += 1

    def paths(self) -> list[str]:
        with self.lock:
            return [f"{m} {p}" for m, p, _ in self.requests]

    # -- the model -----------------------------------------------------------

    def _take(self, queue: str, count: int) -> list[dict]:
        out = []
        q = self.queued.get(queue, [])
        while q and len(out) < count:
            j = self.jobs[q.pop(0)]
            j.status, j.attempt = "running", j.attempt + 1
            out.append({"id": j.id, "input": j.input, "attempt": j.attempt, "queue": j.queue})
        return out

    def _check(self, item: Any) -> Optional[tuple[int, str]]:
        j = self.jobs.get(item["id"])
        if j is None:
            return 404, f"Job with ID {item['id']} does not exist"
        a = item.get("attempt")
        if a is not None and (not isinstance(a, int) or isinstance(a, bool) or a < 1):
            return 400, "Invalid attempt"
        if a is not None and a != j.attempt:
            return 409, f"Job {j.id} attempt {a} is not current"
        return None

    def _apply(self, item: dict) -> dict:
        bad = self._check(item)
        if bad:
            return {"id": item["id"], "status": bad[0], "error": bad[1]}
        j = self.jobs[item["id"]]
        for k in item:
            if k not in ("id", "attempt", "status", "output", "error", "retry", "retry_in", "retry_at"):
                return {"id": j.id, "status": 400, "error": f"Unknown field: {k}"}
        st = item.get("status")
        if st in ("completed", "failed"):
            if j.status != "running":
                return {"id": j.id, "status": 409, "error": f"Cannot change status from {j.status} to {st}"}
            if st == "failed" and "retry_in" in item and item["retry_in"] == "bad":
                return {"id": j.id, "status": 400, "error": "Invalid retry_in"}
            j.status = st
            if "output" in item:
                j.output = item["output"]
            j.error = item.get("error")
        return {"id": j.id, "status": 204}

    def _batch_body(self, body: Any) -> Optional[str]:
        if not isinstance(body, list) or not 1 <= len(body) <= 1000:
            return "Invalid batch: want an array of 1 to 1000 items"
        for it in body:
            if not isinstance(it, dict) or not isinstance(it.get("id"), int) or isinstance(it.get("id"), bool):
                return "Invalid batch: an item without an integer id"
        return None

    def _handler(self) -> type:
        fake = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def _answer(self, status: int, body: Any = None, text: Optional[str] = None) -> None:
                data = b""
                ctype = "application/json"
                if text is not None:
                    data, ctype = text.encode(), "text/plain; charset=utf-8"
                elif body is not None:
                    data = json.dumps(body).encode()
                self.send_response(status)
                if data:
                    self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _serve(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                body = json.loads(raw) if raw else None
                u = urlsplit(self.path)
                q = {k: v[0] for k, v in parse_qs(u.query).items()}
                with fake.lock:
                    fake.requests.append((self.command, self.path, body))
                    if fake.forced:
                        st, text = fake.forced.pop(0)
                        return self._answer(st, text=text)
                parts = u.path.strip("/").split("/")
                m = self.command
                if m == "GET" and len(parts) == 3 and parts[0] == "queue" and parts[2] == "job":
                    deadline = time.monotonic() + (float(q["wait"].rstrip("s")) if "wait" in q else 0)
                    with fake.lock:
                        while True:
                            jobs = fake._take(parts[1], int(q.get("count", 1)))
                            left = deadline - time.monotonic()
                            if jobs or left <= 0:
                                break
                            fake.lock.wait(min(left, 0.05))
                    return self._answer(200, jobs) if jobs else self._answer(204)
                if m == "GET" and len(parts) == 2 and parts[0] == "job":
                    with fake.lock:
                        j = fake.jobs.get(int(parts[1]))
                        if j is None:
                            return self._answer(404, text=f"Job with ID {parts[1]} does not exist")
                        return self._answer(200, {"heartbeat_timeout": fake.heartbeat_timeout, "status": j.status,
                                                  "attempt": j.attempt})
                if m == "PATCH" and u.path == "/jobs":
                    with fake.lock:
                        bad = fake._batch_body(body)
                        if bad:
                            return self._answer(400, text=bad)
                        take = q.get("take")
                        if take is not None and take not in fake.queued:
                            return self._answer(404, text=f"Queue '{take}' does not exist")
                        results = [fake._apply(it) for it in body]
                        if take is None:
                            return self._answer(200, results)
                        jobs = fake._take(take, int(q.get("count", 1)))
                        return self._answer(200, {"results": results, "jobs": jobs})
                if m == "POST" and u.path == "/jobs/heartbeat":
                    with fake.lock:
                        bad = fake._batch_body(body)
                        if bad:
                            return self._answer(400, text=bad)
                        out = []
                        for it in body:
                            err = fake._check(it)
                            j = fake.jobs.get(it["id"])
                            if err is None and j is not None and j.status != "running":
                                err = (409, f"Cannot heartbeat job {j.id}, job is not running")
                            if err:
                                out.append({"id": it["id"], "status": err[0], "error": err[1]})
                            else:
                                j.heartbeats += 1
                                out.append({"id": it["id"], "status": 204})
                        return self._answer(200, out)
                return self._answer(500, text=f"the fake does not serve {m} {u.path}")

            do_GET = do_PATCH = do_POST = do_PUT = do_DELETE = _serve

        return H
