"""The typed answers of the server. Field names are the server's JSON keys;
durations are timedelta, times datetime (UTC), job input and output plain
JSON values (dict, list, str, int, float, bool or None)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Optional

from ._duration import parse_duration, parse_time

JSON = Any
"""A JSON value as the json module reads it."""

# The statuses of a job.
QUEUED, RUNNING, COMPLETED, FAILED = "queued", "running", "completed", "failed"
CANCELLED, TIMED_OUT, SCHEDULED, WAITING = "cancelled", "timed_out", "scheduled", "waiting"

MAX_WAIT = timedelta(seconds=20)
"""The longest long-poll wait the server accepts."""


def _dur(v: Any) -> Optional[timedelta]:
    return None if v is None else parse_duration(v)


def _durs(v: Any) -> Optional[list[timedelta]]:
    return None if v is None else [parse_duration(x) for x in v]


def _time(v: Any) -> Optional[datetime]:
    return None if v is None else parse_time(v)


@dataclass
class RateLimit:
    """How fast a queue's jobs are taken."""
    per_second: float
    burst: int

    @classmethod
    def from_wire(cls, d: Optional[dict]) -> Optional["RateLimit"]:
        return None if d is None else cls(per_second=d.get("per_second", 0), burst=d.get("burst", 0))


@dataclass
class Backoff:
    """An exponential retry policy: the delay of retry n is
    min(max, min·factorⁿ⁻¹), with full jitter unless jitter is False."""
    min: timedelta
    max: timedelta
    factor: Optional[float] = None  # None: the server's 2
    jitter: bool = True

    @classmethod
    def from_wire(cls, d: Optional[dict]) -> Optional["Backoff"]:
        if d is None:
            return None
        return cls(min=parse_duration(d["min"]), max=parse_duration(d["max"]), factor=d.get("factor"),
                   jitter=d.get("jitter", True))


@dataclass
class JobError:
    """The error a worker reported with a failure: group names the failure
    group of a job failed for good; message is free text."""
    group: Optional[str] = None
    message: Optional[str] = None

    @classmethod
    def from_wire(cls, d: Optional[dict]) -> Optional["JobError"]:
        return None if d is None else cls(group=d.get("group") or None, message=d.get("message"))


@dataclass
class Attempt:
    """One entry of a job's history."""
    attempt: int
    worker: Optional[str]
    started_at: Optional[datetime]
    ended_at: Optional[datetime]
    status: str
    error: Optional[JobError]

    @classmethod
    def from_wire(cls, d: dict) -> "Attempt":
        return cls(attempt=d.get("attempt", 0), worker=d.get("worker"), started_at=_time(d.get("started_at")),
                   ended_at=_time(d.get("ended_at")), status=d.get("status", ""),
                   error=JobError.from_wire(d.get("error")))


