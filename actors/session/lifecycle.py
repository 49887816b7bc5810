"""What a host says about a session without its actor: a new session's id, its
first event, the notice that something it depends on restarted, and the answers
of a session that is closed or busy.

Apart from :mod:`actors.session.actor` so that the server (which announces a
session before its actor starts, and refuses requests for closed ones) does not
import the whole session stack, with the model layer and httpx under it, before
it is ready (issue #36): that is imported when the first session's actor starts.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from actors.kernel import Rejection
from protocol.events import ServiceRestartedEvent, SessionStartEvent

if TYPE_CHECKING:
    from actors.session.profiles import ProviderProfile
    from protocol.session import SessionConfig
    from protocol.supervision import ServiceRestarted


def new_session_id() -> str:
    """A new session's id."""
    # 64 random bits: servers sharing one store mint ids with no check between
    # them, and 32 bits collided about once in ten fleets of 30,000 sessions.
    return f"s-{secrets.token_hex(8)}"


def start_event(
    profile: ProviderProfile, config: SessionConfig, root: str, agent_depth: int = 0
) -> SessionStartEvent:
    """A session's first event, from what it starts with (its actor emits it, or a
    host announcing the session before its actor starts)."""
    return SessionStartEvent(
        profile=profile.id,
        model=profile.model_for(config),
        working_directory=root,
        agent_depth=agent_depth,
    )


def restarted_event(message: ServiceRestarted) -> ServiceRestartedEvent:
    """What a session says when something it depends on restarted."""
    return ServiceRestartedEvent(
        message.address, message.error_type, message.message, message.restarts
    )


class SessionClosed(Rejection):
    code = "session_closed"


class SessionBusy(Rejection):
    """A request that needs an idle session (``compact``) while it processes."""

    code = "invalid_request"
