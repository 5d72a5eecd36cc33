"""The client: typed answers from the real server, errors, retries,
encoding."""

from __future__ import annotations

import json
import socket
import unittest
from datetime import datetime, timedelta, timezone

import support  # noqa: F401
from fakeserver import Fake
from localserver import LocalServer

from ocyless import (
    APIError, Backoff, BadRequest, Client, Conflict, NotFound, RateLimit, StaleAttempt, TransportError,
    Unavailable, format_duration, parse_duration,
)
from ocyless.errors import error_for

srv: LocalServer


def setUpModule() -> None:
    global srv
    srv = LocalServer().start()


def tearDownModule() -> None:
    srv.stop()


class TypedAnswersTest(unittest.TestCase):
    """Each resource's life cycle, checking the typed values."""

    def setUp(self) -> None:
        self.c = Client(srv.url)
        self.q = self.id().rsplit(".", 1)[-1].replace("_", "-")

    def test_queue(self) -> None:
        self.assertTrue(self.c.put_queue(self.q, timeout=timedelta(minutes=10), heartbeat_timeout=30,
                                         expires_after="1h", retries=3, retry_delays=[10, "1m 30s"]))
        self.assertFalse(self.c.put_queue(self.q, timeout=600, retries=3))
        self.c.patch_queue(self.q, paused=True, concurrency=2, rate_limit=RateLimit(2.5, 10),
                           retry_backoff=Backoff(min=timedelta(seconds=1), max=60, factor=3, jitter=False),
                           timeout_retries=2)
        s = self.c.get_queue(self.q)
        self.assertEqual((s.timeout, s.heartbeat_timeout, s.expires_after), (timedelta(minutes=10), timedelta(0), timedelta(minutes=5)))
        self.assertEqual((s.retries, s.paused, s.concurrency, s.timeout_retries), (3, True, 2, 2))
        self.assertEqual(s.rate_limit, RateLimit(2.5, 10))
        self.assertEqual(s.retry_backoff, Backoff(min=timedelta(seconds=1), max=timedelta(minutes=1), factor=3, jitter=False))
        self.c.patch_queue(self.q, rate_limit=None, retry_backoff=None, timeout_retries=None, paused=False)
        s = self.c.get_queue(self.q)
        self.assertEqual((s.rate_limit, s.retry_backoff, s.timeout_retries, s.paused), (None, None, None, False))
        self.assertIn(self.q, self.c.list_queues())
        self.assertEqual(self.c.queue_size(self.q), 0)
        self.c.delete_queue(self.q)
        with self.assertRaises(NotFound) as e:
            self.c.get_queue(self.q)
        self.assertEqual(e.exception.message, f"Queue '{self.q}' does not exist")
        with self.assertRaises(NotFound) as e:
            self.c.delete_queue(self.q)
        self.assertEqual(e.exception.message, "")

    def test_job(self) -> None:
        self.c.put_queue(self.q, timeout="10m", retries=1)
        run_at = datetime.now(timezone.utc) + timedelta(hours=1)
        later = self.c.create_job(self.q, {"n": 1}, tags=["a", "b"], run_at=run_at, priority=5, key="k",
                                  retry_delays=[timedelta(seconds=5)], heartbeat_timeout=timedelta(seconds=20), tracked=True)
        self.assertFalse(later.existing)
        j = self.c.get_job(later.id)
        self.assertEqual((j.status, j.queue, j.tags, j.input, j.priority, j.key, j.tracked),
                         ("scheduled", self.q, ["a", "b"], {"n": 1}, 5, "k", True))
        self.assertEqual((j.timeout, j.heartbeat_timeout, j.retry_delays), (timedelta(minutes=10), timedelta(seconds=20), [timedelta(seconds=5)]))
        self.assertEqual(j.run_at.replace(microsecond=0), run_at.replace(microsecond=0))
        self.assertIsNotNone(j.created_at.tzinfo)
        self.assertEqual(j.raw["id"], later.id)
        again = self.c.create_job(self.q, {"n": 2}, key="k")
        self.assertEqual((again.id, again.existing), (later.id, True))
        with self.assertRaises(Conflict):
            self.c.create_job(self.q, None, key="k", on_conflict="error")
        with self.assertRaises(BadRequest) as e:
            self.c.create_job(self.q, None, priority=10**9)
        self.assertEqual(e.exception.status, 400)
        now = self.c.create_job(self.q, "now", delay=0).id
        dep = self.c.create_job(self.q, "after", depends_on=[now]).id
        self.assertEqual(self.c.job_status(dep), "waiting")
        self.assertEqual(self.c.job_ids_by_tag("a"), [later.id])
        ids = self.c.queue_job_ids(self.q)
        self.assertEqual((ids.queued, ids.scheduled, ids.waiting), ([now], [later.id], [dep]))
        t = self.c.take_one(self.q, worker="w", wait=1)
        self.assertEqual((t.id, t.attempt, t.input, t.queue), (now, 1, "now", self.q))
        self.c.heartbeat(now, attempt=1)
        self.c.set_job_output(now, [1, 2], attempt=1)
        self.assertEqual(self.c.job_output(now), [1, 2])
        r = self.c.update_job(now, attempt=1, status="completed", next={"input": "next"}, next_queue=self.q)
        self.assertIsNotNone(r.next_id)
        self.assertIsNone(r.taken)
        self.assertEqual(self.c.job_status(dep), "queued")
        got = self.c.take(self.q, count=10, worker="w")
        self.assertEqual(sorted(x.id for x in got), sorted([dep, r.next_id]))
        nxt = self.c.complete_and_take(dep, got[0].attempt if got[0].id == dep else got[1].attempt, "ok", self.q, worker="w")
        self.assertIsNone(nxt)
        self.c.fail(r.next_id, 1, message="m", group="g", retry_in=timedelta(hours=1))
        j = self.c.get_job(r.next_id, ["status", "run_at", "history", "error"])
        self.assertEqual(j.status, "failed")
        self.assertEqual(j.history[0].error.group, "g")
        res = self.c.retry_job(r.next_id, delay=timedelta(minutes=1))
        # The pending retry is replaced by this one, a minute from now.
        self.assertEqual((res.status, res.retries_attempted), ("scheduled", 1))
        self.c.cancel(r.next_id)
        self.c.requeue(r.next_id)
        # Requeued with its run_at (a minute away): scheduled.
        page = self.c.list_queue_jobs(self.q, status="scheduled", fields=["id"])
        self.assertEqual([x.id for x in page.jobs], [later.id, r.next_id])
        self.assertEqual(len(list(self.c.iter_jobs(self.q, limit=1))), 4)
        self.c.delete_job(r.next_id)
        with self.assertRaises(NotFound):
            self.c.get_job(r.next_id)

    def test_server(self) -> None:
        self.c.health()
        self.assertEqual(self.c.version(), "0.8.0")
        self.assertTrue(self.c.openapi()["openapi"].startswith("3.1"))
        self.c.put_queue(self.q)
        self.c.create_job(self.q, None)
        info = self.c.info()
        self.assertEqual(info.queues[self.q].queued, 1)
        self.assertGreaterEqual(info.statistics.total_jobs_created, 1)
        st = self.c.queue_stats(self.q)
        self.assertEqual(len(st.wait.histogram), 172)
        self.c.take(self.q, worker="typed-w")
        w = [w for w in self.c.workers() if w.name == "typed-w"][0]
        self.assertEqual(w.running, 1)
        self.assertIsNotNone(w.last_seen.tzinfo)
        self.assertEqual(len(self.c.worker_jobs("typed-w").running), 1)

    def test_schedule(self) -> None:
        self.c.put_queue(self.q)
        self.assertTrue(self.c.put_schedule(self.q, "s", every=timedelta(hours=2), job={"input": 1, "tags": ["x"]}))
        s = self.c.get_schedule(self.q, "s")
        self.assertEqual((s.id, s.queue, s.every, s.cron, s.job["input"]), ("s", self.q, timedelta(hours=2), None, 1))
        self.assertIsNotNone(s.next_run)
        self.assertFalse(self.c.put_schedule(self.q, "s", cron="*/5 * * * *"))
        self.assertEqual([x.cron for x in self.c.list_schedules(self.q)], ["*/5 * * * *"])
        self.c.delete_schedule(self.q, "s")
        with self.assertRaises(NotFound):
            self.c.get_schedule(self.q, "s")

    def test_failures(self) -> None:
        self.c.put_queue(self.q)
        jid = self.c.create_job(self.q, None).id
        self.c.take(self.q)
        group = self.q + "-g"
        self.c.fail(jid, 1, message="no", group=group, permanent=True)
        self.assertEqual(self.c.failures()[group], 1)
        p = self.c.failure_jobs(group)
        self.assertEqual((p.total, [j.id for j in p.jobs], p.jobs[0].error.message, p.next_cursor), (1, [jid], "no", None))
        self.assertEqual(self.c.retry_failures(group, limit=10), 1)
        self.assertEqual(self.c.job_status(jid), "queued")


