"""Client and worker for ocyless, a job queue server with Ocypod 0.8's
HTTP/JSON API and an extended job model.

    from ocyless import Client, Worker
    client = Client("http://127.0.0.1:8023")
    client.put_queue("emails", timeout="10m", heartbeat_timeout="30s", retries=3)
    client.create_job("emails", {"to": "a@example.com"})
    Worker(client, send_email, queues=["emails"], concurrency=4).run()
"""

import logging as _logging

from ._duration import format_duration, parse_duration
from .client import DEFAULT_USER_AGENT, Cancel, Client, DurationLike, JobSpec
from .errors import (
    APIError, BadRequest, Conflict, DecodeError, Forbidden, NotFound, OcylessError, StaleAttempt, StorageFull,
    TooLarge, TransportError, Unavailable,
)
from .signature import SignatureError, sign, verify_signature
from .types import (
    MAX_WAIT, Attempt, Backoff, BatchResult, BatchTakeResult, Created, DurationStats, FailurePage, Info, Job,
    JobError, JobPage, QueueCounts, QueueJobIDs, QueueSettings, QueueStats, RateLimit, RetryResult, Schedule,
    Statistics, TakenJob, UpdateResult, WaitResult, WorkerJobs,
)
from .types import Worker as WorkerInfo
from .worker import (
    DEFAULT_GROUP, SHUTDOWN_GROUP, Failure, JobLost, Worker, WorkerJob,
)

__version__ = "0.1.0"

# The worker logs through logging.getLogger("ocyless.worker"); nothing is
# printed unless the application configures logging.
_logging.getLogger("ocyless").addHandler(_logging.NullHandler())

__all__ = [
    "Client", "Cancel", "JobSpec", "DurationLike", "DEFAULT_USER_AGENT", "format_duration", "parse_duration",
    "OcylessError", "APIError", "BadRequest", "Conflict", "DecodeError", "Forbidden", "NotFound", "StaleAttempt",
    "StorageFull", "TooLarge", "TransportError", "Unavailable",
    "SignatureError", "sign", "verify_signature",
    "MAX_WAIT", "Attempt", "Backoff", "BatchResult", "BatchTakeResult", "Created", "DurationStats", "FailurePage",
    "Info", "Job", "JobError", "JobPage", "QueueCounts", "QueueJobIDs", "QueueSettings", "QueueStats",
    "RateLimit", "RetryResult", "Schedule", "Statistics", "TakenJob", "UpdateResult", "WaitResult", "WorkerInfo",
    "WorkerJobs",
    "Worker", "WorkerJob", "Failure", "JobLost", "DEFAULT_GROUP", "SHUTDOWN_GROUP",
]
