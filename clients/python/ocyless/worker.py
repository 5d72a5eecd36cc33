"""A worker: runs a callable on the jobs of one or more queues, with
threads.

    def handle(job):
        return {"double": 2 * job.input["n"]}

    Worker(client, handle, queues=["numbers"], concurrency=4).run()

Taking jobs: one long poll (GET /queue/{name}/job, or GET /job?queues= for
several queues, with wait and count) takes as many jobs as there are free
threads. A completion takes the next job of the same queue in the same
request (PATCH /job/{id}?take=): two requests per job instead of three.
With batch_reports=True, finished jobs are reported together, up to
batch_size at once (PATCH /jobs?take=<queue>&count=<n> takes as many new
jobs as were reported), and heartbeats go together (POST /jobs/heartbeat).

Heartbeats and fencing: every take names the worker, so the server answers
the job's attempt, and every heartbeat, output write and report carries it
(?attempt=n). A job that timed out and was taken again refuses the old
attempt's calls with 409 "Job <id> attempt <n> is not current": a slow
worker can never complete, fail or overwrite the newer attempt. Heartbeats
go every third of the job's heartbeat_timeout (read once the handler has
run 250ms) or every heartbeat_interval. A heartbeat refused (the job timed
out, was cancelled, deleted or taken again) sets job.lost, and the
handler's result is dropped.

Failures: an exception fails the job, retried by its policy while retries
are left, then failed for good in group "failed". Raise Failure to name the
group, fail for good at once (permanent=True) or set this retry's time.

Shutdown: stop(), SIGTERM or SIGINT (run() installs handlers when it runs
in the main thread) stop the taking at once (a long poll in flight is cut
short). Running handlers may finish and report within shutdown_grace; then
the jobs still running are released: failed in group "worker_shutdown" with
a retry due at once, so another worker takes them while retries are left,
and their job.lost is set (reason "shutdown").
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import signal
import socket
import threading
import time
import traceback
from datetime import datetime
from typing import Any, Callable, Optional, Sequence

from ._duration import seconds
from .client import Cancel, Client, DurationLike
from .errors import (
    APIError, BadRequest, Conflict, NotFound, StorageFull, TooLarge, TransportError, Unavailable,
)
from .types import MAX_WAIT, JSON, TakenJob

DEFAULT_GROUP = "failed"
"""The failure group of a job whose handler named none: the server's own."""

SHUTDOWN_GROUP = "worker_shutdown"
"""The failure group of a job released at shutdown (when it had no retry left)."""

MAX_MESSAGE = 64 << 10
"""The longest error message the server keeps, in bytes."""

_READ_HEARTBEAT_AFTER = 0.25
_REPORT_TIMEOUT = 30.0
_MAX_TAKE = 100

log = logging.getLogger("ocyless.worker")


class Failure(Exception):
    """Raised by a handler to fail its job with instructions: group names
    the failure group it joins if it fails for good; permanent fails it for
    good at once, whatever retries it has left; retry_in or retry_at set
    this retry's time instead of the policy's delay."""

    def __init__(self, message: str = "", *, group: Optional[str] = None, permanent: bool = False,
                 retry_in: Optional[DurationLike] = None, retry_at: Optional[datetime] = None):
        super().__init__(message)
        self.message, self.group, self.permanent = message, group, permanent
        self.retry_in, self.retry_at = retry_in, retry_at


class JobLost(Exception):
    """A job that is no longer this worker's: a heartbeat or report found it
    timed out, cancelled, deleted or taken again, or it was released at
    shutdown (reason "shutdown"). Its handler's result was dropped."""

    def __init__(self, message: str, reason: str = "lost"):
        super().__init__(message)
        self.reason = reason


