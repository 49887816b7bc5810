"""What the server sends: the welcome, one reply or error per request, and events.

Replies are flat frames tagged by ``type`` that carry the request's ``id``; events
are ``event`` frames with no id. Error codes are stable names (see ``ErrorCode``);
the message is for people.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from protocol.environment import ExecResult, FileContent, WriteResult
from protocol.events import EventData, UnknownEventKind, event_data
from protocol.session import CompactionOutcome, RewindOutcome, SessionConfig, Spend, Turn
from protocol.wire_client_calls import ClientCall, ClientCallCancel

RequestId = int | str
Encoding = Literal["json", "msgpack"]

ErrorCode = str
"""Stable error names. The gateway's own: ``bad_frame`` (not JSON/msgpack, or the
wrong frame kind), ``invalid_request`` (wrong field types or values),
``unknown_type`` (an unknown ``type`` tag), ``version_mismatch``,
``unauthorized``, ``not_found`` (no such session or environment),
``session_closed``, ``timeout``, ``unavailable`` (an actor stopped),
``internal``. Environment refusals keep their own codes (``file_not_found``,
``permission_denied``, ``host_key_rejected``, ...)."""


class Welcome(msgspec.Struct, frozen=True, tag="welcome", tag_field="type"):
    """The answer to ``hello``: the connection is authenticated and ready."""

    version: int
    server: str
    connection: str
    encoding: Encoding
    max_frame_bytes: int


class ErrorReply(msgspec.Struct, frozen=True, tag="error", tag_field="type"):
    """A request failed, or a frame could not be read (then ``id`` is null unless
    the frame had a readable one)."""

    id: RequestId | None
    code: ErrorCode
    message: str
    details: dict[str, Any] = {}


class _Reply(msgspec.Struct, frozen=True, tag_field="type"):
    id: RequestId


class Ok(_Reply, frozen=True, tag="ok"):
    """Done, nothing to return."""


SessionStatus = Literal["live", "stored", "closed"]


class SessionInfo(msgspec.Struct, frozen=True):
    """A session as the store and the runtime know it. ``state`` is the loop's
    state (``idle``, ``processing``, ...); ``interrupted`` is set when an input was
    cut short by a server stop."""

    session_id: str
    address: str
    profile: str
    model: str
    environment: str
    state: str
    status: SessionStatus
    last_seq: int
    created: float
    updated: float
    interrupted: bool = False
    loop_state: str | None = None
    """What the agent is doing (``thinking``, ``executing_tool``, ...; see the
    ``loop_state`` event); null before the first input of a live session."""
    config: SessionConfig = SessionConfig()
    task: str = ""
    """The first input the session received (seen by this server process)."""
    activity: str = ""
    """What a live session is doing now: ``thinking``, ``running_tool``,
    ``awaiting_approval`` or empty (see ``state``)."""
    iterations: int = 0
    """Model calls answered since this server process started following it."""
    input_tokens: int = 0
    output_tokens: int = 0
    working_dir: str | None = None
    """The local directory the session was started in (``working_dir`` of
    ``create_session``); None for the environment's own working directory."""
    cost_usd: float | None = 0.0
    """List-price USD for ``input_tokens``/``output_tokens`` from the model catalog;
    None once a model call was answered by a model whose price is not known."""
    spend: Spend | None = None
    """The cost ledger as of the session's last input: tokens by kind (cache and
    reasoning included) and dollars, its subagents and compactions included."""
    forked_from: str | None = None
    """A fork's origin, ``SESSION@SEQ`` (``SESSION`` alone: forked at its end); see
    the ``forked_from`` event."""


class SessionCreated(_Reply, frozen=True, tag="session_created"):
    session: SessionInfo


class SessionList(_Reply, frozen=True, tag="session_list"):
    sessions: list[SessionInfo]


class SessionDetail(_Reply, frozen=True, tag="session_detail"):
    session: SessionInfo
    history: list[Turn]
    pending_approvals: list[dict[str, Any]] = []