class TransportTest(unittest.TestCase):
    """Retries and errors, against the fake server."""

    def setUp(self) -> None:
        self.fake = Fake()
        self.addCleanup(self.fake.close)
        self.slept: list[float] = []
        self.c = Client(self.fake.url, retries=3, backoff=0.1)
        self.c.sleep = self.slept.append
        self.fake.add("q", [1])

    def test_reads_are_retried_after_503(self) -> None:
        self.fake.forced += [(503, "x"), (502, "x")]
        self.assertEqual(self.c.get_job(1).status, "queued")
        self.assertEqual(len(self.fake.requests), 3)
        self.assertEqual(len(self.slept), 2)
        self.assertTrue(0.05 <= self.slept[0] <= 0.1 and 0.1 <= self.slept[1] <= 0.2, self.slept)

    def test_retries_give_up(self) -> None:
        self.fake.forced += [(503, '{"status":"unhealthy","error":"Failed to connect to Redis: timed out"}')] * 4
        with self.assertRaises(Unavailable) as e:
            self.c.health()
        self.assertEqual(e.exception.message, "Failed to connect to Redis: timed out")
        self.assertEqual(len(self.fake.requests), 4)

    def test_takes_and_updates_are_not_retried_after_503(self) -> None:
        for call in (lambda: self.c.take("q"), lambda: self.c.complete(1, 1), lambda: self.c.create_job("q", 1),
                     lambda: self.c.delete_job(1)):
            n = len(self.fake.requests)
            self.fake.forced.append((503, "x"))
            with self.assertRaises(Unavailable):
                call()
            self.assertEqual(len(self.fake.requests), n + 1)

    def test_429_is_retried_with_retry_after(self) -> None:
        self.fake.forced.append((429, "slow down"))
        self.assertEqual([j.id for j in self.c.take("q")], [1])
        self.assertEqual(len(self.fake.requests), 2)

    def test_refused_connection(self) -> None:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        c = Client(f"http://127.0.0.1:{port}", retries=2, backoff=0.01)
        c.sleep = self.slept.append
        with self.assertRaises(TransportError):
            c.version()
        self.assertEqual(len(self.slept), 2)  # a read: retried
        with self.assertRaises(TransportError):
            c.create_job("q", None)
        self.assertEqual(len(self.slept), 2)  # a create: not

    def test_base_url_prefix(self) -> None:
        c = Client(self.fake.url + "/prefix/")
        with self.assertRaises(APIError):
            c.get_job(1)
        self.assertEqual(self.fake.requests[-1][1], "/prefix/job/1")
        with self.assertRaises(ValueError):
            Client("ftp://x")
        with self.assertRaises(ValueError):
            Client("http://x/?q=1")

    def test_path_escaping(self) -> None:
        with self.assertRaises(APIError):
            self.c.get_queue("a/b c")
        self.assertEqual(self.fake.requests[-1][1], "/queue/a%2Fb%20c")


