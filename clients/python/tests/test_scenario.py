"""The cross-client scenario (clients/scenario/scenario.json) through the
Python client, against a fresh local server."""

from __future__ import annotations

import dataclasses
import json
import re
import unittest
from datetime import date, datetime, timedelta
from typing import Any, Callable

import support  # noqa: F401  (puts the package on sys.path)
from localserver import REPO, LocalServer

from ocyless import APIError, Client, format_duration
from ocyless._duration import parse_time

SCENARIO = REPO / "clients" / "scenario" / "scenario.json"


def to_json(v: Any) -> Any:
    """A typed answer as the scenario's JSON: the server's field names,
    durations in its grammar, times as strings."""
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: to_json(getattr(v, f.name)) for f in dataclasses.fields(v) if f.name != "raw"}
    if isinstance(v, timedelta):
        return format_duration(v)
    if isinstance(v, datetime):
        return v.isoformat()
    if isinstance(v, dict):
        return {k: to_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [to_json(x) for x in v]
    return v


class Args:
    """A step's arguments; every one must be used, so a runner never skips
    an argument it does not know."""

    def __init__(self, args: dict):
        self.args, self.used = dict(args), set()

    def get(self, k: str, default: Any = None) -> Any:
        self.used.add(k)
        return self.args.get(k, default)

    def req(self, k: str) -> Any:
        if k not in self.args:
            raise KeyError(f"argument {k!r} missing")
        return self.get(k)

    def check(self) -> None:
        extra = set(self.args) - self.used
        if extra:
            raise KeyError(f"unknown arguments {sorted(extra)}")


def _opt(a: Args, *names: str) -> dict:
    return {n: a.get(n) for n in names if a.args.get(n) is not None and a.get(n) is not None}


def run_op(c: Client, op: str, a: Args) -> Any:
    ops: dict[str, Callable[[], Any]] = {
        "health": lambda: c.health(),
        "version": lambda: c.version(),
        "openapi": lambda: c.openapi(),
        "info": lambda: c.info(),
        "list_queues": lambda: c.list_queues(),
        "put_queue": lambda: {"created": c.put_queue(a.req("queue"), **a.req("settings"))},
        "get_queue": lambda: c.get_queue(a.req("queue")),
        "patch_queue": lambda: c.patch_queue(a.req("queue"), **a.req("patch")),
        "delete_queue": lambda: c.delete_queue(a.req("queue")),
        "queue_size": lambda: c.queue_size(a.req("queue")),
        "queue_job_ids": lambda: c.queue_job_ids(a.req("queue")),
        "create_job": lambda: c.create_job(a.req("queue"), **a.req("job")),
        "create_jobs": lambda: c.create_jobs(a.req("queue"), a.req("jobs")),
        "get_job": lambda: c.get_job(a.req("id"), a.get("fields")),
        "wait_job": lambda: c.wait_job(a.req("id"), a.req("wait"), a.get("fields")),
        "create_and_wait": lambda: c.create_and_wait(a.req("queue"), wait=a.req("wait"), fields=a.get("fields"),
                                                     **a.req("job")),
        "job_status": lambda: c.job_status(a.req("id")),
        "job_output": lambda: c.job_output(a.req("id")),
        "set_job_output": lambda: c.set_job_output(a.req("id"), a.req("output"), attempt=a.get("attempt")),
        "heartbeat": lambda: c.heartbeat(a.req("id"), attempt=a.get("attempt")),
        "delete_job": lambda: c.delete_job(a.req("id")),
        "retry_job": lambda: c.retry_job(a.req("id"), run_at=_time(a.get("run_at")), delay=a.get("delay")),
        "job_ids_by_tag": lambda: c.job_ids_by_tag(a.req("tag")),
        "take": lambda: c.take(a.req("queue"), **_opt(a, "worker", "count", "wait")),
        "take_from": lambda: c.take_from(a.req("queues"), **_opt(a, "order", "worker", "count", "wait")),
        "update_job": lambda: _update(c, a),
        "complete": lambda: c.complete(a.req("id"), a.get("attempt"), a.req("output")),
        "fail": lambda: _fail(c, a),
        "cancel": lambda: c.cancel(a.req("id")),
        "requeue": lambda: c.requeue(a.req("id")),
        "list_jobs": lambda: c.list_jobs(**_opt(a, "status", "tag", "key", "worker", "tracked", "fields", "limit", "cursor")),
        "list_queue_jobs": lambda: c.list_queue_jobs(a.req("queue"), **_opt(
            a, "status", "tag", "key", "worker", "tracked", "fields", "limit", "cursor")),
        "failures": lambda: c.failures(),
        "failure_jobs": lambda: c.failure_jobs(a.req("group"), **_opt(a, "limit", "cursor", "fields")),
        "retry_failures": lambda: {"retried": c.retry_failures(a.req("group"), **_opt(a, "limit", "queue"))},
        "workers": lambda: c.workers(),
        "worker_jobs": lambda: c.worker_jobs(a.req("name")),
        "queue_stats": lambda: c.queue_stats(a.req("queue"), date.fromisoformat(a.get("date")) if a.get("date") else None),
        "put_schedule": lambda: {"created": c.put_schedule(a.req("queue"), a.req("id"), **a.req("schedule"))},
        "get_schedule": lambda: c.get_schedule(a.req("queue"), a.req("id")),
        "list_schedules": lambda: c.list_schedules(a.req("queue")),
        "delete_schedule": lambda: c.delete_schedule(a.req("queue"), a.req("id")),
        "update_jobs": lambda: c.update_jobs(a.req("items")),
        "update_jobs_and_take": lambda: c.update_jobs_and_take(a.req("items"), a.req("queue"),
                                                               **_opt(a, "worker", "count", "wait")),
        "heartbeat_jobs": lambda: c.heartbeat_jobs(a.req("items")),
    }
    if op not in ops:
        raise KeyError(f"unknown op {op!r}")
    result = ops[op]()
    a.check()
    return result


def _time(v: Any) -> Any:
    return parse_time(v) if isinstance(v, str) else v


def _update(c: Client, a: Args) -> Any:
    update = dict(a.req("update"))
    nxt = update.pop("next", None)
    kw: dict = {}
    if nxt is not None:
        nxt = dict(nxt)
        kw["next_queue"] = nxt.pop("queue")
        kw["next"] = nxt
    take = a.get("take")
    if take is not None:
        take = dict(take)
        kw["take"] = take.pop("queue")
        kw.update({f"take_{k}": v for k, v in take.items()})
    return c.update_job(a.req("id"), attempt=a.get("attempt"), **update, **kw)


def _fail(c: Client, a: Args) -> None:
    err = a.get("error") or {}
    c.fail(a.req("id"), a.get("attempt"), message=err.get("message"), group=err.get("group"),
           permanent=bool(a.get("no_retry")), retry_in=a.get("retry_in"), retry_at=_time(a.get("retry_at")))


_VAR = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


def substitute(v: Any, env: dict) -> Any:
    if isinstance(v, str):
        m = _VAR.fullmatch(v)
        if m:
            if m.group(1) not in env:
                raise KeyError(f"variable {m.group(1)} was never captured")
            return env[m.group(1)]

        def text(m: re.Match) -> str:
            if m.group(1) not in env:
                raise KeyError(f"variable {m.group(1)} was never captured")
            return str(env[m.group(1)])
        return _VAR.sub(text, v)
    if isinstance(v, dict):
        return {k: substitute(x, env) for k, x in v.items()}
    if isinstance(v, list):
        return [substitute(x, env) for x in v]
    return v


def mismatch(want: Any, got: Any, path: str = "$") -> str | None:
    """Where got does not match want (the scenario's rules), or None."""
    if want == "$any":
        return None
    if want == "$present":
        return None if got is not None else f"{path}: want a value, got null"
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{path}: want an object, got {json.dumps(got)}"
        for k, w in want.items():
            m = mismatch(w, got.get(k), f"{path}.{k}")
            if m:
                return m
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"{path}: want {json.dumps(want)}, got {json.dumps(got)}"
        for i, (w, g) in enumerate(zip(want, got)):
            m = mismatch(w, g, f"{path}[{i}]")
            if m:
                return m
        return None
    if isinstance(want, bool) or isinstance(got, bool):
        ok = want is got
    elif isinstance(want, (int, float)) and isinstance(got, (int, float)):
        ok = want == got
    else:
        ok = want == got
    return None if ok else f"{path}: want {json.dumps(want)}, got {json.dumps(got)}"


def pick(v: Any, path: str) -> Any:
    for part in path.split(".") if path else []:
        v = v[int(part)] if isinstance(v, list) else v[part]
    return v


def run_scenario(c: Client, steps: list[dict]) -> list[str]:
    """Runs the steps; the failures, one line each."""
    env: dict = {}
    failures = []
    for i, step in enumerate(steps):
        label = f"step {i} ({step['op']}: {step['name']})"
        try:
            args = Args(substitute(step.get("args", {}), env))
            err: APIError | None = None
            result: Any = None
            try:
                result = to_json(run_op(c, step["op"], args))
            except APIError as e:
                err = e
            if "error" in step:
                want = substitute(step["error"], env)
                if err is None:
                    failures.append(f"{label}: want error {want}, got {json.dumps(result)}")
                    continue
                if err.status != want["status"] or ("message" in want and err.message != want["message"]) \
                        or ("stale" in want and err.stale != want["stale"]):
                    failures.append(f"{label}: want error {want}, got {err.status} {err.message!r} stale={err.stale}")
                continue
            if err is not None:
                failures.append(f"{label}: unexpected error {err}")
                continue
            m = mismatch(substitute(step.get("expect"), env), result)
            if m:
                failures.append(f"{label}: {m}")
                continue
            for name, path in (step.get("capture") or {}).items():
                env[name] = pick(result, path)
        except Exception as e:  # noqa: BLE001 - a runner failure is the step's failure
            failures.append(f"{label}: {type(e).__name__}: {e}")
            break
    return failures


class RecordingClient(Client):
    """A client that records the method and path of each request."""

    def __init__(self, *a: Any, **kw: Any):
        super().__init__(*a, **kw)
        self.sent: list[str] = []

    def _send(self, method: str, target: str, *a: Any, **kw: Any) -> Any:
        self.sent.append(f"{method} {target.split('?')[0]}")
        return super()._send(method, target, *a, **kw)


def routes() -> list[tuple[str, str, str]]:
    """The server's route table (shared/httpapi/routes.go): name, method, pattern."""
    text = (REPO / "shared" / "httpapi" / "routes.go").read_text()
    found = re.findall(r'\{"([a-z-]+)", http\.Method(\w+), "([^"]+)"', text)
    assert len(found) > 30, found
    return [(n, m.upper(), p) for n, m, p in found]


class ScenarioTest(unittest.TestCase):
    def test_scenario(self) -> None:
        doc = json.loads(SCENARIO.read_text())
        self.assertEqual(doc["version"], 1)
        with LocalServer() as srv:
            c = RecordingClient(srv.url, retries=0)
            failures = run_scenario(c, doc["steps"])
        self.assertEqual(failures, [], "\n".join(failures))
        # The scenario reaches every route but the dashboard's HTML page.
        for name, method, pattern in routes():
            if name == "dashboard":
                continue
            rx = re.compile("^" + method + " " + re.sub(r"\{[a-z]+\}", "[^/]+", pattern) + "$")
            self.assertTrue(any(rx.match(x) for x in c.sent), f"route {name} ({method} {pattern}) never called")

    def test_batch_ops_against_the_fake(self) -> None:
        # The batch routes are not in the server yet: their ops run against
        # the fake of their contract, so the runner is ready for the steps.
        from fakeserver import Fake
        fake = Fake()
        self.addCleanup(fake.close)
        fake.add("q", ["a", "b", "c"])
        steps = [
            {"name": "take two", "op": "take", "args": {"queue": "q", "count": 2, "worker": "w"},
             "expect": [{"id": "$present", "attempt": 1}, {"id": "$present", "attempt": 1}],
             "capture": {"a": "0.id", "b": "1.id"}},
            {"name": "beats", "op": "heartbeat_jobs", "args": {"items": [{"id": "${a}", "attempt": 1}, {"id": "${b}", "attempt": 2}]},
             "expect": [{"id": "${a}", "status": 204}, {"id": "${b}", "status": 409, "error": "Job ${b} attempt 2 is not current"}]},
            {"name": "report one", "op": "update_jobs", "args": {"items": [{"id": "${a}", "attempt": 1, "status": "completed", "output": 1}]},
             "expect": [{"id": "${a}", "status": 204, "error": None}]},
            {"name": "report and take", "op": "update_jobs_and_take",
             "args": {"items": [{"id": "${b}", "attempt": 1, "status": "failed", "error": {"message": "x"}}], "queue": "q", "count": 5},
             "expect": {"results": [{"id": "${b}", "status": 204}], "jobs": [{"input": "c", "attempt": 1, "queue": "q"}]}},
            {"name": "a missing take queue", "op": "update_jobs_and_take",
             "args": {"items": [{"id": "${a}", "status": "completed"}], "queue": "none"}, "error": {"status": 404}},
        ]
        failures = run_scenario(Client(fake.url, retries=0), steps)
        self.assertEqual(failures, [], "\n".join(failures))

    def test_matcher(self) -> None:
        self.assertIsNone(mismatch({"a": 1, "b": None}, {"a": 1.0, "c": 2}))
        self.assertIsNotNone(mismatch({"a": 1}, {"a": 2}))
        self.assertIsNotNone(mismatch([1], [1, 2]))
        self.assertIsNotNone(mismatch("$present", None))
        self.assertIsNone(mismatch("$any", None))
        self.assertIsNotNone(mismatch(False, 0))
        self.assertEqual(substitute({"x": "${a}", "y": "id ${a}"}, {"a": 7}), {"x": 7, "y": "id 7"})


if __name__ == "__main__":
    unittest.main()
