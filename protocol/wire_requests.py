"""What a client sends over the WebSocket: the hello frame and every request.

Each frame is a msgspec Struct tagged by its ``type`` field. Every request carries
an ``id`` chosen by the client (an integer or a string); the server answers each
request with exactly one reply frame or one ``error`` frame carrying the same id.
Sessions are named by id (``s-3f2a``) or by actor address
(``/sessions/s-3f2a/agents/a-1``), so subagents are reached the same way.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import msgspec

from protocol.asks import Asks
from protocol.environment_specs import AnyEnvironmentSpec, DockerSpec, SSHSpec
from protocol.session import ApprovalMode, RewindMode, SessionConfig
from protocol.wire_client_calls import ClientCallResult, ClientOperation
from protocol.wire_replies import (
    Compacted,
    ConfigUpdated,
    Encoding,
    EnvironmentAdded,
    EnvironmentList,
    ExecReply,
    FileReply,
    Forked,
    Ok,
    RequestId,
    Rewound,
    ServerOptions,
    SessionCreated,
    SessionDetail,
    SessionList,
    Subscribed,
    WriteReply,
)


class Hello(msgspec.Struct, frozen=True, tag="hello", tag_field="type"):
    """The first frame of every connection.

    ``token`` is for browsers, which cannot set an Authorization header.
    ``encoding`` ``msgpack`` switches every later frame, both ways, to binary
    msgpack frames (the server's ``welcome`` is still JSON text).
    """

    version: int
    token: str | None = None
    encoding: Encoding = "json"
    client: str = ""


R = TypeVar("R")


class _Request(msgspec.Struct, Asks[R], frozen=True, tag_field="type"):
    """A request; its reply is an ``R`` (or an ``error`` frame)."""

    id: RequestId


class CreateSession(_Request[SessionCreated], frozen=True, tag="create_session"):
    """Start a session. ``environment`` is an environment's address
    (``/environments/ssh/build-box``); ``working_dir`` instead starts a local
    environment there. Neither: the server's default local environment."""

    profile: str | None = None
    environment: str | None = None
    working_dir: str | None = None
    config: SessionConfig | None = None
    preset: str | None = None
    """A loop preset by name (docs/presets.md); fields of ``config`` that differ
    from the defaults override it."""
    client_operations: list[ClientOperation] = []
    """Operations this connection serves for the session (``client_call`` frames,
    see :mod:`protocol.wire_client_calls`); empty: the environment does them all."""


class ListSessions(_Request[SessionList], frozen=True, tag="list_sessions"):
    pass


class GetSession(_Request[SessionDetail], frozen=True, tag="get_session"):
    """The session's summary and its history of turns."""

    session: str


class SubmitInput(_Request[Ok], frozen=True, tag="submit"):
    session: str
    text: str


class SteerSession(_Request[Ok], frozen=True, tag="steer"):
    session: str
    text: str


class FollowUpSession(_Request[Ok], frozen=True, tag="follow_up"):
    session: str
    text: str


class AbortSession(_Request[Ok], frozen=True, tag="abort"):
    """Cancel the work in progress and close the session. Disconnecting never does."""

    session: str
    reason: str = "aborted"


class InterruptSession(_Request[Ok], frozen=True, tag="interrupt"):
    """Stop the current work but keep the session open. ``immediate`` false (the
    default) lets the current step finish and stops before the next model call."""

    session: str
    immediate: bool = False


class UpdateSessionConfig(_Request[ConfigUpdated], frozen=True, tag="update_config"):
    """Change settings for the next model call; absent fields keep their value."""

    session: str
    model: str | None = None
    reasoning_effort: str | None = None
    max_turns: int | None = None
    max_tool_rounds_per_input: int | None = None
    approval_mode: ApprovalMode | None = None
    nobody_to_ask: bool | None = None
    provider_options: dict[str, Any] | None = None
    """Replaces the session's provider options (``{}`` clears them)."""


class ExtendSessionLimit(_Request[ConfigUpdated], frozen=True, tag="extend_limit"):
    """The session's last input stopped at an iteration limit: raise that limit by
    ``by`` and continue the same input. ``invalid_request`` when it did not."""

    session: str
    by: int


class CompactSession(_Request[Compacted], frozen=True, tag="compact"):
    """Compact the session's conversation now: prune old tool outputs, then summarize
    the older turns with the model, following ``instructions`` if given. Answered
    once done; ``invalid_request`` while the session is processing an input."""

    session: str
    instructions: str | None = None


class RewindSession(_Request[Rewound], frozen=True, tag="rewind"):
    """Rewind to just before the user input whose ``user_input`` event is ``to_seq``:
    ``conversation`` cuts that input and every turn after it (durably; the events
    stay), ``code`` restores the working tree's files from the snapshot taken at
    that input, ``both`` does both. ``summarize`` replaces the cut turns with a
    summary the model writes (``instructions`` steer it). ``session_busy`` while
    the session processes an input: interrupt it first."""

    session: str
    to_seq: int
    mode: RewindMode = "conversation"
    summarize: bool = False
    instructions: str | None = None


class ForkSession(_Request[Forked], frozen=True, tag="fork"):
    """A new session whose conversation is this one's up to event ``at_seq`` (an
    assistant message: up to and with it; a user input: up to just before it;
    absent: all of it). ``working_dir``: a new directory that gets its own copy of
    the working tree as it was then (from the workspace snapshots), where the
    fork works; absent: the fork shares the original's environment."""

    session: str
    at_seq: int | None = None
    working_dir: str | None = None


class SubscribeSession(_Request[Subscribed], frozen=True, tag="subscribe"):
    """Replay the durable events with ``seq > after_seq``, then follow live.

    Pending approval requests older than ``after_seq`` are sent again (with
    ``resent: true``)."""

    session: str
    after_seq: int = 0


class UnsubscribeSession(_Request[Ok], frozen=True, tag="unsubscribe"):
    session: str


class ResolveApproval(_Request[Ok], frozen=True, tag="resolve_approval"):
    """Answer an approval request. ``scope`` ``command`` ("always") approves exactly
    this call for the rest of the session, ``rule`` the wider rule the request
    showed in ``details["rule"]`` (see :data:`protocol.session.ApprovalScope`); the
    answer is recorded in the ``approval_resolved`` event."""

    session: str
    request_id: str
    approved: bool
    message: str | None = None
    scope: Literal["once", "command", "rule", "session", "tool"] = "once"
    """``command``: exactly this call ("always"); ``rule``: the rule shown in the
    request; ``session`` and ``tool`` are their old names."""


class ExecInEnvironment(_Request[ExecReply], frozen=True, tag="exec"):
    environment: str
    command: str
    timeout_ms: int | None = None
    working_dir: str | None = None


class ReadEnvironmentFile(_Request[FileReply], frozen=True, tag="read_file"):
    environment: str
    path: str
    offset: int | None = None
    limit: int | None = 2000
    line_numbers: bool = True


class WriteEnvironmentFile(_Request[WriteReply], frozen=True, tag="write_file"):
    environment: str
    path: str
    content: str


class ListEnvironments(_Request[EnvironmentList], frozen=True, tag="list_environments"):
    """``check`` probes each environment (its working directory, over the network for
    an SSH host, each within a few seconds) and reports whether it answered."""

    check: bool = False


class AddEnvironment(_Request[EnvironmentAdded], frozen=True, tag="add_environment"):
    """Add an environment of any kind under ``name``: ``spec`` is a tagged object
    (``{"kind": "ssh", "target": ...}``, ``{"kind": "docker", "image": ...}``,
    ``{"kind": "local", "working_dir": ...}``; see
    :mod:`protocol.environment_specs`). The server stores it and adds it again when
    it starts; ``remove_environment`` removes it."""

    name: str
    spec: AnyEnvironmentSpec


class AddEnvironmentAlias(_Request[EnvironmentAdded], frozen=True):
    """A per-kind add frame kept for one release: it is the ``add_environment``
    that :meth:`as_add` returns."""

    name: str

    def as_add(self) -> AddEnvironment:
        raise NotImplementedError


class AddSSHEnvironment(AddEnvironmentAlias, frozen=True, tag="add_ssh_environment"):
    """Deprecated alias of ``add_environment`` with an SSH spec: connect to
    ``ssh://user@host:port`` (or a ``~/.ssh/config`` alias); the environment's
    address becomes ``/environments/ssh/<name>``."""

    target: str
    working_dir: str | None = None
    known_hosts: str | None = None
    client_keys: list[str] = []

    def as_add(self) -> AddEnvironment:
        spec = SSHSpec(self.target, self.working_dir, self.known_hosts, list(self.client_keys))
        return AddEnvironment(self.id, self.name, spec)


class AddDockerEnvironment(AddEnvironmentAlias, frozen=True, tag="add_docker_environment"):
    """Deprecated alias of ``add_environment`` with a Docker spec: run sessions in a
    container of ``image`` (created on first use, removed when the environment
    stops) with ``workspace``, a directory of the server's machine, bind-mounted at
    the same path; the address becomes ``/environments/docker/<name>``. The
    container has no network unless ``network`` names one; ``docker_host`` is the
    daemon (default ``DOCKER_HOST``, else the standard socket)."""

    image: str
    workspace: str
    copy_workspace: bool = False
    """Copy the workspace in when the container is made, instead of bind-mounting it."""
    user: str | None = None
    cpus: float | None = None
    memory_bytes: int | None = None
    pids_limit: int | None = 1024
    network: str = "none"
    docker_host: str | None = None

    def as_add(self) -> AddEnvironment:
        spec = DockerSpec(
            self.image, self.workspace, self.copy_workspace, self.user, self.cpus,
            self.memory_bytes, self.pids_limit, self.network, self.docker_host,
        )  # fmt: skip
        return AddEnvironment(self.id, self.name, spec)


class RemoveEnvironment(_Request[Ok], frozen=True, tag="remove_environment"):
    """Stop an environment added over the wire (by its address or its name) and
    forget it in the store."""

    environment: str


class GetServerOptions(_Request[ServerOptions], frozen=True, tag="get_server_options"):
    """The choices for a new session (profiles, policy presets, models, efforts)."""


Request = (
    CreateSession
    | ListSessions
    | GetSession
    | SubmitInput
    | SteerSession
    | FollowUpSession
    | AbortSession
    | InterruptSession
    | UpdateSessionConfig
    | ExtendSessionLimit
    | CompactSession
    | RewindSession
    | ForkSession
    | SubscribeSession
    | UnsubscribeSession
    | ResolveApproval
    | ExecInEnvironment
    | ReadEnvironmentFile
    | WriteEnvironmentFile
    | ListEnvironments
    | AddSSHEnvironment
    | AddDockerEnvironment
    | RemoveEnvironment
    | AddEnvironment
    | GetServerOptions
)

ClientFrame = Hello | Request | ClientCallResult
