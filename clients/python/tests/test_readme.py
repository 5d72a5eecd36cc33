"""The examples of clients/python/README.md run as written."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request
from pathlib import Path

import support  # noqa: F401
from localserver import LocalServer
from support import eventually

from ocyless import Client, sign

PKG = Path(__file__).resolve().parents[1]
README = (PKG / "README.md").read_text()


def block(after_heading: str) -> str:
    """The first python block after a heading of the README."""
    start = README.index(after_heading)
    m = re.compile(r"```python\n(.*?)```", re.S).search(README, start)
    assert m, after_heading
    return m.group(1)


class ReadmeTest(unittest.TestCase):
    def run_file(self, code: str, env: dict) -> subprocess.Popen:
        d = tempfile.mkdtemp()
        path = os.path.join(d, "example.py")
        Path(path).write_text(code)
        p = subprocess.Popen([sys.executable, path], env={**os.environ, "PYTHONPATH": str(PKG), **env},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        def cleanup() -> None:
            if p.poll() is None:
                p.kill()
            p.wait(10)
            p.stdout.close()
            p.stderr.close()
        self.addCleanup(cleanup)
        return p

    def test_worker_example(self) -> None:
        code = block("## A worker")
        self.assertLessEqual(len(code.strip().splitlines()), 15)
        with LocalServer() as srv:
            c = Client(srv.url)
            p = self.run_file(code, {"OCYLESS_URL": srv.url})
            eventually(lambda: "emails" in c.list_queues(), 20, "the example put its queue")
            good = [c.create_job("emails", {"to": f"{n}@example.com"}).id for n in "ab"]
            bad = c.create_job("emails", {"subject": "no recipient"}).id
            eventually(lambda: all(c.get_job(i).ended for i in good + [bad]), 30, "the jobs ended")
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 0, err)
            self.assertIn("sending to a@example.com", out)
            for i in good:
                j = c.get_job(i)
                self.assertEqual((j.status, j.output), ("completed", {"sent": True}))
            j = c.get_job(bad, ["status", "error", "retries_attempted"])
            self.assertEqual((j.status, j.error.group, j.error.message, j.retries_attempted),
                             ("failed", "bad_input", "no recipient", 0))

    def test_client_example(self) -> None:
        code = block("## The client")
        with LocalServer() as srv:
            p = self.run_file(code.replace("http://127.0.0.1:8023", srv.url), {})
            out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(out.strip(), "completed")

    def test_wait_example(self) -> None:
        code = block("## Waiting for a result")
        with LocalServer() as srv:
            c = Client(srv.url)
            c.put_queue("resize")
            p = self.run_file(code.replace("http://127.0.0.1:8023", srv.url), {})
            j = c.take_one("resize", wait=20)
            assert j is not None
            c.complete(j.id, j.attempt, {"url": f"/img/{j.input['width']}.png"})
            out, err = p.communicate(timeout=60)
            self.assertEqual(c.get_job(j.id, ["tags"]).tags, ["thumbnail"])
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(out.strip(), "completed {'url': '/img/640.png'}")

    def test_signature_example(self) -> None:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        secret = "a-secret-of-sixteen-bytes"
        p = self.run_file(block("## Verifying push deliveries"), {"PORT": str(port), "OCYLESS_PUSH_SECRET": secret})
        body = json.dumps({"id": 7, "attempt": 1, "queue": "q", "input": None}).encode()

        def post(header: str | None) -> tuple[int, bytes]:
            req = urllib.request.Request(f"http://127.0.0.1:{port}/", data=body, method="POST")
            if header:
                req.add_header("Ocyless-Signature", header)
            try:
                with urllib.request.urlopen(req, timeout=5) as r:
                    return r.status, r.read()
            except urllib.error.HTTPError as e:
                return e.code, e.read()

        def up() -> bool:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                return p.poll() is not None
        eventually(up, 20, "the example listens")
        self.assertIsNone(p.poll(), p.stderr.read() if p.poll() is not None else "")
        self.assertEqual(post(sign(secret, body)), (200, b'{"handled": 7}'))
        self.assertEqual(post(None)[0], 401)
        self.assertEqual(post(sign("another-secret-0000", body))[0], 401)
        self.assertEqual(post(sign(secret, body, int(time.time()) - 3600))[0], 401)


if __name__ == "__main__":
    unittest.main()
