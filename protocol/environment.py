"""Requests to execution environments and their results (coding-agent-loop-spec §4).

Every environment actor (local, SSH, or a wrapper) answers the same requests with
the same result Structs, so tools never know where they run. Paths may be absolute
or relative to the environment's working directory.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import msgspec

from protocol.asks import Asks

DEFAULT_TIMEOUT_MS = 10_000
MAX_TIMEOUT_MS = 600_000
DEFAULT_READ_LIMIT = 2_000
DEFAULT_MAX_RESULTS = 100


R = TypeVar("R")


class _Request(msgspec.Struct, Asks[R], frozen=True, tag=True, tag_field="type"):
    """Base of every environment request (tagged, for the wire); answered with an
    ``R``. ``AddSSHHost`` is answered with the new environment's actor ref."""


class PathGuard(msgspec.Struct, frozen=True):
    """The request's path is one the policy resolved and judged: an absolute path
    with no symbolic link in it. The environment uses exactly that path, opening it
    component by component without following any link (or ``openat2`` with
    ``RESOLVE_NO_SYMLINKS``), so a link swapped in after the check is refused, not
    followed. A regular file with more than one hard link is refused too, unless
    ``hard_links`` (the user approved it): its other names may be outside."""

    hard_links: bool = False


class ReadFile(_Request["FileContent"], frozen=True):
    """Read text; ``offset`` is the 1-based first line, ``limit`` the number of lines.

    ``exact`` returns the whole text as stored (line endings and final newline kept,
    no numbering), which editing tools need to write it back faithfully.

    ``probe`` marks the session's own reads (instruction files such as AGENTS.md,
    project configuration), not the model's: a client that serves reads (an
    editor over ACP) leaves them to the environment, which reads the disk, so
    looking for files that are usually absent costs the editor nothing.
    """

    path: str
    offset: int | None = None
    limit: int | None = DEFAULT_READ_LIMIT
    line_numbers: bool = True
    exact: bool = False
    guard: PathGuard | None = None
    probe: bool = False
    images: bool = False
    """An image file (PNG, JPEG, GIF, WebP by its first bytes) comes back as
    ``image`` (its bytes, unless over :data:`MAX_IMAGE_TRANSFER`) instead of text."""


class WriteFile(_Request["WriteResult"], frozen=True):
    """Write the whole file, creating it and its parent directories when needed."""

    path: str
    content: str
    guard: PathGuard | None = None


class FileExists(_Request[bool], frozen=True):
    path: str


class StatPath(_Request["PathKind"], frozen=True):
    """What is at ``path``: a :class:`PathKind`."""

    path: str
    guard: PathGuard | None = None


class ResolvePath(_Request["ResolvedPath"], frozen=True):
    """Where ``path`` really is, on the environment's own host: absolute, ``..``
    and every symlink resolved (a missing tail is kept as written). The policy
    judges this path, never the one the model wrote; the tool then uses the
    resolved path, under a :class:`PathGuard`.

    ``same_file_in``: absolute directories to search for other names of the file
    (when it has more than one hard link); the first found is ``also_at``."""

    path: str
    same_file_in: tuple[str, ...] = ()


class DeleteFile(_Request[None], frozen=True):
    """Remove a file (never a directory)."""

    path: str
    guard: PathGuard | None = None


class ListDirectory(_Request["list[DirEntry]"], frozen=True):
    """Entries under ``path`` down to ``depth`` levels (1 = direct children only)."""

    path: str = "."
    depth: int = 1
    guard: PathGuard | None = None


class Sandbox(msgspec.Struct, frozen=True, kw_only=True):
    """How a command is confined by the OS (bubblewrap), beyond what the policy
    judged (the "workspace-write" profile): the filesystem read-only except
    ``writable``; ``protected`` paths inside a writable one read-only again (and
    their parents pinned, so they cannot be renamed away); ``hidden`` paths replaced
    by empty ones; a private /tmp; its own PID namespace; no network but loopback
    unless ``network``.

    Paths may start with ``~``: the environment expands it against the home
    directory of its own host. ``required``: refuse to run when the sandbox cannot
    be had (``sandbox = "on"``); otherwise the command runs unconfined and the
    session says so once.
    """

    writable: tuple[str, ...]
    protected: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    network: bool = False
    required: bool = True


