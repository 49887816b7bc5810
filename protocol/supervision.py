"""Messages the supervisor sends to a parent actor about its children.

They are ordinary tagged Structs so that a parent handles them like any other
message, and so that a client watching the actor tree over the wire sees the same
shapes an in-process parent does.
"""

from __future__ import annotations

import msgspec


class ChildFailed(msgspec.Struct, frozen=True, tag=True, tag_field="type"):
    """A child actor raised; it has stopped, and its own children were stopped first.

    The exception itself stays in the child's process space: the parent gets its
    type and text, which is also what a remote client can be shown.
    """

    address: str
    error_type: str
    message: str


class ChildStopped(msgspec.Struct, frozen=True, tag=True, tag_field="type"):
    """A child actor finished without error (its mailbox was closed and drained).

    Delivered only to parents that declare a handler for it, so that a runtime
    shutting down thousands of actors does not flood parents that do not care.
    """

    address: str


class ChildRestarted(msgspec.Struct, frozen=True, tag=True, tag_field="type"):
    """A child with a restart policy failed and was started again, state kept.

    ``restarts`` counts its restarts so far. Delivered only to parents that declare
    a handler for it; top-level actors' restarts go to the runtime's listeners.
    """

    address: str
    error_type: str
    message: str
    restarts: int


class ServiceRestarted(msgspec.Struct, frozen=True, tag=True, tag_field="type"):
    """Told to a session by its host: an actor it depends on (its environment, or
    the SSH bridge above it) failed and was restarted. The session reports it as a
    ``service_restarted`` event."""

    address: str
    error_type: str
    message: str
    restarts: int


SupervisionMessage = ChildFailed | ChildStopped | ChildRestarted
