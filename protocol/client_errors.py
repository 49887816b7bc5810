"""The errors a client of the protocol raises, shared by the trio/asyncio client
(:mod:`protocol.client`) and the blocking one (:mod:`protocol.client_blocking`), so
that a caller catches one type whichever client it used. No event loop here."""

from __future__ import annotations

from protocol.wire_replies import ErrorReply


class RequestError(Exception):
    """The server answered a request with an ``error`` frame."""

    def __init__(self, error: ErrorReply) -> None:
        super().__init__(f"{error.code}: {error.message}")
        self.code = error.code
        self.error = error


class ConnectionRefused(Exception):
    """The server refused the connection (bad token, origin, version)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