class SandboxState(msgspec.Struct, frozen=True):
    """Whether an environment can confine commands, and why (shown to people:
    ``bwrap works``, ``bwrap not found``, ``bwrap does not run here: ...``)."""

    available: bool
    reason: str


class ExecCommand(_Request["ExecResult"], frozen=True):
    """Run ``command`` with ``bash -c`` in its own process group.

    ``timeout_ms`` defaults to 10 s and is capped at 10 minutes. ``output_to``, when
    given, is a ref (anything with an async ``tell``) that receives
    :class:`ExecOutput` deltas while the command runs; it is not sent over the wire.
    ``sandbox``, when given, runs the command inside the OS sandbox.
    """

    command: str
    timeout_ms: int | None = None
    working_dir: str | None = None
    env_vars: dict[str, str] | None = None
    output_to: Any = None
    sandbox: Sandbox | None = None
    env_allowlist: tuple[str, ...] | None = None
    """When given, the command inherits only these variables (plus ``env_vars``)."""
    argv: tuple[str, ...] | None = None
    """When given, run this argument vector instead of ``command`` with no shell in
    between (over SSH it is quoted word by word for the remote shell)."""


class RunInTerminal(_Request["TerminalOutput"], frozen=True):
    """Run ``command`` in the persistent shell ``terminal_id`` (one long-lived bash in
    its own process group, opened on first use in the environment's root), which
    keeps its working directory and exported variables from one command to the next
    (agentic-behavior-tool.md 6). A timeout or ``exit`` ends that shell."""

    command: str
    terminal_id: str
    timeout_ms: int | None = None
    sandbox: Sandbox | None = None
    """The OS sandbox the shell runs in: one long-lived sandbox for the shell's
    life (a later call with other settings restarts the shell)."""
    env_allowlist: tuple[str, ...] | None = None
    """When given, the shell starts with only these variables."""


class CloseTerminal(_Request[bool], frozen=True):
    """End the persistent shell ``terminal_id`` and every process in its group;
    answered True when one was open."""

    terminal_id: str


class TerminalOutput(msgspec.Struct, frozen=True):
    """One persistent-shell command: output (stderr merged), status and where the
    shell is now; ``closed`` when the shell ended with it (timeout or exit)."""

    output: str
    exit_code: int | None
    working_dir: str | None
    timed_out: bool = False
    closed: bool = False
    duration_ms: int = 0


class Grep(_Request["GrepResult"], frozen=True):
    pattern: str
    path: str | None = None
    glob_filter: str | None = None
    case_insensitive: bool = False
    max_results: int = DEFAULT_MAX_RESULTS


class Glob(_Request["GlobResult"], frozen=True):
    """Files matching ``pattern`` (``**`` recurses) under ``path``, newest first."""

    pattern: str
    path: str | None = None


class Initialize(_Request[None], frozen=True):
    """Prepare the environment (connect, create the working directory)."""


class Cleanup(_Request[None], frozen=True):
    """End running commands and release connections; the actor keeps running."""


class Describe(_Request["EnvironmentInfo"], frozen=True):
    """Ask for the working directory, platform and OS version."""

    sandbox: bool = True
    """Whether the answer must say if the OS sandbox works here. A caller that needs
    only the place (a session's start, its system prompt) says False: the local
    environment then answers at once instead of first running its ``bwrap``
    probe, whose answer (``EnvironmentInfo.sandbox``) may be left out. A command
    still waits for the probe (:meth:`~environments.local.LocalEnvironment.sandbox`)."""


class AddSSHHost(_Request[Any], frozen=True):
    """Open an SSH environment at ``ssh://user@host:port`` or a ``~/.ssh/config`` alias.

    Empty ``known_hosts``/``client_keys``/``config_files`` mean the user's defaults
    (``~/.ssh/known_hosts`` is verified; an unknown or changed key is refused; keys
    held by ssh-agent are offered). ``working_dir`` defaults to the login's home
    directory. Explicit ``known_hosts`` and ``client_keys`` apply to ProxyJump hops
    too. ``passphrase`` decrypts the ``client_keys``. ``agent_forwarding`` lets remote
    commands use the local ssh-agent (``git clone`` of a private repository).
    A dead peer is noticed after ``keepalive_interval * keepalive_count_max`` seconds;
    ``channels_per_connection`` is where the pool starts (it learns sshd's real
    MaxSessions), ``max_connections`` bounds the connections to the host.
    """

    target: str
    name: str
    working_dir: str | None = None
    known_hosts: str | None = None
    client_keys: list[str] = msgspec.field(default_factory=list[str])
    config_files: list[str] = msgspec.field(default_factory=list[str])
    channels_per_connection: int = 8
    passphrase: str | None = None
    agent_forwarding: bool = False
    keepalive_interval: float = 5.0
    keepalive_count_max: int = 4
    connect_timeout: float = 10.0
    max_connections: int = 4


