"""Requests that declare their reply type, so an ask is typed by what it asks.

A request Struct inherits ``Asks[R]`` (a mixin with no fields and no slots, so
msgspec encodes it as before); ``ActorRef.ask(request)`` and
``TroupeClient.request(kind, ...)`` then return an ``R`` to the type checker.
"""

from __future__ import annotations

from typing import Generic, TypeVar

R = TypeVar("R", covariant=True)


class Asks(Generic[R]):
    """Mixin for a request answered with an ``R``."""

    __slots__ = ()


__all__ = ["Asks"]