@dataclass
class Job:
    """A job as GET /job/{id} shows it. With a field list, only the fields
    asked for are set; the others are None."""
    id: Optional[int] = None
    queue: Optional[str] = None
    status: Optional[str] = None
    tags: Optional[list[str]] = None
    created_at: Optional[datetime] = None
    started_at: Optional[datetime] = None
    ended_at: Optional[datetime] = None
    last_heartbeat: Optional[datetime] = None
    input: JSON = None
    output: JSON = None
    timeout: Optional[timedelta] = None
    heartbeat_timeout: Optional[timedelta] = None
    expires_after: Optional[timedelta] = None
    retries: Optional[int] = None
    retries_attempted: Optional[int] = None
    retry_delays: Optional[list[timedelta]] = None
    ended: Optional[bool] = None
    # The extended job model.
    priority: Optional[int] = None
    run_at: Optional[datetime] = None
    key: Optional[str] = None
    depends_on: Optional[list[int]] = None
    dependents: Optional[list[int]] = None
    retry_backoff: Optional[Backoff] = None
    timeout_retries: Optional[int] = None
    tracked: Optional[bool] = None
    attempt: Optional[int] = None
    worker: Optional[str] = None
    error: Optional[JobError] = None
    history: Optional[list[Attempt]] = None
    # Every key of the server's object, as it came (newer fields included).
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_wire(cls, d: dict) -> "Job":
        g = d.get
        return cls(
            id=g("id"), queue=g("queue"), status=g("status"), tags=g("tags"), created_at=_time(g("created_at")),
            started_at=_time(g("started_at")), ended_at=_time(g("ended_at")),
            last_heartbeat=_time(g("last_heartbeat")), input=g("input"), output=g("output"),
            timeout=_dur(g("timeout")), heartbeat_timeout=_dur(g("heartbeat_timeout")),
            expires_after=_dur(g("expires_after")), retries=g("retries"), retries_attempted=g("retries_attempted"),
            retry_delays=_durs(g("retry_delays")), ended=g("ended"), priority=g("priority"),
            run_at=_time(g("run_at")), key=g("key"), depends_on=g("depends_on"), dependents=g("dependents"),
            retry_backoff=Backoff.from_wire(g("retry_backoff")), timeout_retries=g("timeout_retries"),
            tracked=g("tracked"), attempt=g("attempt"), worker=g("worker"), error=JobError.from_wire(g("error")),
            history=None if g("history") is None else [Attempt.from_wire(a) for a in g("history")],
            raw=d,
        )


@dataclass
class QueueSettings:
    """A queue's settings as GET /queue/{name} shows them."""
    timeout: timedelta
    heartbeat_timeout: timedelta
    expires_after: timedelta
    retries: int
    retry_delays: list[timedelta]
    paused: bool = False
    concurrency: int = 0  # 0: no limit
    rate_limit: Optional[RateLimit] = None
    retry_backoff: Optional[Backoff] = None
    timeout_retries: Optional[int] = None
    dead_letter_queue: Optional[str] = None
    shards: int = 0
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_wire(cls, d: dict) -> "QueueSettings":
        g = d.get
        return cls(timeout=parse_duration(g("timeout", "0s")), heartbeat_timeout=parse_duration(g("heartbeat_timeout", "0s")),
                   expires_after=parse_duration(g("expires_after", "0s")), retries=g("retries", 0),
                   retry_delays=_durs(g("retry_delays")) or [], paused=bool(g("paused", False)),
                   concurrency=g("concurrency") or 0, rate_limit=RateLimit.from_wire(g("rate_limit")),
                   retry_backoff=Backoff.from_wire(g("retry_backoff")), timeout_retries=g("timeout_retries"),
                   dead_letter_queue=g("dead_letter_queue"), shards=g("shards") or 0, raw=d)


@dataclass
class Created:
    """The answer of a create: existing is True when a pending job of the
    queue held the create's key (id is that job's, and no job was added)."""
    id: int
    existing: bool


@dataclass
class WaitResult:
    """The answer of create_and_wait. id is the job's, also when it did not
    end within the wait. ended is True when it ended for good within the
    wait: job then holds its id, status, output and error (or the fields
    named). Otherwise job is None: wait again with wait_job, or look later."""
    id: int
    ended: bool
    job: Optional["Job"] = None


@dataclass
class TakenJob:
    """A job a take handed over: it is running, and attempt fences the
    worker's heartbeats and reports."""
    id: int
    input: JSON
    attempt: int
    queue: str

    @classmethod
    def from_wire(cls, d: dict) -> "TakenJob":
        return cls(id=d["id"], input=d.get("input"), attempt=d["attempt"], queue=d["queue"])


@dataclass
class UpdateResult:
    """The answer of update_job: next_id is the job a completion's `next`
    created; taken the jobs a `take` took (None without one)."""
    next_id: Optional[int] = None
    taken: Optional[list[TakenJob]] = None


@dataclass
class RetryResult:
    status: str
    retries_attempted: int


@dataclass
class QueueJobIDs:
    """A queue's job ids by status; queued ids in take order."""
    queued: list[int] = field(default_factory=list)
    running: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    completed: list[int] = field(default_factory=list)
    cancelled: list[int] = field(default_factory=list)
    timed_out: list[int] = field(default_factory=list)
    scheduled: list[int] = field(default_factory=list)
    waiting: list[int] = field(default_factory=list)

    @classmethod
    def from_wire(cls, d: dict) -> "QueueJobIDs":
        return cls(**{k: d.get(k) or [] for k in cls.__dataclass_fields__})