EnvironmentRequest = (
    ReadFile
    | WriteFile
    | FileExists
    | StatPath
    | ResolvePath
    | DeleteFile
    | ListDirectory
    | ExecCommand
    | RunInTerminal
    | CloseTerminal
    | Grep
    | Glob
    | Initialize
    | Cleanup
    | Describe
)

WRITE_REQUESTS = (WriteFile, DeleteFile)
"""Requests a read-only wrapper refuses."""


class FileContent(msgspec.Struct, frozen=True):
    """Text of a file; ``text`` carries ``NNN | line`` numbering when asked for.

    ``encoding_note`` says the file was not UTF-8 and which encoding was assumed
    (``None`` for UTF-8 and for exact reads, which refuse anything else)."""

    path: str
    text: str
    first_line: int
    last_line: int
    total_lines: int
    encoding_note: str | None = None
    image: ImageFile | None = None
    """Set (and ``text`` empty) when ``images`` was asked for and the file is one."""


MAX_IMAGE_TRANSFER = 20 * 1024 * 1024
"""The largest image an environment sends back; past it, only its facts."""


class ImageFile(msgspec.Struct, frozen=True):
    """An image read by ``ReadFile(images=True)``: its type and pixel size from its
    header, its size in bytes, and the bytes (None when over the transfer cap)."""

    media_type: str
    width: int
    height: int
    size: int
    data: bytes | None = None


class WriteResult(msgspec.Struct, frozen=True):
    path: str
    bytes_written: int


PathKind = Literal["file", "directory", "other", "missing"]


class ResolvedPath(msgspec.Struct, frozen=True):
    """A resolved path, with the host's home directory (for ``~`` in path lists).

    ``links`` is the hard-link count of the regular file there (0 when nothing or
    something else is there): above 1, the same bytes have another name, possibly
    outside the working directory, so the policy asks."""

    path: str
    home: str
    links: int = 0
    also_at: str | None = None
    entry: str = ""
    """The directory entry itself: the parent resolved, the last name kept (a
    symlink there is the link, not its target); what a delete removes."""


class DirEntry(msgspec.Struct, frozen=True):
    """One entry; ``name`` is relative to the listed directory (``a/b.txt`` at depth 2)."""

    name: str
    is_dir: bool
    size: int | None = None


class ExecResult(msgspec.Struct, frozen=True):
    """What a command printed and how it ended.

    Output beyond the environment's capture cap is cut from the middle (head and
    tail kept); ``stdout_omitted``/``stderr_omitted`` count the bytes cut.
    """

    stdout: str
    stderr: str
    exit_code: int
    timed_out: bool
    duration_ms: int
    stdout_omitted: int = 0
    stderr_omitted: int = 0


class ExecOutput(msgspec.Struct, frozen=True, tag=True, tag_field="type"):
    """A delta of a running command's output."""

    stream: Literal["stdout", "stderr"]
    text: str


class GrepResult(msgspec.Struct, frozen=True):
    """Matches as ``path:line:text`` lines; ``truncated`` when max_results cut it."""

    text: str
    matches: int
    truncated: bool


class GlobResult(msgspec.Struct, frozen=True):
    paths: list[str]


class EnvironmentInfo(msgspec.Struct, frozen=True):
    working_directory: str
    platform: str
    os_version: str
    sandbox: SandboxState | None = None
    """Whether commands can run in the OS sandbox here (None: the environment does
    not say; treat it as unavailable)."""


def timeout_message(timeout_ms: int) -> str:
    """The spec's text (§5.4) appended to a timed-out command's output."""
    return (
        f"[ERROR: Command timed out after {timeout_ms}ms. Partial output is shown above.\n"
        "You can retry with a longer timeout by setting the timeout_ms parameter.]"
    )


def effective_timeout_ms(requested: int | None) -> int:
    """The default when none is given, never above the 10-minute cap."""
    if requested is None or requested <= 0:
        return DEFAULT_TIMEOUT_MS
    return min(requested, MAX_TIMEOUT_MS)