class WorkerJob:
    """A job the worker took, handed to the handler."""

    def __init__(self, taken: TakenJob, client: Client):
        self.id: int = taken.id
        self.queue: str = taken.queue
        self.attempt: int = taken.attempt  # fences every call about this attempt
        self.input: JSON = taken.input
        self.client = client
        self.lost = threading.Event()  # set when the job is no longer this worker's
        self.lost_reason: Optional[str] = None  # "lost" or "shutdown"

    def set_output(self, output: JSON) -> None:
        """Replaces the job's output while it runs (progress), fenced by its
        attempt: StaleAttempt when the job was taken again since."""
        self.client.set_job_output(self.id, output, attempt=self.attempt)

    def heartbeat(self) -> None:
        """Sends a heartbeat now, fenced by the attempt (the worker sends
        them by itself; this is for a particular point of a handler)."""
        self.client.heartbeat(self.id, attempt=self.attempt)

    def _lose(self, reason: str) -> None:
        if self.lost_reason is None:
            self.lost_reason = reason
        self.lost.set()

    def __repr__(self) -> str:
        return f"WorkerJob(id={self.id}, queue={self.queue!r}, attempt={self.attempt})"


Handler = Callable[[WorkerJob], Any]


class _Task:
    """One job in the worker: who reports its outcome, and its heartbeats."""

    def __init__(self, job: WorkerJob):
        self.job = job
        self.started = time.monotonic()
        self.done = threading.Event()
        self.reported = threading.Event()
        self._claim = threading.Lock()
        self._claimed = False
        self.hb_interval: Optional[float] = None  # None: not known yet; 0: none
        self.hb_next = self.started + _READ_HEARTBEAT_AFTER

    def claim(self) -> bool:
        """Makes the caller the one that reports the outcome (the lane, or
        the release at shutdown)."""
        with self._claim:
            if self._claimed:
                return False
            self._claimed = True
            return True


def _default_name() -> str:
    host = socket.gethostname() or "worker"
    return f"{host}-{os.getpid()}-{secrets.token_hex(3)}"[-128:]


def _printable(s: Optional[str], most: int = 128) -> bool:
    return bool(s) and len(s) <= most and s.isprintable()  # type: ignore[union-attr]


def _message(exc: BaseException) -> str:
    if isinstance(exc, Failure):
        text = exc.message or (str(exc.__cause__) if exc.__cause__ else type(exc).__name__)
    else:
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        text = f"{text}\n\n{tb}"
    b = text.encode("utf-8", "replace")
    if len(b) > MAX_MESSAGE:
        text = b[:MAX_MESSAGE].decode("utf-8", "ignore")
    return text


