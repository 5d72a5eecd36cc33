"""verify_signature, the push delivery check (api-v3 §10)."""

from __future__ import annotations

import hashlib
import hmac
import unittest

import support  # noqa: F401

from ocyless import SignatureError, sign, verify_signature

SECRET = "0123456789abcdef-secret"
BODY = b'{"id":7,"attempt":1,"queue":"emails","input":{"to":"a@example.com"}}'
NOW = 1_764_000_000


def header(t: int, body: bytes = BODY, secret: str = SECRET) -> str:
    mac = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


class SignatureTest(unittest.TestCase):
    def test_a_good_signature(self) -> None:
        self.assertEqual(verify_signature(SECRET, BODY, header(NOW), now=NOW), NOW)
        self.assertEqual(verify_signature(SECRET.encode(), BODY.decode(), header(NOW - 299), now=NOW), NOW - 299)
        self.assertEqual(sign(SECRET, BODY, NOW), header(NOW))

    def test_refused(self) -> None:
        cases = {
            "no header": None,
            "empty": "",
            "no time": "v1=" + "0" * 64,
            "no signature": f"t={NOW}",
            "not a number": "t=abc,v1=" + "0" * 64,
            "garbage": "nonsense",
            "another body": header(NOW, BODY + b" "),
            "another secret": header(NOW, secret="another-secret-xyz"),
            "too old": header(NOW - 301),
            "from the future": header(NOW + 301),
            "a signature of the wrong time": header(NOW).replace(f"t={NOW}", f"t={NOW - 1}"),
            "a truncated signature": header(NOW)[:-2],
        }
        for name, h in cases.items():
            with self.subTest(name), self.assertRaises(SignatureError):
                verify_signature(SECRET, BODY, h, now=NOW)

    def test_tolerance_and_rotation(self) -> None:
        with self.assertRaises(SignatureError):
            verify_signature(SECRET, BODY, header(NOW - 10), now=NOW, tolerance=5)
        rotated = header(NOW, secret="the-old-secret-0000") + "," + header(NOW).split(",")[1]
        self.assertEqual(verify_signature(SECRET, BODY, rotated, now=NOW), NOW)
        self.assertEqual(verify_signature(SECRET, BODY, header(NOW).upper().replace("T=", "t=").replace("V1=", "v1="),
                                          now=NOW), NOW)


if __name__ == "__main__":
    unittest.main()
