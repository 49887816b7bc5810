"""What a tool gets besides its arguments: the environment and the session's limits."""

from __future__ import annotations

from typing import Protocol

import msgspec

from actors.kernel import ActorRef
from actors.tools.paths import Clearance
from protocol.environment import (
    DEFAULT_TIMEOUT_MS,
    MAX_TIMEOUT_MS,
    ExecOutput,
    PathGuard,
    Sandbox,
)
from protocol.session import Isolation, SubAgentResult


class OutputSink(Protocol):
    """Receives a running command's output deltas (an actor ref fits, too)."""

    async def tell(self, message: ExecOutput) -> None: ...


class Subagents(Protocol):
    """What the subagent tools ask of the session's subagent manager."""

    async def spawn(
        self,
        task: str,
        working_dir: str | None,
        model: str | None,
        max_turns: int | None,
        background: bool = False,
        isolation: Isolation | None = None,
        merge: bool = False,
    ) -> SubAgentResult: ...

    async def send_input(self, agent_id: str, message: str, interrupt: bool) -> str: ...

    async def wait(self, agent_ids: list[str], timeout_ms: int | None) -> list[SubAgentResult]: ...

    async def collect(self, agent_id: str, timeout_ms: int | None) -> SubAgentResult: ...

    async def status(self, agent_id: str) -> str: ...

    async def cancel(self, agent_id: str) -> SubAgentResult: ...

    async def close(self, agent_id: str) -> SubAgentResult: ...

    def results(self) -> list[SubAgentResult]: ...


class TerminalSlot(msgspec.Struct):
    """A session's persistent terminal: its id in the environment, and whether it
    is open (ephemeral terminal calls are refused while it is)."""

    terminal_id: str
    open: bool = False


class ToolContext(msgspec.Struct, frozen=True):
    """The environment tools act on, and the settings they obey.

    ``working_dir`` is the environment's working directory (for messages that show
    absolute paths); ``output_to`` receives a running command's output deltas.
    """

    environment: ActorRef
    working_dir: str
    default_timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_timeout_ms: int = MAX_TIMEOUT_MS
    output_to: OutputSink | None = None
    agents: Subagents | None = None
    """The session's subagent manager, for the subagent tools."""
    sandbox: Sandbox | None = None
    """The OS sandbox the policy puts commands in (None: commands run unconfined)."""
    env_allowlist: tuple[str, ...] | None = None
    """The only variables commands inherit (None: the environment's default)."""
    terminal: TerminalSlot | None = None
    """The session's persistent terminal, for the terminal tool."""
    clearance: Clearance | None = None
    """The paths the policy resolved and judged for this call (None: no policy)."""

    def path(self, written: str) -> str:
        """The path to use for one the model wrote: the resolved path the policy
        judged, or (without a policy) the path as written."""
        return written if self.clearance is None else self.clearance.path(written)

    def entry(self, written: str) -> str:
        """Like :meth:`path`, for the directory entry itself (what a delete removes:
        a symlink, not its target)."""
        return written if self.clearance is None else self.clearance.entry(written)

    @property
    def guard(self) -> PathGuard | None:
        """What file requests carry so the environment uses exactly the judged path."""
        return None if self.clearance is None else self.clearance.guard

    def timeout_ms(self, requested: int | None) -> int:
        """The per-call timeout: the session default when unset, never past the cap."""
        if requested is None or requested <= 0:
            return self.default_timeout_ms
        return min(requested, self.max_timeout_ms)