class Worker:
    """Takes jobs of queues and runs handler(job) on each, in up to
    concurrency threads. The handler's return value completes the job (None
    leaves its output); an exception fails it (see Failure).

    Options:
      queues: the queues to take from (several: order picks among them,
        "ordered" (the server's default) or "round_robin").
      name: the worker name recorded on its jobs (1 to 128 printable
        characters; default host-pid-random).
      wait: the long-poll wait of a take (at most 20s, the default).
      heartbeat_interval: seconds between heartbeats; None reads each job's
        heartbeat_timeout and sends one every third of it; 0 sends none.
      shutdown_grace: seconds running handlers may go on after stop().
      batch_reports: report finished jobs together (PATCH /jobs?take=),
        at most batch_size per request, waiting at most batch_linger
        seconds for more; heartbeats together (POST /jobs/heartbeat).
      on_finish(job, error): called once per job taken, after its outcome
        was reported: error None when it completed, else the handler's
        exception, a JobLost, or the report's error.
    """

    def __init__(self, client: Client, handler: Handler, *, queues: Sequence[str], concurrency: int = 1,
                 name: Optional[str] = None, order: Optional[str] = None, wait: DurationLike = MAX_WAIT,
                 heartbeat_interval: Optional[float] = None, shutdown_grace: float = 30.0,
                 error_backoff: float = 1.0, batch_reports: bool = False, batch_size: int = 100,
                 batch_linger: float = 0.02, on_finish: Optional[Callable[[WorkerJob, Optional[BaseException]], None]] = None,
                 logger: Optional[logging.Logger] = None):
        if not queues:
            raise ValueError("worker: no queue")
        if concurrency < 1 or shutdown_grace < 0 or error_backoff <= 0:
            raise ValueError("worker: concurrency must be at least 1, shutdown_grace and error_backoff not negative")
        if not 0 < seconds(wait) <= MAX_WAIT.total_seconds():
            raise ValueError("worker: wait must be above 0 and at most 20s")
        if not 1 <= batch_size <= 1000:
            raise ValueError("worker: batch_size must be 1 to 1000")
        self.client, self.handler = client, handler
        self.queues, self.order = list(queues), order
        self.concurrency = concurrency
        self.name = name or _default_name()
        if not _printable(self.name):
            raise ValueError(f"worker: name {self.name!r}: want 1 to 128 printable characters")
        self.wait, self.heartbeat_interval = wait, heartbeat_interval
        self.shutdown_grace, self.error_backoff = shutdown_grace, error_backoff
        self.batch_reports, self.batch_size, self.batch_linger = batch_reports, batch_size, batch_linger
        self.on_finish = on_finish
        self.log = logger or log
        self._stopping = threading.Event()
        self._closed = threading.Event()  # the shutdown is over: helper threads end
        self._cancel = Cancel()
        self._running_lock = threading.Lock()
        self._slots = threading.Semaphore(concurrency)
        self._tasks: set[_Task] = set()
        self._tasks_lock = threading.Condition()
        self._expired = False
        self._lanes = 0
        self._hb_wake = threading.Condition()
        self._reports: list[tuple[_Task, dict, threading.Event, list]] = []
        self._reports_cv = threading.Condition()

    # -- life cycle ----------------------------------------------------------

    def stop(self) -> None:
        """Stops taking jobs; run() then lets running handlers finish within
        shutdown_grace, releases the others and returns. Safe from any
        thread and from a signal handler."""
        self._stopping.set()
        self._cancel.cancel()
        with self._reports_cv:
            self._reports_cv.notify_all()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def run(self, install_signal_handlers: bool = True) -> None:
        """Takes jobs and runs the handler on them until stop() (or SIGTERM
        or SIGINT, when called in the main thread), then shuts down
        gracefully and returns."""
        if not self._running_lock.acquire(blocking=False):
            raise RuntimeError("worker: run is already running")
        previous: dict[int, Any] = {}
        try:
            if install_signal_handlers and threading.current_thread() is threading.main_thread():
                def on_signal(signum: int, frame: Any) -> None:
                    # A second signal gets the previous behaviour (a second
                    # Ctrl-C interrupts). stop() runs in a thread of its
                    # own: a signal handler must not wait for a lock the
                    # interrupted code may hold.
                    signal.signal(signum, previous.get(signum, signal.SIG_DFL))
                    threading.Thread(target=self.stop, name=f"{self.name}-stop", daemon=True).start()
                for sig in (signal.SIGTERM, signal.SIGINT):
                    previous[sig] = signal.signal(sig, on_signal)
            threads = [threading.Thread(target=self._heartbeats, name=f"{self.name}-heartbeats", daemon=True)]
            if self.batch_reports:
                threads.append(threading.Thread(target=self._reporter, name=f"{self.name}-reports", daemon=True))
            for t in threads:
                t.start()
            self._poll()
            self._shutdown()
            self._closed.set()
            with self._reports_cv:
                self._reports_cv.notify_all()
            with self._hb_wake:
                self._hb_wake.notify_all()
            for t in threads:
                t.join(timeout=_REPORT_TIMEOUT + 5)
        finally:
            for sig, h in previous.items():
                signal.signal(sig, h)
            # Ready for another run.
            self._stopping.clear()
            self._closed.clear()
            self._cancel = Cancel()
            self._expired = False
            self._running_lock.release()

    # -- taking --------------------------------------------------------------

    def _poll(self) -> None:
        backoff = self.error_backoff
        while not self._stopping.is_set():
            if not self._slots.acquire(timeout=0.1):
                continue
            n = 1
            while n < min(self.concurrency, _MAX_TAKE) and self._slots.acquire(blocking=False):
                n += 1
            jobs: list[TakenJob] = []
            err: Optional[BaseException] = None
            try:
                if self._stopping.is_set():
                    raise TransportError("stopping")
                if len(self.queues) == 1:
                    jobs = self.client.take(self.queues[0], count=n, worker=self.name, wait=self.wait,
                                            cancel=self._cancel)
                else:
                    jobs = self.client.take_from(self.queues, order=self.order, count=n, worker=self.name,
                                                 wait=self.wait, cancel=self._cancel)
            except Exception as e:  # noqa: BLE001 - any failure of a take is logged and retried
                err = e
            for _ in range(n - len(jobs)):
                self._slots.release()
            for tj in jobs:
                self._start(tj)
            if err is None:
                backoff = self.error_backoff
                continue
            if self._stopping.is_set():
                return
            self.log.error("take failed (queues %s): %s", self.queues, err)
            self._stopping.wait(backoff)
            backoff = min(backoff * 2, self.error_backoff * 32)

    def _take_queue(self) -> Optional[str]:
        """The queue a report may take the next job from in the same
        request: the only queue, or the first of ordered queues; None for
        round robin (only the long poll rotates fairly) and when stopping."""
        if self._stopping.is_set():
            return None
        if len(self.queues) == 1 or self.order != "round_robin":
            return self.queues[0]
        return None

    def _start(self, tj: TakenJob) -> None:
        with self._tasks_lock:
            self._lanes += 1
        threading.Thread(target=self._lane, args=(tj,), name=f"{self.name}-job-{tj.id}", daemon=True).start()

    def _lane(self, tj: Optional[TakenJob]) -> None:
        try:
            while tj is not None:
                tj = self._work(tj)
        finally:
            self._slots.release()
            with self._tasks_lock:
                self._lanes -= 1
                self._tasks_lock.notify_all()

    # -- one job -------------------------------------------------------------

    def _track(self, t: _Task) -> bool:
        with self._tasks_lock:
            if self._expired:
                return False
            self._tasks.add(t)
        with self._hb_wake:
            self._hb_wake.notify_all()
        return True

    def _untrack(self, t: _Task) -> None:
        with self._tasks_lock:
            self._tasks.discard(t)

    def _work(self, tj: TakenJob) -> Optional[TakenJob]:
        job = WorkerJob(tj, self.client)
        t = _Task(job)
        if not self._track(t):
            t.claim()
            job._lose("shutdown")
            self._release(t)
            return None
        try:
            output: Any = None
            error: Optional[BaseException] = None
            try:
                output = self.handler(job)
            except Exception as e:  # noqa: BLE001 - a handler's exception fails its job
                error = e
            t.done.set()
            if not t.claim():
                return None  # released at shutdown: the result is dropped
            try:
                if job.lost.is_set():
                    self.log.warning("job %d attempt %d lost: its result is dropped", job.id, job.attempt)
                    self._finished(job, JobLost(f"job {job.id} attempt {job.attempt} is no longer this worker's"))
                    return None
                if self.batch_reports:
                    return self._report_batched(t, output, error)
                nxt, rerr = self._report(t, output, error)
                if rerr is not None and error is not None and rerr.__context__ is None:
                    rerr.__context__ = error
                self._finished(job, rerr if rerr is not None else error)
                return nxt
            finally:
                t.reported.set()
        finally:
            t.done.set()
            self._untrack(t)

    def _finished(self, job: WorkerJob, err: Optional[BaseException]) -> None:
        if self.on_finish is not None:
            try:
                self.on_finish(job, err)
            except Exception:  # noqa: BLE001
                self.log.exception("on_finish raised")

    def _outcome(self, t: _Task, output: Any, error: Optional[BaseException]) -> dict:
        """The PATCH body of a job's outcome."""
        if error is None:
            try:
                json.dumps(output)
            except (TypeError, ValueError) as e:
                error = Failure(f"worker: the handler's output is not JSON: {e}")
            else:
                body: dict = {"status": "completed"}
                if output is not None:
                    body["output"] = output
                return body
        return self._failure(error)

    @staticmethod
    def _failure(error: BaseException) -> dict:
        # The group is always sent: an error without one is not kept in
        # the job's history once the job is retried.
        body: dict = {"status": "failed", "error": {"group": DEFAULT_GROUP, "message": _message(error)}}
        if isinstance(error, Failure):
            if _printable(error.group):
                body["error"]["group"] = error.group
            if error.permanent:
                body["retry"] = False
            elif error.retry_at is not None:
                body["retry_at"] = error.retry_at
            elif error.retry_in is not None:
                body["retry_in"] = error.retry_in
        return body

    def _report(self, t: _Task, output: Any, error: Optional[BaseException]) -> tuple[Optional[TakenJob], Optional[BaseException]]:
        body = self._outcome(t, output, error)
        job = t.job
        deadline = time.monotonic() + _REPORT_TIMEOUT
        try:
            if body["status"] == "completed":
                try:
                    res = self._send(t, body, deadline, take=self._take_queue())
                    return (res.taken[0] if res.taken else None), None
                except (BadRequest, TooLarge, StorageFull) as e:
                    # The server refused the output: the job cannot complete.
                    body = self._failure(Failure(f"worker: completing with the handler's output: {e}"))
            try:
                self._send(t, body, deadline)
            except BadRequest:
                # Something of the failure was refused (a retry time): the
                # failure itself must still be recorded.
                minimal = {"status": "failed"}
                if body.get("retry") is False:
                    minimal["retry"] = False
                self._send(t, minimal, deadline)
            if error is not None:
                self.log.warning("job %d attempt %d failed: %s", job.id, job.attempt,
                                 _message(error).splitlines()[0] if _message(error) else "")
            return None, None
        except (Conflict, NotFound) as e:
            self.log.warning("job %d attempt %d lost: its outcome was refused: %s", job.id, job.attempt, e)
            job._lose("lost")
            lost = JobLost(f"job {job.id} attempt {job.attempt}: {e}")
            lost.__cause__ = e
            return None, lost
        except Exception as e:  # noqa: BLE001
            self.log.error("reporting job %d attempt %d failed: %s", job.id, job.attempt, e)
            return None, e

    def _send(self, t: _Task, body: dict, deadline: float, take: Optional[str] = None):
        """Applies an update, again while the server is unavailable or
        unreachable. A repeat may find the first one applied: its 409 is
        then a success, once the job's history shows this attempt ended so.
        A repeat never takes a job (the first may have)."""
        delay, repeated = 0.1, False
        while True:
            try:
                return self.client.update_job(t.job.id, attempt=t.job.attempt, take=take, take_worker=self.name,
                                              **body)
            except Conflict as e:
                if repeated and not e.stale and self._applied(t, body["status"]):
                    from .types import UpdateResult
                    return UpdateResult()
                raise
            except (Unavailable, TransportError) as e:
                if time.monotonic() + delay > deadline:
                    raise
                self.log.warning("reporting job %d failed; trying again: %s", t.job.id, e)
            repeated, take = True, None
            time.sleep(delay)
            delay = min(delay * 2, 5.0)

    def _applied(self, t: _Task, status: str) -> bool:
        try:
            j = self.client.get_job(t.job.id, ["history"])
        except Exception:  # noqa: BLE001
            return False
        for a in j.history or []:
            if a.attempt == t.job.attempt:
                return a.status == status
        return False

    def _release(self, t: _Task) -> None:
        """Fails a job whose handler did not finish in time with a retry
        due at once, so another worker takes it while retries are left."""
        try:
            body = {"status": "failed", "retry_in": 0,
                    "error": {"group": SHUTDOWN_GROUP, "message": "worker: shut down before the handler finished"}}
            err: Optional[BaseException] = None
            try:
                self._send(t, body, time.monotonic() + _REPORT_TIMEOUT)
                self.log.warning("job %d attempt %d released: its handler did not finish within the shutdown grace",
                                 t.job.id, t.job.attempt)
            except Exception as e:  # noqa: BLE001
                err = e
                self.log.error("releasing job %d failed: %s", t.job.id, e)
            lost = JobLost(f"job {t.job.id} attempt {t.job.attempt} released at shutdown", "shutdown")
            if err is not None:
                lost.__cause__ = err
            self._finished(t.job, lost)
        finally:
            t.reported.set()

    # -- batched reports -----------------------------------------------------

    def _report_batched(self, t: _Task, output: Any, error: Optional[BaseException]) -> Optional[TakenJob]:
        """Hands the outcome to the reporter thread and waits until it was
        sent; this lane then goes on with a job the batch took, if any."""
        body = self._outcome(t, output, error)
        entry = {"task": t, "body": body, "done": threading.Event(), "err": None, "next": None}
        with self._reports_cv:
            self._reports.append(entry)
            self._reports_cv.notify_all()
        entry["done"].wait()
        rerr = entry["err"]
        if error is not None and rerr is None:
            self.log.warning("job %d attempt %d failed: %s", t.job.id, t.job.attempt, str(error).splitlines()[0] if str(error) else type(error).__name__)
        self._finished(t.job, rerr if rerr is not None else error)
        return entry["next"]

    def _reporter(self) -> None:
        while True:
            with self._reports_cv:
                while not self._reports:
                    if self._closed.is_set() or (self._stopping.is_set() and self._idle()):
                        return
                    self._reports_cv.wait(0.1)
                first = time.monotonic()
            # Linger a little for more outcomes to share the request.
            while True:
                with self._reports_cv:
                    if len(self._reports) >= self.batch_size or time.monotonic() - first >= self.batch_linger:
                        batch, self._reports = self._reports[:self.batch_size], self._reports[self.batch_size:]
                        break
                    self._reports_cv.wait(max(self.batch_linger - (time.monotonic() - first), 0.001))
            self._send_batch(batch, take=True)

    def _idle(self) -> bool:
        with self._tasks_lock:
            return self._lanes == 0

    def _send_batch(self, batch: list, take: bool) -> None:
        """Sends a batch of outcomes (PATCH /jobs, with ?take= for as many
        jobs as it reports), again while the server is unavailable."""
        items = [{"id": e["task"].job.id, "attempt": e["task"].job.attempt, **e["body"]} for e in batch]
        queue = self._take_queue() if take else None
        deadline = time.monotonic() + _REPORT_TIMEOUT
        delay, repeated = 0.1, False
        taken: list[TakenJob] = []
        while True:
            try:
                if queue is not None:
                    r = self.client.update_jobs_and_take(items, queue, count=len(items), worker=self.name)
                    results, taken = r.results, r.jobs
                else:
                    results = self.client.update_jobs(items)
                break
            except (Unavailable, TransportError) as e:
                if time.monotonic() + delay > deadline:
                    self._settle(batch, e)
                    return
                self.log.warning("reporting %d jobs failed; trying again: %s", len(items), e)
            except Exception as e:  # noqa: BLE001 - the whole batch was refused
                self.log.error("reporting %d jobs failed: %s", len(items), e)
                self._settle(batch, e)
                return
            repeated, queue = True, None
            time.sleep(delay)
            delay = min(delay * 2, 5.0)
        # Each job the batch took goes to a lane whose report was in it (a
        # lane goes on with it); count was the batch's size, so there are
        # enough lanes.
        for e, tj in zip(batch, taken):
            e["next"] = tj
        for tj in taken[len(batch):]:
            self._slots.acquire()
            self._start(tj)
        by_id = {r.id: r for r in results}
        again: list = []
        for e in batch:
            t, body = e["task"], e["body"]
            r = by_id.get(t.job.id)
            if r is None:
                e["err"] = APIError(0, "no result for the job in the batch's answer", "PATCH", "/jobs")
            elif r.ok:
                pass
            elif r.status == 409 and repeated and not r.stale and self._applied(t, body["status"]):
                pass
            elif r.status in (404, 409):
                self.log.warning("job %d attempt %d lost: its outcome was refused: %s",
                                 t.job.id, t.job.attempt, r.error)
                t.job._lose("lost")
                e["err"] = JobLost(f"job {t.job.id} attempt {t.job.attempt}: {r.status} {r.error}")
            elif r.status in (400, 413, 507) and body["status"] == "completed":
                # The server refused the output: the job cannot complete.
                e["body"] = self._failure(Failure(f"worker: completing with the handler's output: {r.error}"))
                again.append(e)
                continue
            elif r.status == 400 and body["status"] == "failed" and len(body) > 1:
                # Something of the failure was refused: record the failure.
                e["body"] = {"status": "failed", **({"retry": False} if body.get("retry") is False else {})}
                again.append(e)
                continue
            else:
                e["err"] = APIError(r.status, r.error or "", "PATCH", "/jobs")
            e["done"].set()
        if again:
            self._send_batch(again, take=False)

    @staticmethod
    def _settle(batch: list, err: BaseException) -> None:
        for e in batch:
            e["err"] = err
            e["done"].set()

    # -- heartbeats ----------------------------------------------------------

    def _heartbeats(self) -> None:
        """Sends the heartbeats of every running job when due (one request
        for all of them with batch_reports); reads a job's heartbeat_timeout
        once its handler has run 250ms."""
        while True:
            with self._tasks_lock:
                tasks = [t for t in self._tasks if not t.done.is_set() and not t.job.lost.is_set()]
                stop = self._closed.is_set() or (self._stopping.is_set() and self._lanes == 0)
            if stop:
                return
            now = time.monotonic()
            due = []
            for t in tasks:
                if now < t.hb_next:
                    continue
                if t.hb_interval is None:
                    if self.heartbeat_interval is not None:
                        t.hb_interval = max(float(self.heartbeat_interval), 0.0)
                        t.hb_next = t.started + t.hb_interval if t.hb_interval else float("inf")
                    else:
                        self._read_heartbeat_timeout(t)
                    continue
                if t.hb_interval > 0:
                    due.append(t)
                    t.hb_next = now + t.hb_interval
            if due:
                self._beat(due)
            with self._tasks_lock:
                nxt = min((t.hb_next for t in self._tasks if not t.done.is_set()), default=now + 0.1)
            with self._hb_wake:
                self._hb_wake.wait(min(max(nxt - time.monotonic(), 0.005), 0.1))

    def _read_heartbeat_timeout(self, t: _Task) -> None:
        try:
            j = self.client.get_job(t.job.id, ["heartbeat_timeout"])
        except NotFound:
            t.job._lose("lost")
            return
        except Exception as e:  # noqa: BLE001
            self.log.warning("reading job %d's heartbeat_timeout failed: %s", t.job.id, e)
            t.hb_next = time.monotonic() + 1.0
            return
        hb = j.heartbeat_timeout.total_seconds() if j.heartbeat_timeout else 0.0
        t.hb_interval = max(hb / 3, 0.001) if hb > 0 else 0.0
        t.hb_next = time.monotonic() + t.hb_interval if hb > 0 else float("inf")

    def _beat(self, due: list[_Task]) -> None:
        if self.batch_reports:
            try:
                results = self.client.heartbeat_jobs([(t.job.id, t.job.attempt) for t in due])
            except Exception as e:  # noqa: BLE001
                self.log.warning("heartbeats of %d jobs failed: %s", len(due), e)
                return
            by_id = {r.id: r for r in results}
            for t in due:
                r = by_id.get(t.job.id)
                if r is not None and r.status in (404, 409):
                    self.log.warning("heartbeat refused: job %d attempt %d is lost: %s", t.job.id, t.job.attempt, r.error)
                    t.job._lose("lost")
            return
        for t in due:
            if t.done.is_set():
                continue
            try:
                self.client.heartbeat(t.job.id, attempt=t.job.attempt)
            except (Conflict, NotFound) as e:
                self.log.warning("heartbeat refused: job %d attempt %d is lost: %s", t.job.id, t.job.attempt, e)
                t.job._lose("lost")
            except Exception as e:  # noqa: BLE001
                self.log.warning("heartbeat of job %d failed: %s", t.job.id, e)

    # -- shutdown ------------------------------------------------------------

    def _shutdown(self) -> None:
        """Waits for the lanes for up to shutdown_grace, then releases the
        jobs still running and waits for the reports under way."""
        deadline = time.monotonic() + self.shutdown_grace
        with self._tasks_lock:
            while self._lanes > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._tasks_lock.wait(left)
            if self._lanes == 0:
                return
            self._expired = True
            tasks = list(self._tasks)
        threads = []
        for t in tasks:
            if t.claim():
                t.job._lose("shutdown")
                th = threading.Thread(target=self._release, args=(t,), daemon=True)
                th.start()
                threads.append(th)
        for t in tasks:
            t.reported.wait(_REPORT_TIMEOUT + 5)
