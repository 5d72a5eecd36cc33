"""A typed client of every route of an ocyless server."""

from __future__ import annotations

import dataclasses
import http.client
import json
import random
import socket
import ssl
import threading
import time
from datetime import date, datetime, timedelta
from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence, Union
from urllib.parse import quote, urlencode, urlsplit

from ._duration import format_duration, format_time, seconds
from .errors import DecodeError, TransportError, Unavailable, error_for
from .types import (
    JSON, MAX_WAIT, BatchResult, BatchTakeResult, Created, FailurePage, Info, Job, JobError, JobPage,
    QueueJobIDs, QueueSettings, QueueStats, RetryResult, Schedule, TakenJob, UpdateResult, WaitResult, Worker,
    WorkerJobs,
)

DurationLike = Union[timedelta, int, float, str]
"""A duration: a timedelta, seconds as a number, or the server's grammar ("1h 30m")."""

DEFAULT_USER_AGENT = "ocyless-python-client"

_UNSET: Any = object()

# Keys whose values are durations, and lists of durations, in request bodies.
_DURATION_KEYS = frozenset({"timeout", "heartbeat_timeout", "expires_after", "delay", "retry_in", "every",
                            "min", "max", "wait"})
_USER_JSON = frozenset({"input", "output"})


@dataclasses.dataclass
class JobSpec:
    """A create body (POST /queue/{name}/job): None fields are left out, so
    the job takes its queue's settings and the server's defaults. extra
    holds keys this client does not know, sent as they are."""
    input: JSON = None
    tags: Optional[list[str]] = None
    timeout: Optional[DurationLike] = None
    heartbeat_timeout: Optional[DurationLike] = None
    expires_after: Optional[DurationLike] = None
    retries: Optional[int] = None
    retry_delays: Optional[list[DurationLike]] = None
    priority: Optional[int] = None
    run_at: Optional[datetime] = None
    delay: Optional[DurationLike] = None
    key: Optional[str] = None
    on_conflict: Optional[str] = None  # "keep" (the server's default), "update" or "error"
    update_run_at: Optional[str] = None  # "always", "if_later", "if_earlier", "never"
    depends_on: Optional[list[int]] = None
    retry_backoff: Any = None  # a types.Backoff or its wire dict
    timeout_retries: Optional[int] = None
    tracked: Optional[bool] = None
    extra: dict = dataclasses.field(default_factory=dict)


_SPEC_FIELDS = frozenset(f.name for f in dataclasses.fields(JobSpec)) - {"input", "extra"}


