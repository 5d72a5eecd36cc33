"""Starts the repository's local server (cmd/ocypod-local, embedded store)
for the tests: built once per test run with `go build`, started on a free
port, ready once GET /health answers 200."""

from __future__ import annotations

import atexit
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[3]
_build_lock = threading.Lock()
_binary: Optional[str] = None

BUILD_TIMEOUT = 600.0
READY_TIMEOUT = 30.0


def binary() -> str:
    """The local server's binary: $OCYLESS_LOCAL_BIN when set, else built
    once into a temporary directory."""
    global _binary
    with _build_lock:
        if _binary is None:
            given = os.environ.get("OCYLESS_LOCAL_BIN")
            if given:
                _binary = given
            else:
                tmp = tempfile.mkdtemp(prefix="ocyless-py-")
                atexit.register(shutil.rmtree, tmp, True)
                out = os.path.join(tmp, "ocypod-local")
                started = time.monotonic()
                proc = subprocess.run(["go", "build", "-o", out, "./cmd/ocypod-local"], cwd=REPO,
                                      capture_output=True, text=True, timeout=BUILD_TIMEOUT)
                if proc.returncode != 0:
                    raise RuntimeError(f"go build ./cmd/ocypod-local failed:\n{proc.stderr}")
                print(f"built ocypod-local in {time.monotonic() - started:.1f}s", file=sys.stderr)
                _binary = out
        return _binary


class LocalServer:
    """A running ocypod-local with the embedded store. The sweeps that time
    out jobs and schedule retries run every second."""

    def __init__(self, **env: str):
        self.env = {"OCYPOD_PORT": "0", "OCYPOD_HOST": "127.0.0.1", "OCYPOD_TIMEOUT_CHECK_INTERVAL": "1s",
                    "OCYPOD_RETRY_CHECK_INTERVAL": "1s", "OCYPOD_SHUTDOWN_TIMEOUT": "5s", **env}
        self.proc: Optional[subprocess.Popen] = None
        self.url = ""
        self.log: collections.deque[str] = collections.deque(maxlen=200)

    def start(self) -> "LocalServer":
        env = {k: v for k, v in os.environ.items() if not k.startswith("OCYPOD_")}
        env.update(self.env)
        self.proc = subprocess.Popen([binary()], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        addr: list[str] = []
        found = threading.Event()

        def drain() -> None:
            assert self.proc is not None and self.proc.stderr is not None
            marker = "Starting queue server at: "
            for line in self.proc.stderr:
                self.log.append(line.rstrip())
                if not found.is_set() and marker in line:
                    addr.append(line.split(marker, 1)[1].split('"')[0].strip())
                    found.set()
            found.set()

        threading.Thread(target=drain, daemon=True).start()
        deadline = time.monotonic() + READY_TIMEOUT
        if not found.wait(READY_TIMEOUT) or not addr:
            self.stop()
            raise RuntimeError("ocypod-local did not start:\n" + "\n".join(self.log))
        self.url = "http://" + addr[0]
        while True:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                raise RuntimeError("ocypod-local never answered /health:\n" + "\n".join(self.log))
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        self.proc = None

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