class EncodingTest(unittest.TestCase):
    def test_durations(self) -> None:
        for value, text in [(0, "0s"), (1.5, "1s 500ms"), (600, "10m"), (timedelta(hours=1, minutes=30), "1h 30m"),
                            (timedelta(days=3), "3days"), ("2h", "2h")]:
            self.assertEqual(format_duration(value), text)
        for text, value in [("10m", timedelta(minutes=10)), ("1h 30m", timedelta(minutes=90)), ("0s", timedelta(0)),
                            ("1s 500ms", timedelta(seconds=1.5)), ("1day 2h", timedelta(hours=26))]:
            self.assertEqual(parse_duration(text), value)
        with self.assertRaises(ValueError):
            format_duration(-1)
        with self.assertRaises(ValueError):
            parse_duration("5 parsecs")

    def test_errors(self) -> None:
        e = error_for(409, "Job 7 attempt 1 is not current", "PUT", "/job/7/heartbeat?attempt=1")
        self.assertIsInstance(e, StaleAttempt)
        self.assertIsInstance(e, Conflict)
        self.assertTrue(e.stale)
        self.assertEqual(str(e), "ocyless: PUT /job/7/heartbeat?attempt=1: 409 Conflict: Job 7 attempt 1 is not current")
        self.assertNotIsInstance(error_for(409, "Cannot change status from completed to queued", "PATCH", "/job/7"),
                                 StaleAttempt)
        for status in (502, 503, 504, 429):
            self.assertIsInstance(error_for(status, "", "GET", "/"), Unavailable)
        self.assertEqual(type(error_for(418, "", "GET", "/")), APIError)

    def test_bodies(self) -> None:
        fake = Fake()
        self.addCleanup(fake.close)
        c = Client(fake.url, retries=0)
        fake.forced += [(201, "1")] * 3
        c.create_job("q", {"a": 1}, timeout=timedelta(minutes=5), retry_delays=[1, 2], run_at=datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone.utc),
                     retry_backoff=Backoff(min=1, max=timedelta(hours=1)), custom_field={"x": 1})
        self.assertEqual(fake.requests[-1][2], {"input": {"a": 1}, "timeout": "5m", "retry_delays": ["1s", "2s"],
                                                "run_at": "2030-01-02T03:04:05Z",
                                                "retry_backoff": {"min": "1s", "max": "1h", "jitter": True},
                                                "custom_field": {"x": 1}})
        c.create_job("q", None)
        self.assertEqual(fake.requests[-1][2], {})
        fake.forced.append((204, ""))
        c.fail(3, 2, message="m", permanent=True)
        self.assertEqual(fake.requests[-1][1:], ("/job/3?attempt=2", {"status": "failed", "error": {"message": "m"}, "retry": False}))
        fake.forced.append((204, ""))
        c.set_job_output(3, None, attempt=1)
        self.assertEqual(fake.requests[-1][1:], ("/job/3/output?attempt=1", None))
        self.assertEqual(json.dumps(fake.requests[-1][2]), "null")


if __name__ == "__main__":
    unittest.main()
