"""The errors of the client: a refused request is an APIError of its status."""

from __future__ import annotations

from http import HTTPStatus


class OcylessError(Exception):
    """Every error the client raises."""


class TransportError(OcylessError):
    """The request failed before an answer came: the connection was refused
    or reset, or it timed out. It may have reached the server."""


class DecodeError(OcylessError):
    """The server's answer was not what the route answers."""


class APIError(OcylessError):
    """A request the server refused: its HTTP status and the server's text
    (such as "Job with ID 7 does not exist"; empty for the bare 404 of a
    DELETE of a missing job or queue)."""

    status: int
    message: str
    method: str
    path: str

    def __init__(self, status: int, message: str, method: str, path: str):
        self.status, self.message, self.method, self.path = status, message, method, path
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
        text = f"ocyless: {method} {path}: {status} {phrase}".rstrip()
        if message:
            text += ": " + message
        super().__init__(text)

    @property
    def stale(self) -> bool:
        """Whether this is the 409 of a fenced call whose attempt is no
        longer the job's ("Job <id> attempt <n> is not current")."""
        return self.status == 409 and self.message.endswith(" is not current")


class BadRequest(APIError):
    """400: the request was refused as invalid and changed nothing."""


class Forbidden(APIError):
    """403: refused by the local server's Host or Origin check, or by API
    Gateway's IAM authorisation."""


class NotFound(APIError):
    """404: the job, queue, worker or schedule does not exist."""


class Conflict(APIError):
    """409: the job is not in a state that allows the change (or a key is
    taken, or a fenced attempt is not current)."""


class StaleAttempt(Conflict):
    """409 "Job <id> attempt <n> is not current": a fenced heartbeat, output
    or update of a job taken again since. Nothing was changed."""


class TooLarge(APIError):
    """413: the body is over the server's limit."""


class StorageFull(APIError):
    """507: the server refuses new data."""


class Unavailable(APIError):
    """503 (the server's store cannot serve), and the 502, 504 and 429 of a
    gateway in front of the API. A 503 may have been applied."""


_BY_STATUS = {400: BadRequest, 403: Forbidden, 404: NotFound, 409: Conflict, 413: TooLarge,
              507: StorageFull, 502: Unavailable, 503: Unavailable, 504: Unavailable, 429: Unavailable}


def error_for(status: int, message: str, method: str, path: str) -> APIError:
    """The APIError subclass of a status."""
    cls = _BY_STATUS.get(status, APIError)
    if cls is Conflict and message.endswith(" is not current"):
        cls = StaleAttempt
    return cls(status, message, method, path)
