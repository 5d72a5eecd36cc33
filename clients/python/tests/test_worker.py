"""The worker against the real local server."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
import unittest
from pathlib import Path

import support  # noqa: F401
from localserver import LocalServer
from support import eventually

from ocyless import Client, Failure, JobLost, StaleAttempt, Worker

HERE = Path(__file__).resolve().parent
srv: LocalServer


def setUpModule() -> None:
    global srv
    srv = LocalServer().start()


def tearDownModule() -> None:
    srv.stop()


class Running:
    """A worker's run() in a thread."""

    def __init__(self, w: Worker):
        self.w = w
        self.t = threading.Thread(target=w.run, kwargs={"install_signal_handlers": False}, daemon=True)
        self.t.start()

    def stop(self, timeout: float = 30.0) -> float:
        started = time.monotonic()
        self.w.stop()
        self.t.join(timeout)
        if self.t.is_alive():
            raise AssertionError("the worker did not stop")
        return time.monotonic() - started


class WorkerTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = Client(srv.url)
        self.queue = self.id().rsplit(".", 1)[-1].replace("_", "-")

    def test_200_jobs_ten_at_a_time(self) -> None:
        self.c.put_queue(self.queue, timeout="1m")
        ids = self.c.create_jobs(self.queue, [{"input": {"n": i}} for i in range(200)])
        lock = threading.Lock()
        now, most = 0, 0
        finished: dict[int, object] = {}

        def handle(job):
            nonlocal now, most
            with lock:
                now += 1
                most = max(most, now)
            time.sleep(0.02)
            with lock:
                now -= 1
            return {"double": 2 * job.input["n"]}

        def done(job, err):
            with lock:
                finished[job.id] = err

        r = Running(Worker(self.c, handle, queues=[self.queue], concurrency=10, on_finish=done, name="w200"))
        try:
            eventually(lambda: len(finished) == 200, 120, "200 jobs finished")
        finally:
            r.stop()
        self.assertEqual(sorted(finished), sorted(ids))
        self.assertTrue(all(e is None for e in finished.values()), [e for e in finished.values() if e])
        self.assertEqual(sorted(self.c.queue_job_ids(self.queue).completed), sorted(ids))
        for i in (ids[0], ids[99], ids[199]):
            j = self.c.get_job(i)
            self.assertEqual(j.output, {"double": 2 * j.input["n"]})
            self.assertEqual(j.worker, "w200")
        self.assertLessEqual(most, 10)
        self.assertGreater(most, 1, "the handlers never ran at the same time")

    def test_a_handler_that_raises(self) -> None:
        self.c.put_queue(self.queue, retries=1)
        flaky = self.c.create_job(self.queue, "flaky").id
        final = self.c.create_job(self.queue, "final", retries=3).id
        finished: dict[int, list] = {}

        def handle(job):
            if job.input == "final":
                raise Failure("no use retrying", group="validation", permanent=True)
            if job.attempt == 1:
                raise ValueError("boom")
            raise Failure("still broken", group="flaky-group")

        def done(job, err):
            finished.setdefault(job.id, []).append(err)

        r = Running(Worker(self.c, handle, queues=[self.queue], concurrency=2, on_finish=done))
        try:
            eventually(lambda: len(finished.get(flaky, [])) == 2 and len(finished.get(final, [])) == 1, 30,
                       "the failures reported")
        finally:
            r.stop()
        j = self.c.get_job(flaky, ["status", "error", "history", "retries_attempted"])
        self.assertEqual(j.status, "failed")
        self.assertEqual((j.error.group, j.error.message), ("flaky-group", "still broken"))
        self.assertEqual(len(j.history), 2)
        self.assertEqual(j.history[0].error.group, "failed")
        self.assertTrue(j.history[0].error.message.startswith("ValueError: boom"), j.history[0].error.message)
        self.assertIn("Traceback", j.history[0].error.message)
        self.assertIsInstance(finished[flaky][0], ValueError)
        j = self.c.get_job(final, ["status", "error", "retries_attempted"])
        self.assertEqual((j.status, j.error.group, j.retries_attempted), ("failed", "validation", 0))
        self.assertEqual(self.c.failures().get("validation"), 1)

    def test_a_timed_out_job_refuses_the_stale_report(self) -> None:
        self.c.put_queue(self.queue, timeout="1s", retries=1)
        jid = self.c.create_job(self.queue, "slow").id
        retaken = threading.Event()
        outcome: list = []

        def handle(job):
            # Runs past the timeout until the job was taken again.
            if not retaken.wait(60):
                raise AssertionError("never taken again")
            return "too late"

        r = Running(Worker(self.c, handle, queues=[self.queue], on_finish=lambda j, e: outcome.append(e),
                           heartbeat_interval=0))
        try:
            eventually(lambda: self.c.job_status(jid) == "running", 20, "the worker took the job")
            # The sweep (every second) times the job out and retries it:
            # this test takes its second attempt.
            second = []
            eventually(lambda: bool(second.extend(self.c.take(self.queue, worker="other")) or second), 30,
                       "the second attempt taken")
            self.assertEqual((second[0].id, second[0].attempt), (jid, 2))
            retaken.set()
            eventually(lambda: len(outcome) == 1, 30, "the stale report")
        finally:
            r.stop()
        self.assertIsInstance(outcome[0], JobLost)
        self.assertIsInstance(outcome[0].__cause__, StaleAttempt)
        self.assertEqual(outcome[0].__cause__.status, 409)
        j = self.c.get_job(jid, ["status", "attempt", "output", "worker"])
        self.assertEqual((j.status, j.attempt, j.output, j.worker), ("running", 2, None, "other"))
        # A stale call of the test's own kind, for good measure.
        with self.assertRaises(StaleAttempt):
            self.c.complete(jid, 1, "late")
        self.c.complete(jid, 2, "on time")
        self.assertEqual(self.c.job_output(jid), "on time")

    def test_heartbeats_keep_a_long_job(self) -> None:
        self.c.put_queue(self.queue, timeout="1m", heartbeat_timeout="1s")
        jid = self.c.create_job(self.queue, None).id
        beats: list[float] = []
        real = self.c.heartbeat

        def counting(id, attempt=None):
            beats.append(time.monotonic())
            return real(id, attempt=attempt)

        self.c.heartbeat = counting  # type: ignore[method-assign]
        done: list = []

        def handle(job):
            time.sleep(3)  # three heartbeat_timeouts
            return "alive"

        r = Running(Worker(self.c, handle, queues=[self.queue], on_finish=lambda j, e: done.append(e)))
        try:
            eventually(lambda: bool(done), 30, "the long job finished")
        finally:
            r.stop()
        self.assertEqual(done, [None])
        self.assertEqual(self.c.get_job(jid).status, "completed")
        # Every third of a second from 1/3 s to 3 s: about 8 (one a
        # second would be 3), never a heartbeat_timeout apart.
        self.assertGreaterEqual(len(beats), 5, beats)
        gaps = [b - a for a, b in zip(beats, beats[1:])]
        self.assertLess(max(gaps), 1.0, gaps)

    def test_a_lost_job_is_signalled_to_the_handler(self) -> None:
        self.c.put_queue(self.queue, timeout="1m", heartbeat_timeout="1s")
        jid = self.c.create_job(self.queue, None).id
        saw_lost = threading.Event()
        outcome: list = []

        def handle(job):
            if job.lost.wait(30):
                saw_lost.set()
            return "dropped"

        r = Running(Worker(self.c, handle, queues=[self.queue], on_finish=lambda j, e: outcome.append(e)))
        try:
            eventually(lambda: self.c.job_status(jid) == "running", 20, "taken")
            self.c.cancel(jid)
            eventually(lambda: bool(outcome), 30, "the handler ended")
        finally:
            r.stop()
        self.assertTrue(saw_lost.is_set())
        self.assertIsInstance(outcome[0], JobLost)
        j = self.c.get_job(jid, ["status", "output"])
        self.assertEqual((j.status, j.output), ("cancelled", None))

    def test_stop_finishes_running_jobs(self) -> None:
        self.c.put_queue(self.queue, timeout="1m")
        jid = self.c.create_job(self.queue, None).id
        started, release = threading.Event(), threading.Event()
        outcome: list = []

        def handle(job):
            started.set()
            release.wait(10)
            return "finished"

        r = Running(Worker(self.c, handle, queues=[self.queue], shutdown_grace=20,
                           on_finish=lambda j, e: outcome.append(e)))
        self.assertTrue(started.wait(20))
        self.w_stop = threading.Thread(target=r.stop)
        self.w_stop.start()
        time.sleep(0.2)  # the stop is under way while the handler runs
        self.assertTrue(r.t.is_alive(), "run returned before its handler")
        release.set()
        self.w_stop.join(30)
        self.assertFalse(r.t.is_alive())
        self.assertEqual(outcome, [None])
        self.assertEqual(self.c.get_job(jid, ["status", "output"]).output, "finished")
        # The job that arrived after stop was not taken.
        later = self.c.create_job(self.queue, None).id
        self.assertEqual(self.c.job_status(later), "queued")


    def test_several_queues(self) -> None:
        first, second = self.queue + "-1", self.queue + "-2"
        for q in (first, second):
            self.c.put_queue(q)
        ids = {q: self.c.create_jobs(q, [{"input": i} for i in range(5)]) for q in (first, second)}
        finished: list = []

        def handle(job):
            job.set_output("working")  # fenced by the job's attempt
            self.assertEqual(self.c.job_output(job.id), "working")
            return {"queue": job.queue}

        for order in ("ordered", "round_robin"):
            with self.subTest(order):
                finished.clear()
                if order == "round_robin":
                    ids = {q: self.c.create_jobs(q, [{"input": i} for i in range(5)]) for q in (first, second)}
                r = Running(Worker(self.c, handle, queues=[first, second], order=order, concurrency=3,
                                   on_finish=lambda j, e: finished.append((j.id, e))))
                try:
                    eventually(lambda: len(finished) == 10, 30, "10 jobs finished")
                finally:
                    r.stop()
                self.assertTrue(all(e is None for _, e in finished), finished)
                for q in (first, second):
                    for i in ids[q]:
                        self.assertEqual(self.c.get_job(i, ["output"]).output, {"queue": q})


