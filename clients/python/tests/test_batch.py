"""The batch routes of api-v3 §9 (PATCH /jobs, PATCH /jobs?take=, POST
/jobs/heartbeat) through the client and the worker's batch_reports mode.
The server does not have these routes yet: these tests run against an
in-test fake of the contract (fakeserver.py)."""

from __future__ import annotations

import threading
import time
import unittest

import support  # noqa: F401
from fakeserver import Fake
from support import eventually

from ocyless import BadRequest, Client, Failure, JobLost, NotFound, Unavailable, Worker


class BatchClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.fake = Fake()
        self.addCleanup(self.fake.close)
        self.c = Client(self.fake.url, backoff=0.001)
        self.c.sleep = lambda s: None

    def test_update_jobs(self) -> None:
        a, b, c = self.fake.add("q", [1, 2, 3])
        taken = self.c.take("q", count=2, worker="w")
        self.assertEqual([(t.id, t.attempt) for t in taken], [(a, 1), (b, 1)])
        res = self.c.update_jobs([
            {"id": a, "attempt": 1, "status": "completed", "output": {"ok": True}},
            {"id": b, "attempt": 2, "status": "completed"},
            {"id": c, "status": "completed"},
            {"id": 99, "status": "failed"},
            {"id": b, "attempt": 1, "status": "failed", "error": {"group": "g", "message": "m"}, "retry_in": 0},
        ])
        self.assertEqual([(r.id, r.status) for r in res], [(a, 204), (b, 409), (c, 409), (99, 404), (b, 204)])
        self.assertTrue(res[1].stale)
        self.assertEqual(res[1].error, f"Job {b} attempt 2 is not current")
        self.assertFalse(res[2].stale)
        self.assertTrue(res[0].ok)
        method, path, body = self.fake.requests[-1]
        self.assertEqual((method, path), ("PATCH", "/jobs"))
        self.assertEqual(body[0], {"id": a, "attempt": 1, "status": "completed", "output": {"ok": True}})
        self.assertEqual(body[4]["retry_in"], "0s")  # durations in the server's grammar
        self.assertEqual(self.fake.jobs[a].output, {"ok": True})
        self.assertEqual(self.fake.jobs[b].error, {"group": "g", "message": "m"})

    def test_update_jobs_and_take(self) -> None:
        a, b, c = self.fake.add("q", [1, 2, 3])
        self.c.take("q", count=1, worker="w")
        r = self.c.update_jobs_and_take([{"id": a, "attempt": 1, "status": "completed"}], "q", count=5, worker="w")
        self.assertEqual([x.status for x in r.results], [204])
        self.assertEqual([(j.id, j.attempt, j.queue, j.input) for j in r.jobs], [(b, 1, "q", 2), (c, 1, "q", 3)])
        self.assertEqual(self.fake.requests[-1][1], "/jobs?take=q&count=5&worker=w")
        r = self.c.update_jobs_and_take([{"id": b, "attempt": 1, "status": "completed"}], "q")
        self.assertEqual(r.jobs, [])
        with self.assertRaises(NotFound):
            self.c.update_jobs_and_take([{"id": c, "status": "completed"}], "missing")

    def test_heartbeat_jobs(self) -> None:
        a, b = self.fake.add("q", [1, 2])
        self.c.take("q", count=1)
        res = self.c.heartbeat_jobs([(a, 1), {"id": b}, (a, 2)])
        self.assertEqual([(r.id, r.status) for r in res], [(a, 204), (b, 409), (a, 409)])
        self.assertTrue(res[2].stale)
        self.assertEqual(self.fake.requests[-1][2], [{"id": a, "attempt": 1}, {"id": b}, {"id": a, "attempt": 2}])

    def test_malformed_batches_are_refused_before_sending(self) -> None:
        for items in ([], [{"status": "completed"}], [{"id": "7"}], [{"id": True}], [{"id": 1}] * 1001):
            with self.subTest(len(items)), self.assertRaises(ValueError):
                self.c.update_jobs(items)
        self.assertEqual(self.fake.requests, [])
        # What the server refuses whole is a BadRequest.
        self.fake.forced.append((400, "Invalid batch: want an array of 1 to 1000 items"))
        with self.assertRaises(BadRequest):
            self.c.update_jobs([{"id": 1}])

    def test_retries(self) -> None:
        (a,) = self.fake.add("q", [1])
        self.c.take("q")
        # A heartbeat batch changes nothing more when repeated: sent again
        # after a 503.
        self.fake.forced.append((503, "Failed to connect to Redis: timed out"))
        self.assertEqual([r.status for r in self.c.heartbeat_jobs([(a, 1)])], [204])
        self.assertEqual(self.fake.paths()[-2:], ["POST /jobs/heartbeat", "POST /jobs/heartbeat"])
        # An update batch may have been applied: not sent again after a 503...
        n = len(self.fake.requests)
        self.fake.forced.append((503, "Failed to connect to Redis: timed out"))
        with self.assertRaises(Unavailable):
            self.c.update_jobs([{"id": a, "attempt": 1, "status": "completed"}])
        self.assertEqual(len(self.fake.requests), n + 1)
        # ...but after a gateway's 429, which refused it before anything ran.
        self.fake.forced.append((429, "Too Many Requests"))
        self.assertEqual([r.status for r in self.c.update_jobs([{"id": a, "attempt": 1, "status": "completed"}])], [204])
        self.assertEqual(len(self.fake.requests), n + 3)


