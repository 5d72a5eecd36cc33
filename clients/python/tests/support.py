"""Shared helpers of the tests."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable

# The package under test, from this checkout (installing it is not needed).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def eventually(cond: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    """Polls cond every 20ms until it holds; fails after timeout seconds."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not true within {timeout}s")
        time.sleep(0.02)