@dataclass
class JobPage:
    """One page of a listing; next_cursor is None on the last page."""
    jobs: list[Job]
    next_cursor: Optional[str]


@dataclass
class FailurePage:
    total: int
    jobs: list[Job]
    next_cursor: Optional[str]


@dataclass
class Worker:
    """A worker that took a job recently."""
    name: str
    last_seen: Optional[datetime]
    running: int
    timed_out: int


@dataclass
class WorkerJobs:
    running: list[int]
    timed_out: list[int]


@dataclass
class DurationStats:
    """A day's wait or run times, in seconds."""
    count: int
    mean: float
    variance: float
    histogram: list[int]


@dataclass
class QueueStats:
    created: int
    completed: int
    failed: int
    retries: int
    wait: DurationStats
    run: DurationStats

    @classmethod
    def from_wire(cls, d: dict) -> "QueueStats":
        def ds(x: Optional[dict]) -> DurationStats:
            x = x or {}
            return DurationStats(count=x.get("count", 0), mean=x.get("mean", 0.0), variance=x.get("variance", 0.0),
                                 histogram=x.get("histogram") or [])
        return cls(created=d.get("created", 0), completed=d.get("completed", 0), failed=d.get("failed", 0),
                   retries=d.get("retries", 0), wait=ds(d.get("wait")), run=ds(d.get("run")))


@dataclass
class Schedule:
    """A recurring job: cron (5 fields, UTC) or every, and the create body
    of the jobs it makes (as the server keeps it)."""
    id: str
    queue: str
    cron: Optional[str]
    every: Optional[timedelta]
    job: dict
    next_run: Optional[datetime]

    @classmethod
    def from_wire(cls, d: dict) -> "Schedule":
        return cls(id=d["id"], queue=d.get("queue", ""), cron=d.get("cron") or None, every=_dur(d.get("every")),
                   job=d.get("job") or {}, next_run=_time(d.get("next_run")))


@dataclass
class QueueCounts:
    queued: int = 0
    running: int = 0
    failed: int = 0
    completed: int = 0
    cancelled: int = 0
    timed_out: int = 0
    scheduled: int = 0
    waiting: int = 0


@dataclass
class Statistics:
    total_jobs_created: int = 0
    total_jobs_completed: int = 0
    total_jobs_retried: int = 0
    total_jobs_failed: int = 0
    total_jobs_timed_out: int = 0
    total_jobs_cancelled: int = 0


@dataclass
class Info:
    """GET /info: the job counts of every queue and the global counters."""
    queues: dict[str, QueueCounts]
    statistics: Statistics

    @classmethod
    def from_wire(cls, d: dict) -> "Info":
        def pick(klass: type, x: dict) -> Any:
            return klass(**{k: v for k, v in x.items() if k in klass.__dataclass_fields__})
        return cls(queues={k: pick(QueueCounts, v) for k, v in (d.get("queues") or {}).items()},
                   statistics=pick(Statistics, d.get("statistics") or {}))


@dataclass
class BatchResult:
    """One item's outcome in a batch (PATCH /jobs, POST /jobs/heartbeat):
    status 204 when applied (201 with `next`: its new id), else the 4xx the
    single call would give, with its sentence in error."""
    id: int
    status: int
    error: Optional[str] = None
    next: Optional[int] = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def stale(self) -> bool:
        return self.status == 409 and (self.error or "").endswith(" is not current")

    @classmethod
    def from_wire(cls, d: dict) -> "BatchResult":
        return cls(id=d["id"], status=d["status"], error=d.get("error"), next=d.get("next"))


@dataclass
class BatchTakeResult:
    """PATCH /jobs?take=: the batch's results and the jobs taken after it."""
    results: list[BatchResult]
    jobs: list[TakenJob]
