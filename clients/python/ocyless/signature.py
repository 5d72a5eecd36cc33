"""Verifying the signature of a push delivery or a callback.

The server signs each delivery with the queue's (or callback's) secret:

    Ocyless-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">

verify_signature checks it in a web handler, on the raw body bytes (before
any JSON parsing: a re-encoded body would not match)."""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Optional, Union

HEADER = "Ocyless-Signature"
"""The name of the signature header."""

DEFAULT_TOLERANCE = 300.0
"""Seconds a signature's time may differ from now (replays older than this
are refused)."""


class SignatureError(ValueError):
    """A delivery whose signature is missing, malformed, stale or wrong.
    Answer it with 401 and do not act on it."""


def _key(secret: Union[str, bytes]) -> bytes:
    return secret.encode() if isinstance(secret, str) else bytes(secret)


def sign(secret: Union[str, bytes], body: bytes, timestamp: Optional[int] = None) -> str:
    """The header value the server sends for body at timestamp (now when
    None): for tests of a handler."""
    t = int(time.time()) if timestamp is None else int(timestamp)
    mac = hmac.new(_key(secret), str(t).encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def verify_signature(secret: Union[str, bytes], body: Union[bytes, str], header: Optional[str], *,
                     tolerance: float = DEFAULT_TOLERANCE, now: Optional[float] = None) -> int:
    """Checks a delivery's Ocyless-Signature header against its raw body
    and returns the signature's time (unix seconds). Raises SignatureError
    when the header is missing or malformed, its time is more than
    tolerance seconds from now, or no v1 signature matches (compared in
    constant time). Several v1 entries are accepted (any may match), so a
    secret can be rotated."""
    if not header:
        raise SignatureError(f"no {HEADER} header")
    if isinstance(body, str):
        body = body.encode()
    t: Optional[int] = None
    sigs: list[str] = []
    for part in header.split(","):
        k, sep, v = part.strip().partition("=")
        if not sep:
            raise SignatureError(f"malformed {HEADER} header")
        if k == "t":
            if not v.isdigit() or t is not None:
                raise SignatureError(f"malformed {HEADER} header: t")
            t = int(v)
        elif k == "v1":
            sigs.append(v.lower())
    if t is None or not sigs:
        raise SignatureError(f"malformed {HEADER} header: want t=<unix seconds>,v1=<hex>")
    current = time.time() if now is None else now
    if abs(current - t) > tolerance:
        raise SignatureError(f"signature time {t} is outside the tolerance of {tolerance:g}s")
    expected = hmac.new(_key(secret), str(t).encode() + b"." + body, hashlib.sha256).hexdigest()
    ok = False
    for s in sigs:
        ok |= hmac.compare_digest(expected.encode(), s.encode())
    if not ok:
        raise SignatureError("signature does not match")
    return t