class SigtermTest(unittest.TestCase):
    """A worker process and SIGTERM."""

    def setUp(self) -> None:
        self.c = Client(srv.url)
        self.queue = self.id().rsplit(".", 1)[-1].replace("_", "-")
        self.c.put_queue(self.queue, timeout="1m", retries=2)

    def spawn(self, secs: float, grace: float) -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, str(HERE / "worker_proc.py"), srv.url, self.queue, str(secs), str(grace)],
                             stdout=subprocess.PIPE, text=True)
        self.addCleanup(p.stdout.close)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        self.assertEqual(p.stdout.readline().strip(), "ready")
        return p

    def read_until(self, p: subprocess.Popen, prefix: str) -> str:
        lines = []
        timer = threading.Timer(60, p.kill)
        timer.start()
        try:
            for line in p.stdout:
                lines.append(line.strip())
                if line.startswith(prefix):
                    return line.strip()
        finally:
            timer.cancel()
        raise AssertionError(f"no {prefix!r} line; output: {lines}")

    def test_sigterm_lets_a_running_job_finish(self) -> None:
        p = self.spawn(secs=1.5, grace=30)
        jid = self.c.create_job(self.queue, None).id
        self.assertEqual(self.read_until(p, "started"), f"started {jid}")
        p.send_signal(signal.SIGTERM)
        self.assertEqual(self.read_until(p, "finished"), f"finished {jid} ok")
        self.assertEqual(self.read_until(p, "exited"), "exited")
        self.assertEqual(p.wait(30), 0)
        j = self.c.get_job(jid, ["status", "output"])
        self.assertEqual((j.status, j.output), ("completed", {"slept": 1.5}))

    def test_sigterm_releases_a_job_past_the_grace(self) -> None:
        p = self.spawn(secs=120, grace=0.5)
        jid = self.c.create_job(self.queue, None).id
        self.assertEqual(self.read_until(p, "started"), f"started {jid}")
        signalled = time.monotonic()
        p.send_signal(signal.SIGTERM)
        self.assertEqual(self.read_until(p, "finished"), f"finished {jid} JobLost")
        self.assertEqual(p.wait(30), 0)
        self.assertLess(time.monotonic() - signalled, 10, "the release waited for the handler")
        j = self.c.get_job(jid, ["status", "history", "retries_attempted"])
        # Released with a retry due at once: queued again (or failed until
        # the retry sweep moves it, at most a second later).
        self.assertIn(j.status, ("queued", "failed"))
        self.assertEqual(j.history[-1].error.group, "worker_shutdown")
        eventually(lambda: self.c.job_status(jid) == "queued" or bool(self.c.take(self.queue)), 10, "the job taken again")

    def test_sigterm_cuts_an_idle_long_poll_short(self) -> None:
        p = self.spawn(secs=0, grace=5)
        time.sleep(0.5)  # the worker is in its 20s long poll
        signalled = time.monotonic()
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(15), 0)
        self.assertLess(time.monotonic() - signalled, 5)


if __name__ == "__main__":
    unittest.main()