class TakeErrorTest(unittest.TestCase):
    def test_a_failed_take_is_tried_again(self) -> None:
        fake = Fake()
        self.addCleanup(fake.close)
        (a,) = fake.add("q", ["x"])
        fake.forced += [(503, "Failed to connect to Redis: timed out")] * 2
        finished: list = []
        w = Worker(Client(fake.url, retries=0), lambda job: "ok", queues=["q"], wait=1, error_backoff=0.05,
                   on_finish=lambda j, e: finished.append((j.id, e)))
        t = threading.Thread(target=w.run, kwargs={"install_signal_handlers": False}, daemon=True)
        t.start()
        try:
            # The fake has no PATCH /job/{id}: the completion's answer is a
            # 500, and the outcome says so; what matters is the take.
            eventually(lambda: bool(finished), 20, "the job taken after two failed takes")
        finally:
            w.stop()
            t.join(30)
        self.assertEqual(fake.paths()[:3], ["GET /queue/q/job?count=1&worker=" + w.name + "&wait=1s"] * 3)
        self.assertEqual(finished[0][0], a)


class BatchWorkerTest(unittest.TestCase):
    def start(self, fake: Fake, handler, **kw) -> tuple[Worker, threading.Thread, list]:
        finished: list = []
        w = Worker(Client(fake.url), handler, queues=["q"], wait=1, batch_reports=True,
                   on_finish=lambda j, e: finished.append((j.id, e)), **kw)
        t = threading.Thread(target=w.run, kwargs={"install_signal_handlers": False}, daemon=True)
        t.start()

        def stop() -> None:
            w.stop()
            t.join(30)
            self.assertFalse(t.is_alive(), "the worker did not stop")
        self.addCleanup(stop)
        return w, t, finished

    def test_batched_reports_take_the_next_jobs(self) -> None:
        fake = Fake()
        self.addCleanup(fake.close)
        ids = fake.add("q", list(range(60)))

        def handle(job):
            time.sleep(0.005)
            if job.input % 10 == 3:
                raise Failure("bad", group="threes", permanent=True)
            return job.input * 2

        w, t, finished = self.start(fake, handle, concurrency=8, batch_size=20)
        eventually(lambda: len(finished) == 60, 60, "60 jobs reported")
        w.stop()
        t.join(30)
        self.assertEqual(sorted(i for i, _ in finished), ids)
        for j in fake.jobs.values():
            if j.input % 10 == 3:
                self.assertEqual((j.status, j.error["group"]), ("failed", "threes"))
            else:
                self.assertEqual((j.status, j.output), ("completed", j.input * 2))
        paths = fake.paths()
        self.assertFalse([p for p in paths if p.startswith("PATCH /job/")], "a job reported on its own")
        batched = [b for m, p, b in fake.requests if m == "PATCH" and p.startswith("/jobs?take=q&count=")]
        self.assertTrue(batched)
        self.assertEqual(sum(len(b) for b in batched) + sum(
            len(b) for m, p, b in fake.requests if m == "PATCH" and p == "/jobs"), 60)
        # Fewer requests than jobs: reports share them, and take with them.
        self.assertLess(len(paths), 60, paths)
        # Every report carries its attempt.
        self.assertTrue(all("attempt" in it for b in batched for it in b))

    def test_heartbeats_together_and_a_stale_report(self) -> None:
        fake = Fake(heartbeat_timeout="1s")
        self.addCleanup(fake.close)
        a, b = fake.add("q", ["long", "stale"])
        started = threading.Event()

        def handle(job):
            if job.input == "stale":
                started.set()
                time.sleep(0.2)
                fake.retake(job.id)  # timed out and taken by another worker meanwhile
                return "late"
            time.sleep(1.5)
            return "done"

        w, t, finished = self.start(fake, handle, concurrency=2)
        eventually(lambda: len(finished) == 2, 30, "both reported")
        got = dict(finished)
        self.assertIsNone(got[a])
        self.assertIsInstance(got[b], JobLost)
        self.assertEqual(fake.jobs[b].status, "running")  # the stale completion changed nothing
        self.assertEqual(fake.jobs[a].output, "done")
        beats = [p for p in fake.paths() if p == "POST /jobs/heartbeat"]
        self.assertGreaterEqual(len(beats), 3, fake.paths())
        self.assertGreaterEqual(fake.jobs[a].heartbeats, 3)
        self.assertFalse([p for p in fake.paths() if "/heartbeat?" in p], "a heartbeat sent on its own")

    def test_a_lost_job_stops_its_heartbeats(self) -> None:
        fake = Fake(heartbeat_timeout="1s")
        self.addCleanup(fake.close)
        (a,) = fake.add("q", ["x"])
        lost = threading.Event()

        def handle(job):
            time.sleep(0.1)
            fake.retake(job.id)
            if job.lost.wait(10):
                lost.set()
            return "dropped"

        w, t, finished = self.start(fake, handle)
        eventually(lambda: len(finished) == 1, 30, "reported")
        self.assertTrue(lost.is_set(), "the handler never saw the job lost")
        self.assertIsInstance(finished[0][1], JobLost)
        self.assertFalse([p for p in fake.paths() if p.startswith("PATCH")], "a lost job's result was reported")


if __name__ == "__main__":
    unittest.main()
