"""Waiting for a result: wait_job (GET /job/{id}?wait=) and create_and_wait
(POST /queue/{name}/job?wait=), against the real server and the fake."""

from __future__ import annotations

import threading
import unittest
from typing import Any, Callable

from support import eventually
from fakeserver import Fake
from localserver import LocalServer

from ocyless import BadRequest, Cancel, Client, NotFound, TransportError, Unavailable, WaitResult

srv: LocalServer


def setUpModule() -> None:
    global srv
    srv = LocalServer().start()


def tearDownModule() -> None:
    srv.stop()


class Background:
    """Runs fn in a thread; result() joins it and returns its value or
    raises its exception."""

    def __init__(self, fn: Callable[[], Any]):
        self.value: Any = None
        self.error: BaseException | None = None

        def run() -> None:
            try:
                self.value = fn()
            except BaseException as e:  # noqa: BLE001 - handed to result()
                self.error = e
        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def result(self, timeout: float = 60.0) -> Any:
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise AssertionError(f"still running after {timeout}s")
        if self.error is not None:
            raise self.error
        return self.value


class WaitTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = Client(srv.url)
        self.q = self.id().rsplit(".", 1)[-1].replace("_", "-")

    def worker(self, queue: str, fn: Callable[[Any], Any]) -> Background:
        """A worker that takes one job of queue (waiting up to 8s) and
        completes it with fn(input)."""
        def run() -> int:
            j = self.c.take_one(queue, wait=8)
            if j is None:
                raise AssertionError("nothing taken")
            self.c.complete(j.id, j.attempt, fn(j.input))
            return j.id
        return Background(run)

    def test_create_and_wait(self) -> None:
        self.c.put_queue(self.q)
        w = self.worker(self.q, lambda x: {"sum": x[0] + x[1]})
        r = self.c.create_and_wait(self.q, [1, 2], wait=8, tags=["rpc"])
        self.assertEqual(w.result(), r.id)
        self.assertTrue(r.ended)
        assert r.job is not None
        self.assertEqual((r.job.id, r.job.status, r.job.output, r.job.error), (r.id, "completed", {"sum": 3}, None))
        self.assertEqual(self.c.get_job(r.id, ["tags"]).tags, ["rpc"])

        # Fields without the id: the id comes from Location.
        w = self.worker(self.q, lambda x: x * 2)
        r = self.c.create_and_wait(self.q, 21, wait=8, fields=["status", "output"])
        self.assertEqual(w.result(), r.id)
        assert r.job is not None
        self.assertEqual((r.ended, r.job.id, r.job.status, r.job.output), (True, None, "completed", 42))

    def test_create_and_wait_not_ended(self) -> None:
        self.c.put_queue(self.q)
        # Nobody takes from the queue: 202, the id alone after the wait.
        r = self.c.create_and_wait(self.q, "x", wait=0.3, fields=["status"])
        self.assertEqual(r, WaitResult(id=r.id, ended=False, job=None))
        self.assertEqual(self.c.get_job(r.id, ["status", "input"]).input, "x")
        # A negative wait is no wait.
        r2 = self.c.create_and_wait(self.q, "y", wait=-1)
        self.assertFalse(r2.ended)
        self.assertEqual(self.c.queue_size(self.q), 2)

        with self.assertRaises(BadRequest) as e:
            self.c.create_and_wait(self.q, "z", wait="21s")
        self.assertEqual(e.exception.message, "Invalid wait: must be at most 20s")
        with self.assertRaises(BadRequest):
            self.c.create_and_wait(self.q, "z", wait=21)
        self.assertEqual(self.c.queue_size(self.q), 2)  # a refused create creates nothing
        with self.assertRaises(NotFound):
            self.c.create_and_wait(self.q + "-none", None, wait=1)

    def test_wait_job(self) -> None:
        self.c.put_queue(self.q, retries=1, retry_delays=[])
        jid = self.c.create_job(self.q).id

        j = self.c.wait_job(jid, 0.3, ["status", "ended"])
        self.assertEqual((j.status, j.ended), ("queued", False))

        waiter = Background(lambda: self.c.wait_job(jid, 8, ["status", "retries_attempted", "ended"]))
        t = self.c.take_one(self.q)
        assert t is not None
        self.c.fail(jid, t.attempt)  # retried: not an ending
        t = self.c.take_one(self.q)
        assert t is not None
        self.c.fail(jid, t.attempt)  # failed for good
        j = waiter.result()
        self.assertEqual((j.status, j.retries_attempted, j.ended), ("failed", 1, True))

        # An ended job answers at once, all its fields without a list.
        j = self.c.wait_job(jid, 20)
        self.assertEqual((j.id, j.queue, j.status, j.ended), (jid, self.q, "failed", True))

        with self.assertRaises(NotFound) as e:
            self.c.wait_job(999999, 1)
        self.assertEqual(e.exception.message, "Job with ID 999999 does not exist")
        with self.assertRaises(BadRequest):
            self.c.wait_job(jid, "21s")

    def test_the_timeout_leaves_room_for_the_wait(self) -> None:
        # The request's timeout is the client's plus the wait: a wait
        # longer than the client's timeout gets its answer.
        c = Client(srv.url, timeout=0.5, retries=0)
        c.put_queue(self.q)
        jid = c.create_job(self.q).id
        self.assertEqual(c.wait_job(jid, 1.5, ["status"]).status, "queued")
        self.assertFalse(c.create_and_wait(self.q, None, wait=1.5).ended)

    def test_cancel(self) -> None:
        self.c.put_queue(self.q)
        jid = self.c.create_job(self.q).id
        cancel = Cancel()
        waiter = Background(lambda: self.c.wait_job(jid, 20, cancel=cancel))
        eventually(lambda: cancel._conn is not None, what="the wait's connection")  # in flight
        cancel.cancel()
        with self.assertRaises(TransportError):
            waiter.result(timeout=15)
        cancel = Cancel()
        cancel.cancel()
        with self.assertRaises(TransportError):
            self.c.create_and_wait(self.q, None, wait=20, cancel=cancel)
        self.assertEqual(self.c.queue_size(self.q), 1)  # a cancelled call sent nothing


