"""Actor addresses: slash-separated paths such as ``/sessions/s-3f2a/agents/a-1``.

An address names where an actor sits in the supervision tree, so it is stable for
the actor's life and readable in logs and on the wire. A spawn may use a name of
several segments (``agents/a-1``) to group children under a namespace without an
actor standing at the namespace itself.
"""

from __future__ import annotations

import re

from actors.kernel.errors import InvalidAddressError

ROOT = ""
_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


def validate_name(name: str) -> str:
    """Return ``name`` (one or more segments) or raise :class:`InvalidAddressError`."""
    segments = name.split("/")
    for segment in segments:
        if not _SEGMENT.match(segment):
            raise InvalidAddressError(
                f"invalid actor name {name!r}: each segment must be letters, digits, "
                "'.', '_' or '-', and start with a letter or digit"
            )
    return name


def child_address(parent: str, name: str) -> str:
    """The address of a child called ``name`` under ``parent`` (``ROOT`` for top level)."""
    return f"{parent}/{validate_name(name)}"


def normalize(address: str) -> str:
    """Accept ``a/b`` or ``/a/b/`` from users and return the canonical ``/a/b``."""
    stripped = address.strip("/")
    if not stripped:
        raise InvalidAddressError("an actor address needs at least one segment")
    return "/" + validate_name(stripped)
