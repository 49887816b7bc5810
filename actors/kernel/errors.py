"""Typed errors of the actor kernel.

Every way a message can fail to reach an actor or to be answered has its own
exception, so callers (and the wire gateway, which maps them to error codes) never
have to parse text. All derive from :class:`ActorError`.
"""

from __future__ import annotations


class ActorError(Exception):
    """Base class of every error raised by the actor kernel."""


class Rejection(ActorError):
    """An expected refusal of one request: the actor is fine and keeps running.

    A handler raises a subclass of this (a missing file, a dead host, a bad argument)
    to answer an ``ask`` with a typed error. Any other exception from a handler is a
    failure of the actor itself. ``code`` is a stable name for the wire.
    """

    code = "rejected"


class UnknownAddressError(ActorError):
    """No actor is registered at this address (never was, or is gone)."""

    def __init__(self, address: str) -> None:
        super().__init__(f"no actor at {address}")
        self.address = address


class DeadActorError(ActorError):
    """The actor behind a ref has stopped; the message was not delivered."""

    def __init__(self, address: str) -> None:
        super().__init__(f"actor {address} has stopped")
        self.address = address


class AskTimeoutError(ActorError):
    """An ask got no reply within its deadline."""

    def __init__(self, address: str, message_type: str, timeout: float) -> None:
        super().__init__(f"{address} did not answer {message_type} within {timeout:g} s")
        self.address = address
        self.message_type = message_type
        self.timeout = timeout


class ActorFailedError(ActorError):
    """The actor raised while handling the request; it has stopped."""

    def __init__(self, address: str, error_type: str, message: str) -> None:
        super().__init__(f"actor {address} failed with {error_type}: {message}")
        self.address = address
        self.error_type = error_type
        self.message = message


class UnhandledMessageError(ActorError):
    """The actor declares no handler for this message type."""

    def __init__(self, address: str, message_type: str) -> None:
        super().__init__(f"actor {address} does not handle {message_type}")
        self.address = address
        self.message_type = message_type


class DepthLimitError(ActorError):
    """Spawning would place an actor deeper than its subtree allows."""

    def __init__(self, parent: str, depth: int, limit: int) -> None:
        super().__init__(f"cannot spawn under {parent}: depth {depth} exceeds the limit of {limit}")
        self.parent = parent
        self.depth = depth
        self.limit = limit


class AddressInUseError(ActorError):
    """Another live actor already holds this address."""

    def __init__(self, address: str) -> None:
        super().__init__(f"address {address} is already in use")
        self.address = address


class InvalidAddressError(ActorError):
    """An actor name or address does not follow the path syntax."""


class SpawnError(ActorError):
    """The actor raised in ``on_start``; it never became reachable."""

    def __init__(self, address: str, cause: BaseException) -> None:
        super().__init__(f"actor {address} failed to start: {type(cause).__name__}: {cause}")
        self.address = address


class StoppingError(ActorError):
    """The runtime or the parent is shutting down and accepts no new actors."""