class WaitWireTest(unittest.TestCase):
    """What goes on the wire, and the retry rules, against the fake."""

    def setUp(self) -> None:
        self.fake = Fake()
        self.addCleanup(self.fake.close)
        self.c = Client(self.fake.url, retries=3, backoff=0)
        self.c.sleep = lambda s: None

    def test_requests(self) -> None:
        self.fake.forced.append((200, '{"id": 7, "status": "running", "ended": false}'))
        j = self.c.wait_job(7, 2.5, ["status", "ended"])
        self.assertEqual((j.id, j.status, j.ended), (7, "running", False))
        self.assertEqual(self.fake.requests[-1][:2], ("GET", "/job/7?wait=2s+500ms&fields=status%2Cended"))
        self.fake.forced.append((200, '{"id": 7}'))
        self.c.wait_job(7, -3)
        self.assertEqual(self.fake.requests[-1][1], "/job/7?wait=0s")

        self.fake.forced.append((202, "8"))
        r = self.c.create_and_wait("q", {"a": 1}, wait="5s", key="k", retry_delays=[1])
        self.assertEqual(r, WaitResult(id=8, ended=False, job=None))
        self.assertEqual(self.fake.requests[-1], ("POST", "/queue/q/job?wait=5s",
                                                  {"input": {"a": 1}, "key": "k", "retry_delays": ["1s"]}))
        self.fake.forced.append((200, '{"id": 9, "status": "completed", "output": 1, "error": null}'))
        r = self.c.create_and_wait("q", wait=1)
        self.assertEqual((r.id, r.ended, r.job.status if r.job else None, r.job.output if r.job else None),
                         (9, True, "completed", 1))
        self.assertEqual(self.fake.requests[-1][2], {})

    def test_retries(self) -> None:
        # A wait is a read: sent again after a 503. A create is not.
        self.fake.forced += [(503, "x"), (200, '{"id": 1, "status": "completed", "ended": true}')]
        self.assertTrue(self.c.wait_job(1, 1).ended)
        self.assertEqual(len(self.fake.requests), 2)
        self.fake.forced.append((503, "x"))
        with self.assertRaises(Unavailable):
            self.c.create_and_wait("q", wait=1)
        self.assertEqual(len(self.fake.requests), 3)
        self.fake.forced += [(429, "slow down"), (202, "4")]
        self.assertEqual(self.c.create_and_wait("q", wait=1).id, 4)
        self.assertEqual(len(self.fake.requests), 5)


if __name__ == "__main__":
    unittest.main()