def _wire(value: Any, key: Optional[str] = None) -> Any:
    """A request value in the server's JSON: durations in its grammar, times
    RFC 3339, dataclasses as objects without their None fields. Job input
    and output pass untouched."""
    if key in _USER_JSON:
        return value
    if isinstance(value, timedelta):
        return format_duration(value)
    if isinstance(value, datetime):
        return format_time(value)
    if key in _DURATION_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool):
        return format_duration(value)
    if key == "retry_delays" and isinstance(value, (list, tuple)):
        return [format_duration(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if f.name == "extra" and isinstance(v, dict):
                out.update({k: _wire(x, k) for k, x in v.items()})
            elif v is not None:
                out[f.name] = _wire(v, f.name)
        return out
    if isinstance(value, Mapping):
        return {k: _wire(v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_wire(v) for v in value]
    return value


def _spec(spec: Union[JobSpec, Mapping[str, Any]]) -> dict:
    if isinstance(spec, JobSpec):
        return _wire(spec)
    return {k: _wire(v, k) for k, v in spec.items() if v is not None or k in _USER_JSON}


def _given(**kw: Any) -> dict:
    """The keyword arguments that were given (not None)."""
    return {k: v for k, v in kw.items() if v is not None}


class Cancel:
    """Cuts short a call in flight from another thread (a long-poll take at
    shutdown): cancel() closes its connection, and the call raises
    TransportError (a take cut short may have handed a job to nobody; that
    job times out and is retried by its policy). Once cancelled, calls
    given it fail at once."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._conn: Optional[http.client.HTTPConnection] = None
        self.cancelled = False

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            conn = self._conn
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _attach(self, conn: Optional[http.client.HTTPConnection]) -> bool:
        with self._lock:
            self._conn = conn
            return not self.cancelled


class _Response:
    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: Any, body: bytes):
        self.status, self.headers, self.body = status, headers, body


class Client:
    """Calls an ocyless server (or any server of Ocypod 0.8's API with
    ocyless's extensions). One method per route; safe to share between
    threads.

    Errors: a refused request raises an APIError subclass of its status
    (NotFound, Conflict, StaleAttempt, BadRequest, Unavailable...); a
    request that got no answer raises TransportError.

    Retries, as the Go client: a call is sent again (``retries`` times,
    after a jittered exponential backoff from ``backoff`` seconds) after a
    429 whatever the call, and after a 502, 503, 504 or a failed
    connection only for calls that repeating cannot change further: reads,
    PUT of a queue, schedule, heartbeat or output, PATCH of a queue, batch
    heartbeats. Creates, takes, job updates, deletes and retries are not
    sent again: a 503 may have been applied.
    """

    def __init__(self, base_url: str = "http://127.0.0.1:8023", *, timeout: float = 30.0, retries: int = 3,
                 backoff: float = 0.1, user_agent: str = DEFAULT_USER_AGENT,
                 headers: Optional[Mapping[str, str]] = None, ssl_context: Optional[ssl.SSLContext] = None):
        u = urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"ocyless: base URL {base_url!r}: want http:// or https:// and a host")
        if u.query or u.fragment:
            raise ValueError(f"ocyless: base URL {base_url!r}: no query or fragment allowed")
        if retries < 0 or backoff < 0 or timeout <= 0:
            raise ValueError("ocyless: negative retries or backoff, or a timeout that is not positive")
        self._scheme, self._host, self._port = u.scheme, u.hostname, u.port
        self._prefix = u.path.rstrip("/")
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self._headers = {"Accept": "application/json", "User-Agent": user_agent, **(headers or {})}
        self._ssl = ssl_context
        self.sleep = time.sleep  # tests replace it

    # -- transport ---------------------------------------------------------

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._scheme == "https":
            return http.client.HTTPSConnection(self._host, self._port, timeout=timeout,
                                               context=self._ssl or ssl.create_default_context())
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout)

    def _send(self, method: str, target: str, body: Optional[bytes], timeout: float,
              cancel: Optional[Cancel] = None) -> _Response:
        headers = dict(self._headers)
        if body is not None:
            headers["Content-Type"] = "application/json"
        conn = self._connection(timeout)
        try:
            if cancel is not None:
                conn.connect()
                if not cancel._attach(conn):
                    raise TransportError(f"ocyless: {method} {target}: cancelled")
            conn.request(method, target, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            return _Response(resp.status, resp.headers, data)
        except (OSError, http.client.HTTPException) as e:
            raise TransportError(f"ocyless: {method} {target}: {e!r}") from e
        finally:
            if cancel is not None:
                cancel._attach(None)
            conn.close()

    def _delay(self, attempt: int) -> float:
        d = self.backoff * (2 ** min(attempt, 5))
        return d / 2 + random.random() * d / 2 if d > 0 else 0.0

    def _do(self, method: str, path: str, query: Optional[Mapping[str, Any]] = None, body: Any = _UNSET, *,
            idempotent: bool = False, wait: float = 0.0, cancel: Optional[Cancel] = None) -> _Response:
        q = {k: v for k, v in (query or {}).items() if v is not None}
        where = path + ("?" + urlencode(q) if q else "")
        target = self._prefix + where
        data = None if body is _UNSET else (body if isinstance(body, bytes) else json.dumps(body).encode())
        attempt = 0
        while True:
            err: Optional[TransportError] = None
            resp: Optional[_Response] = None
            try:
                resp = self._send(method, target, data, self.timeout + wait, cancel)
            except TransportError as e:
                err = e
            retry, pause = self._retryable(resp, err, idempotent)
            if not retry or attempt >= self.retries or (cancel is not None and cancel.cancelled):
                if err is not None:
                    raise err
                assert resp is not None
                if 200 <= resp.status < 300:
                    return resp
                raise error_for(resp.status, resp.body.decode("utf-8", "replace"), method, where)
            self.sleep(max(pause, self._delay(attempt)))
            attempt += 1

    @staticmethod
    def _retryable(resp: Optional[_Response], err: Optional[Exception], idempotent: bool) -> tuple[bool, float]:
        if err is not None:
            return idempotent, 0.0
        assert resp is not None
        pause = 0.0
        try:
            pause = min(float(int(resp.headers.get("Retry-After", ""))), 60.0)
        except ValueError:
            pass
        if resp.status == 429:
            return True, pause
        if resp.status in (502, 503, 504):
            return idempotent, pause
        return False, 0.0

    @staticmethod
    def _json(resp: _Response, method: str, path: str) -> Any:
        try:
            return json.loads(resp.body)
        except ValueError as e:
            raise DecodeError(f"ocyless: {method} {path}: reading the answer {resp.body[:200]!r}: {e}") from e

    def _get(self, path: str, query: Optional[Mapping[str, Any]] = None) -> Any:
        return self._json(self._do("GET", path, query, idempotent=True), "GET", path)

    @staticmethod
    def _fields(fields: Optional[Iterable[str]]) -> Optional[str]:
        return ",".join(fields) if fields else None

    @staticmethod
    def _attempt(attempt: Optional[int]) -> dict:
        return {"attempt": attempt} if attempt else {}

    @staticmethod
    def _take_query(count: Optional[int], worker: Optional[str], wait: Optional[DurationLike]) -> dict:
        q: dict = {}
        if count:
            q["count"] = count
        if worker:
            q["worker"] = worker
        if wait:
            q["wait"] = format_duration(wait)
        return q

    @staticmethod
    def _taken(resp: _Response, method: str, path: str) -> list[TakenJob]:
        if resp.status == 204 or not resp.body.strip():
            return []
        v = Client._json(resp, method, path)
        items = [v] if isinstance(v, dict) else v
        try:
            return [TakenJob.from_wire(d) for d in items]
        except (KeyError, TypeError) as e:
            raise DecodeError(f"ocyless: {method} {path}: take object without id, attempt or queue: "
                              f"{resp.body[:200]!r}") from e

    # -- server ------------------------------------------------------------

    def health(self) -> None:
        """GET /health: returns when the server reaches its store; raises
        Unavailable with the server's reason otherwise."""
        try:
            self._do("GET", "/health", idempotent=True)
        except Unavailable as e:
            try:
                reason = json.loads(e.message).get("error")
            except (ValueError, AttributeError):
                reason = None
            if reason:
                raise Unavailable(e.status, reason, e.method, e.path) from None
            raise

    def version(self) -> str:
        """GET /info/version: the Ocypod API version, such as "0.8.0"."""
        return self._get("/info/version")

    def info(self) -> Info:
        """GET /info: the job counts of every queue and the global counters."""
        return Info.from_wire(self._get("/info"))

    def openapi(self) -> dict:
        """GET /openapi.json: the server's OpenAPI 3.1 document."""
        return self._get("/openapi.json")

    # -- queues ------------------------------------------------------------

    def list_queues(self) -> list[str]:
        """GET /queue: the queue names, sorted."""
        return self._get("/queue")

    def get_queue(self, name: str) -> QueueSettings:
        """GET /queue/{name}: a queue's settings (NotFound when missing)."""
        return QueueSettings.from_wire(self._get(f"/queue/{quote(name, safe='')}"))

    def put_queue(self, name: str, *, timeout: Optional[DurationLike] = None,
                  heartbeat_timeout: Optional[DurationLike] = None, expires_after: Optional[DurationLike] = None,
                  retries: Optional[int] = None, retry_delays: Optional[Sequence[DurationLike]] = None,
                  **settings: Any) -> bool:
        """PUT /queue/{name}: creates a queue or replaces its settings; True
        when it was created. A setting left None takes the server's default.
        Extension settings (concurrency=, rate_limit=...) go in settings."""
        body = _wire({**_given(timeout=timeout, heartbeat_timeout=heartbeat_timeout, expires_after=expires_after,
                               retries=retries, retry_delays=retry_delays), **settings})
        resp = self._do("PUT", f"/queue/{quote(name, safe='')}", body=body, idempotent=True)
        return resp.status == 201

    def patch_queue(self, name: str, **settings: Any) -> None:
        """PATCH /queue/{name}: merges the settings given (by their server
        names: retries=5, paused=True, rate_limit=RateLimit(2.5, 10)...); a
        setting given as None is removed (null)."""
        self._do("PATCH", f"/queue/{quote(name, safe='')}", body=_wire(settings), idempotent=True)

    def delete_queue(self, name: str) -> None:
        """DELETE /queue/{name}: the queue and its pending jobs. Not sent
        again after a 503."""
        self._do("DELETE", f"/queue/{quote(name, safe='')}")

    def queue_size(self, name: str) -> int:
        """GET /queue/{name}/size: the number of queued jobs."""
        return self._get(f"/queue/{quote(name, safe='')}/size")

    def queue_job_ids(self, name: str) -> QueueJobIDs:
        """GET /queue/{name}/job_ids: a queue's job ids by status."""
        return QueueJobIDs.from_wire(self._get(f"/queue/{quote(name, safe='')}/job_ids"))

    def queue_stats(self, name: str, day: Optional[date] = None) -> QueueStats:
        """GET /queue/{name}/stats: the counts and times of a UTC day
        (None: the server's today)."""
        q = {"date": day.isoformat()[:10]} if day else None
        return QueueStats.from_wire(self._get(f"/queue/{quote(name, safe='')}/stats", q))

    # -- jobs --------------------------------------------------------------

    def create_job(self, queue: str, input: JSON = None, *, tags: Optional[list[str]] = None,
                   timeout: Optional[DurationLike] = None, heartbeat_timeout: Optional[DurationLike] = None,
                   expires_after: Optional[DurationLike] = None, retries: Optional[int] = None,
                   retry_delays: Optional[Sequence[DurationLike]] = None, priority: Optional[int] = None,
                   run_at: Optional[datetime] = None, delay: Optional[DurationLike] = None,
                   key: Optional[str] = None, on_conflict: Optional[str] = None,
                   update_run_at: Optional[str] = None, depends_on: Optional[list[int]] = None,
                   retry_backoff: Any = None, timeout_retries: Optional[int] = None,
                   tracked: Optional[bool] = None, **extra: Any) -> Created:
        """POST /queue/{name}/job: creates a job. existing is True when a
        pending job held key (its id is answered). Not sent again after a
        503 (it may have been applied): give it a key to retry it yourself."""
        spec = JobSpec(input=input, tags=tags, timeout=timeout, heartbeat_timeout=heartbeat_timeout,
                       expires_after=expires_after, retries=retries,
                       retry_delays=list(retry_delays) if retry_delays is not None else None, priority=priority,
                       run_at=run_at, delay=delay, key=key, on_conflict=on_conflict, update_run_at=update_run_at,
                       depends_on=depends_on, retry_backoff=retry_backoff, timeout_retries=timeout_retries,
                       tracked=tracked, extra=extra)
        path = f"/queue/{quote(queue, safe='')}/job"
        resp = self._do("POST", path, body=_spec(spec))
        return Created(id=self._json(resp, "POST", path), existing=resp.status == 200)

    def create_jobs(self, queue: str, jobs: Sequence[Union[JobSpec, Mapping[str, Any]]]) -> list[int]:
        """POST /queue/{name}/jobs: 1 to 1000 jobs in one request, all or
        none; their ids in order."""
        path = f"/queue/{quote(queue, safe='')}/jobs"
        return self._json(self._do("POST", path, body=[_spec(j) for j in jobs]), "POST", path)

    def get_job(self, id: int, fields: Optional[Iterable[str]] = None) -> Job:
        """GET /job/{id}: a job, all its fields or those named."""
        return Job.from_wire(self._get(f"/job/{int(id)}", {"fields": self._fields(fields)}))

    def job_status(self, id: int) -> str:
        """GET /job/{id}/status."""
        return self._get(f"/job/{int(id)}/status")

    def job_output(self, id: int) -> JSON:
        """GET /job/{id}/output: the output, None when never set."""
        return self._get(f"/job/{int(id)}/output")

    def set_job_output(self, id: int, output: JSON, attempt: Optional[int] = None) -> None:
        """PUT /job/{id}/output: replaces a running job's output, fenced by
        attempt (StaleAttempt when the job was taken again since)."""
        self._do("PUT", f"/job/{int(id)}/output", self._attempt(attempt), body=output, idempotent=True)

    def heartbeat(self, id: int, attempt: Optional[int] = None) -> None:
        """PUT /job/{id}/heartbeat, fenced by attempt: StaleAttempt when
        taken again since, Conflict when not running, NotFound when deleted."""
        self._do("PUT", f"/job/{int(id)}/heartbeat", self._attempt(attempt), idempotent=True)

    def delete_job(self, id: int) -> None:
        """DELETE /job/{id}: a job in any state. Not sent again after a 503."""
        self._do("DELETE", f"/job/{int(id)}")

    def retry_job(self, id: int, *, run_at: Optional[datetime] = None,
                  delay: Optional[DurationLike] = None) -> RetryResult:
        """POST /job/{id}/retry: retries a running, failed, timed-out or
        cancelled job, counting against its retries."""
        body = _wire(_given(run_at=run_at, delay=delay))
        path = f"/job/{int(id)}/retry"
        d = self._json(self._do("POST", path, body=body if body else _UNSET), "POST", path)
        return RetryResult(status=d["status"], retries_attempted=d["retries_attempted"])

    def job_ids_by_tag(self, tag: str) -> list[int]:
        """GET /tag/{name}: the ids of the jobs carrying tag, ascending."""
        return self._get(f"/tag/{quote(tag, safe='')}")

    # -- waiting for a result ------------------------------------------------

    @staticmethod
    def _wait_query(wait: DurationLike, fields: Optional[Iterable[str]]) -> tuple[dict, float]:
        """?wait= (and fields=) of a wait, and the wait in seconds. A
        negative wait is no wait; a string goes as it is (the server checks
        it, as it checks the 20s bound)."""
        if isinstance(wait, str):
            secs = seconds(wait)
        else:
            secs = max(seconds(wait), 0.0)
            wait = format_duration(secs)
        return {"wait": wait, "fields": Client._fields(fields)}, secs

    def wait_job(self, id: int, wait: DurationLike, fields: Optional[Iterable[str]] = None, *,
                 cancel: Optional[Cancel] = None) -> Job:
        """GET /job/{id}?wait=: the job once it has ended for good, or when
        wait (at most 20s) is over, with the job as it is then: check
        job.ended (or the status) to tell the two apart. A failure that will
        be retried is not an ending. fields selects fields as get_job's do
        ("ended" among them when you name any). The request is held open up
        to wait: its timeout is the client's timeout plus wait. A missing
        job, or one deleted during the wait, raises NotFound; cancel cuts
        the wait short (TransportError)."""
        q, secs = self._wait_query(wait, fields)
        path = f"/job/{int(id)}"
        resp = self._do("GET", path, q, idempotent=True, wait=secs, cancel=cancel)
        return Job.from_wire(self._json(resp, "GET", path))

    def create_and_wait(self, queue: str, input: JSON = None, *, wait: DurationLike,
                        fields: Optional[Iterable[str]] = None, cancel: Optional[Cancel] = None,
                        **spec: Any) -> WaitResult:
        """POST /queue/{name}/job?wait=: creates a job (spec: create_job's
        keyword arguments, such as tags=, key=, priority=), then waits up to
        wait (at most 20s) for it to end for good: a remote call through the
        queue, answered by whichever worker takes the job. A failure that
        will be retried is not an ending. ended tells whether it ended
        within the wait; job then holds its id, status, output and error (or
        the fields named), else it is None and the job goes on: wait again
        with wait_job(result.id, ...). The request is held open up to wait:
        its timeout is the client's timeout plus wait. Like create_job, it
        is sent again after a 429 only. A bad wait raises BadRequest and
        creates nothing; a job deleted during the wait raises NotFound."""
        q, secs = self._wait_query(wait, fields)
        path = f"/queue/{quote(queue, safe='')}/job"
        known = {k: spec.pop(k) for k in list(spec) if k in _SPEC_FIELDS}
        body = _spec(JobSpec(input=input, **known, extra=spec))
        resp = self._do("POST", path, q, body=body, wait=secs, cancel=cancel)
        v = self._json(resp, "POST", path)
        if resp.status == 202:
            if not isinstance(v, int) or isinstance(v, bool):
                raise DecodeError(f"ocyless: POST {path}: want the job's id, got {resp.body[:200]!r}")
            return WaitResult(id=v, ended=False)
        if not isinstance(v, dict):
            raise DecodeError(f"ocyless: POST {path}: want the ended job, got {resp.body[:200]!r}")
        job = Job.from_wire(v)
        # The fields named may leave out the id: Location has it.
        loc = resp.headers.get("Location") or ""
        id_ = int(loc[5:]) if loc.startswith("/job/") and loc[5:].isdigit() else job.id
        if id_ is None:
            raise DecodeError(f"ocyless: POST {path}: an answer without the job's id")
        return WaitResult(id=id_, ended=True, job=job)

    # -- takes -------------------------------------------------------------

    def take(self, queue: str, *, count: int = 1, worker: Optional[str] = None,
             wait: Optional[DurationLike] = None, cancel: Optional[Cancel] = None) -> list[TakenJob]:
        """GET /queue/{name}/job: takes up to count jobs (1 to 100); [] when
        none was ready after wait (at most 20s). Not sent again after a 503
        (it may have handed a job to nobody: that job times out and is
        retried by its policy)."""
        self._check_wait(wait)
        path = f"/queue/{quote(queue, safe='')}/job"
        q = self._take_query(max(count, 1), worker, wait)
        return self._taken(self._do("GET", path, q, wait=seconds(wait or 0), cancel=cancel), "GET", path)

    def take_one(self, queue: str, *, worker: Optional[str] = None,
                 wait: Optional[DurationLike] = None) -> Optional[TakenJob]:
        """take of one job: None when none was ready."""
        jobs = self.take(queue, count=1, worker=worker, wait=wait)
        return jobs[0] if jobs else None

    def take_from(self, queues: Sequence[str], *, order: Optional[str] = None, count: int = 1,
                  worker: Optional[str] = None, wait: Optional[DurationLike] = None,
                  cancel: Optional[Cancel] = None) -> list[TakenJob]:
        """GET /job?queues=: takes from several queues, picking by order
        ("ordered", the server's default, or "round_robin")."""
        if not queues:
            raise ValueError("ocyless: take_from: no queue")
        self._check_wait(wait)
        q = {"queues": ",".join(queues), "order": order, **self._take_query(max(count, 1), worker, wait)}
        return self._taken(self._do("GET", "/job", q, wait=seconds(wait or 0), cancel=cancel), "GET", "/job")

    @staticmethod
    def _check_wait(wait: Optional[DurationLike]) -> None:
        if wait is not None and seconds(wait) > MAX_WAIT.total_seconds():
            raise ValueError(f"ocyless: wait {wait!r} is over the server's 20s")

    # -- updates -----------------------------------------------------------

    def update_job(self, id: int, *, attempt: Optional[int] = None, status: Optional[str] = None,
                   output: JSON = None, error: Union[JobError, Mapping[str, Any], None] = None,
                   retry: Optional[bool] = None, retry_at: Optional[datetime] = None,
                   retry_in: Optional[DurationLike] = None,
                   next: Union[JobSpec, Mapping[str, Any], None] = None, next_queue: Optional[str] = None,
                   priority: Optional[int] = None, run_at: Optional[datetime] = None,
                   delay: Optional[DurationLike] = None, depends_on: Optional[list[int]] = None,
                   tags: Optional[list[str]] = None, tracked: Optional[bool] = None,
                   take: Optional[str] = None, take_count: Optional[int] = None,
                   take_worker: Optional[str] = None, take_wait: Optional[DurationLike] = None,
                   **extra: Any) -> UpdateResult:
        """PATCH /job/{id}: a status change, output, the extended model's
        fields, and, with take=<queue>, a take in the same request. attempt
        fences it (StaleAttempt). next (with next_queue, or a "queue" key)
        creates a follow-up job with a completion. Never sent again after a
        503: a status change that was applied answers Conflict when
        repeated."""
        body = _given(status=status, output=output, retry_at=retry_at, retry_in=retry_in, priority=priority,
                      run_at=run_at, delay=delay, depends_on=depends_on, tags=tags, tracked=tracked)
        if error is not None:
            body["error"] = _wire(error)
        if retry is not None:
            body["retry"] = retry
        if next is not None:
            n = _spec(next)
            if next_queue is not None:
                n = {"queue": next_queue, **n}
            body["next"] = n
        body = {**_wire(body), **_wire(extra)}
        q = self._attempt(attempt)
        if take:
            self._check_wait(take_wait)
            q = {**q, "take": take, **self._take_query(take_count, take_worker, take_wait)}
        path = f"/job/{int(id)}"
        resp = self._do("PATCH", path, q, body=body, wait=seconds(take_wait or 0))
        r = UpdateResult()
        loc = resp.headers.get("Location") or ""
        if loc.startswith("/job/") and loc[5:].isdigit():
            r.next_id = int(loc[5:])
        if take:
            r.taken = self._taken(resp, "PATCH", path)
        return r

    def complete(self, id: int, attempt: Optional[int] = None, output: JSON = None) -> None:
        """Completes a running job with output (None: the output stays)."""
        self.update_job(id, attempt=attempt, status="completed", output=output)

    def complete_and_take(self, id: int, attempt: Optional[int], output: JSON, queue: str, *,
                          worker: Optional[str] = None, wait: Optional[DurationLike] = None) -> Optional[TakenJob]:
        """Completes a running job and takes the next one from queue in the
        same request; None when none was ready."""
        r = self.update_job(id, attempt=attempt, status="completed", output=output, take=queue,
                            take_worker=worker, take_wait=wait)
        return r.taken[0] if r.taken else None

    def fail(self, id: int, attempt: Optional[int] = None, *, message: Optional[str] = None,
             group: Optional[str] = None, permanent: bool = False, retry_at: Optional[datetime] = None,
             retry_in: Optional[DurationLike] = None) -> None:
        """Fails a running job: retried by its policy (or at retry_at /
        after retry_in) while retries are left, else failed for good in
        group. permanent fails it for good at once."""
        err = _given(group=group, message=message)
        self.update_job(id, attempt=attempt, status="failed", error=err or None,
                        retry=False if permanent else None, retry_at=retry_at, retry_in=retry_in)

    def cancel(self, id: int) -> None:
        """Cancels a job that is running, pending or failed."""
        self.update_job(id, status="cancelled")

    def requeue(self, id: int) -> None:
        """Puts a failed, timed-out or cancelled job back in its queue."""
        self.update_job(id, status="queued")

    # -- batches (PATCH /jobs, POST /jobs/heartbeat) -------------------------

    @staticmethod
    def _batch_items(items: Sequence[Mapping[str, Any]]) -> list[dict]:
        if not 1 <= len(items) <= 1000:
            raise ValueError("ocyless: a batch has 1 to 1000 items")
        out = []
        for it in items:
            d = _wire(dict(it))
            if not isinstance(d.get("id"), int) or isinstance(d.get("id"), bool):
                raise ValueError(f"ocyless: a batch item without an integer id: {it!r}")
            if d.get("attempt") is None:
                d.pop("attempt", None)
            out.append(d)
        return out

    def update_jobs(self, items: Sequence[Mapping[str, Any]]) -> list[BatchResult]:
        """PATCH /jobs: 1 to 1000 updates, each {"id", "attempt"?, <any
        update_job body field>}, applied one by one; their results in order
        (status 204 applied, 201 with next, or the single call's 4xx and
        sentence). Not sent again after a 503."""
        body = self._batch_items(items)
        resp = self._do("PATCH", "/jobs", body=body)
        return [BatchResult.from_wire(d) for d in self._json(resp, "PATCH", "/jobs")]

    def update_jobs_and_take(self, items: Sequence[Mapping[str, Any]], queue: str, *, count: int = 1,
                             worker: Optional[str] = None,
                             wait: Optional[DurationLike] = None) -> BatchTakeResult:
        """PATCH /jobs?take=<queue>: applies the batch, then takes up to
        count jobs from queue in the same request."""
        self._check_wait(wait)
        body = self._batch_items(items)
        q = {"take": queue, **self._take_query(max(count, 1), worker, wait)}
        resp = self._do("PATCH", "/jobs", q, body=body, wait=seconds(wait or 0))
        d = self._json(resp, "PATCH", "/jobs")
        return BatchTakeResult(results=[BatchResult.from_wire(x) for x in d.get("results") or []],
                               jobs=[TakenJob.from_wire(x) for x in d.get("jobs") or []])

    def heartbeat_jobs(self, items: Sequence[Union[tuple[int, Optional[int]], Mapping[str, Any]]]) -> list[BatchResult]:
        """POST /jobs/heartbeat: heartbeats of 1 to 1000 jobs, each (id,
        attempt) or {"id", "attempt"?}; their results in order."""
        norm = [it if isinstance(it, Mapping) else {"id": it[0], "attempt": it[1]} for it in items]
        body = self._batch_items(norm)
        resp = self._do("POST", "/jobs/heartbeat", body=body, idempotent=True)
        return [BatchResult.from_wire(d) for d in self._json(resp, "POST", "/jobs/heartbeat")]

    # -- listings ----------------------------------------------------------

    @staticmethod
    def _list_query(status: Optional[str], tag: Optional[str], key: Optional[str], worker: Optional[str],
                    tracked: Optional[bool], fields: Optional[Iterable[str]], limit: Optional[int],
                    cursor: Optional[str]) -> dict:
        return {"status": status, "tag": tag, "key": key, "worker": worker,
                "tracked": None if tracked is None else ("true" if tracked else "false"),
                "fields": Client._fields(fields), "limit": limit or None, "cursor": cursor or None}

    @staticmethod
    def _page(d: dict) -> JobPage:
        return JobPage(jobs=[Job.from_wire(j) for j in d.get("jobs") or []], next_cursor=d.get("next_cursor") or None)

    def list_jobs(self, *, status: Optional[str] = None, tag: Optional[str] = None, key: Optional[str] = None,
                  worker: Optional[str] = None, tracked: Optional[bool] = None,
                  fields: Optional[Iterable[str]] = None, limit: Optional[int] = None,
                  cursor: Optional[str] = None) -> JobPage:
        """GET /jobs: one page of the jobs of every queue."""
        return self._page(self._get("/jobs", self._list_query(status, tag, key, worker, tracked, fields, limit, cursor)))

    def list_queue_jobs(self, queue: str, *, status: Optional[str] = None, tag: Optional[str] = None,
                        key: Optional[str] = None, worker: Optional[str] = None, tracked: Optional[bool] = None,
                        fields: Optional[Iterable[str]] = None, limit: Optional[int] = None,
                        cursor: Optional[str] = None) -> JobPage:
        """GET /queue/{name}/jobs: one page of a queue's jobs."""
        q = self._list_query(status, tag, key, worker, tracked, fields, limit, cursor)
        return self._page(self._get(f"/queue/{quote(queue, safe='')}/jobs", q))

    def iter_jobs(self, queue: Optional[str] = None, **filters: Any) -> Iterator[Job]:
        """Every job list_jobs (queue None) or list_queue_jobs finds with
        filters, page after page."""
        cursor = filters.pop("cursor", None)
        while True:
            page = (self.list_jobs(cursor=cursor, **filters) if queue is None
                    else self.list_queue_jobs(queue, cursor=cursor, **filters))
            yield from page.jobs
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def failures(self) -> dict[str, int]:
        """GET /failures: the count of jobs failed for good by group."""
        return self._get("/failures")

    def failure_jobs(self, group: str, *, limit: Optional[int] = None, cursor: Optional[str] = None,
                     fields: Optional[Iterable[str]] = None) -> FailurePage:
        """GET /failures/{group}: one page of a failure group's jobs."""
        d = self._get(f"/failures/{quote(group, safe='')}",
                      {"limit": limit or None, "cursor": cursor or None, "fields": self._fields(fields)})
        return FailurePage(total=d.get("total", 0), jobs=[Job.from_wire(j) for j in d.get("jobs") or []],
                           next_cursor=d.get("next_cursor") or None)

    def retry_failures(self, group: str, *, limit: Optional[int] = None, queue: Optional[str] = None) -> int:
        """POST /failures/{group}/retry: requeues up to limit jobs of a
        group (into queue when given); how many. Not sent again after a 503."""
        path = f"/failures/{quote(group, safe='')}/retry"
        resp = self._do("POST", path, {"limit": limit or None}, body={"queue": queue} if queue else _UNSET)
        return self._json(resp, "POST", path)["retried"]

    # -- workers -----------------------------------------------------------

    def workers(self) -> list[Worker]:
        """GET /workers: the workers that took a job recently, most recent first."""
        from ._duration import parse_time
        return [Worker(name=w["name"], last_seen=parse_time(w["last_seen"]) if w.get("last_seen") else None,
                       running=w.get("running", 0), timed_out=w.get("timed_out", 0)) for w in self._get("/workers")]

    def worker_jobs(self, name: str) -> WorkerJobs:
        """GET /workers/{name}: a worker's running and timed-out job ids."""
        d = self._get(f"/workers/{quote(name, safe='')}")
        return WorkerJobs(running=d.get("running") or [], timed_out=d.get("timed_out") or [])

    # -- schedules ---------------------------------------------------------

    def _schedule_path(self, queue: str, id: str) -> str:
        return f"/queue/{quote(queue, safe='')}/schedules/{quote(id, safe='')}"

    def put_schedule(self, queue: str, id: str, *, job: Union[JobSpec, Mapping[str, Any], None] = None,
                     cron: Optional[str] = None, every: Optional[DurationLike] = None) -> bool:
        """PUT /queue/{name}/schedules/{id}: a recurring job, cron (5
        fields, UTC) or every; True when created."""
        body = {**_wire(_given(cron=cron, every=every)), "job": _spec(job if job is not None else {})}
        resp = self._do("PUT", self._schedule_path(queue, id), body=body, idempotent=True)
        return resp.status == 201

    def get_schedule(self, queue: str, id: str) -> Schedule:
        """GET /queue/{name}/schedules/{id}."""
        return Schedule.from_wire(self._get(self._schedule_path(queue, id)))

    def delete_schedule(self, queue: str, id: str) -> None:
        """DELETE /queue/{name}/schedules/{id}."""
        self._do("DELETE", self._schedule_path(queue, id))

    def list_schedules(self, queue: str) -> list[Schedule]:
        """GET /queue/{name}/schedules: a queue's schedules by id."""
        return [Schedule.from_wire(s) for s in self._get(f"/queue/{quote(queue, safe='')}/schedules")]


__all__ = ["Client", "Cancel", "JobSpec", "DurationLike", "DEFAULT_USER_AGENT"]