class Subscribed(_Reply, frozen=True, tag="subscribed"):
    """The subscription is on; replayed events follow this frame. ``last_seq`` is
    the newest event the session had when the subscription started."""

    session: str
    last_seq: int


class ConfigUpdated(_Reply, frozen=True, tag="config_updated"):
    config: SessionConfig


class Compacted(_Reply, frozen=True, tag="compacted"):
    """What ``compact`` did (also reported as ``compaction_start``/``compaction_end``)."""

    outcome: CompactionOutcome


class Rewound(_Reply, frozen=True, tag="rewound"):
    """What ``rewind`` did (also reported as a ``rewind`` event)."""

    outcome: RewindOutcome


class Forked(_Reply, frozen=True, tag="forked"):
    """The new session a ``fork`` made: it holds ``turns`` turns of the original's
    conversation; ``working_dir`` is its own copy of the working tree, if asked for."""

    session: SessionInfo
    turns: int
    working_dir: str | None = None


class ExecReply(_Reply, frozen=True, tag="exec_result"):
    result: ExecResult


class FileReply(_Reply, frozen=True, tag="file_content"):
    content: FileContent


class WriteReply(_Reply, frozen=True, tag="file_written"):
    result: WriteResult


class EnvironmentSummary(msgspec.Struct, frozen=True):
    """An environment; the fields after ``kind`` are filled by a ``list_environments``
    with ``check`` (a probe that reaches the host), else ``state`` is ``unchecked``."""

    address: str
    kind: str
    """The kind's name (``local``, ``ssh``, ``docker``, ...; ``other`` if none)."""
    state: Literal["unchecked", "reachable", "unreachable"] = "unchecked"
    working_directory: str | None = None
    platform: str | None = None
    error: str | None = None
    """Why an ``unreachable`` environment did not answer the probe."""


class EnvironmentList(_Reply, frozen=True, tag="environment_list"):
    environments: list[EnvironmentSummary]


class EnvironmentAdded(_Reply, frozen=True, tag="environment_added"):
    environment: EnvironmentSummary


class ModelChoice(msgspec.Struct, frozen=True):
    """A model of the catalog a session can be started with, and its list price
    in USD per million tokens (None when not known)."""

    id: str
    provider: str
    display_name: str = ""
    input_cost_per_million: float | None = None
    output_cost_per_million: float | None = None


class ServerOptions(_Reply, frozen=True, tag="server_options"):
    """What a new-session form offers: the profiles (with each one's default model),
    the policy presets, the catalog's models and the reasoning efforts."""

    profiles: list[str]
    default_profile: str
    profile_models: dict[str, str]
    policies: list[str]
    default_policy: str
    models: list[ModelChoice]
    reasoning_efforts: list[str]


class Event(msgspec.Struct, frozen=True, tag="event", tag_field="type"):
    """One session event. ``kind`` names one of the Structs of
    :mod:`protocol.events` and ``data`` holds that Struct's fields (``body()`` gives
    the Struct). ``seq`` counts every event of the session; ephemeral deltas are
    sent live only, so a replay skips their numbers. ``session`` is what the client
    subscribed to (an id or an address). ``resent`` marks a pending approval request
    sent again on resubscribe.

    ``data`` stays a plain object when decoded, so a client keeps reading frames of
    kinds newer than itself."""

    session: str
    session_id: str
    seq: int
    timestamp: float
    kind: str
    data: dict[str, Any] = {}
    resent: bool = False

    def body(self) -> EventData | None:
        """The typed body, or None for a kind this version does not know (clients
        ignore those). Raises ``msgspec.ValidationError`` for data that does not fit."""
        try:
            return event_data(self.kind, self.data)
        except UnknownEventKind:
            return None


Reply = (
    Ok
    | SessionCreated
    | SessionList
    | SessionDetail
    | Subscribed
    | ConfigUpdated
    | Compacted
    | Rewound
    | Forked
    | ExecReply
    | FileReply
    | WriteReply
    | EnvironmentList
    | EnvironmentAdded
    | ServerOptions
)

ServerFrame = Welcome | ErrorReply | Event | Reply | ClientCall | ClientCallCancel
