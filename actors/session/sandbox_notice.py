"""The one warning a session gives when its policy asks for the OS sandbox
(``sandbox = "auto"``) and its environment cannot give it: commands then run
unconfined and only the classifier's approvals stand in the way, which the user
must know. Asked once per session, on its first tool call; the environment
probes once for all its sessions."""

from __future__ import annotations

import trio

from actors.kernel import ActorError, ActorRef
from protocol.environment import Describe, EnvironmentInfo, Sandbox

ASK_TIMEOUT_S = 30.0


def unsandboxed_message(reason: str) -> str:
    return (
        f"sandbox: auto -> off ({reason}): commands run without the OS sandbox and are "
        'only classified; install bubblewrap, or set sandbox = "on" to refuse them'
    )


async def sandbox_warning(environment: ActorRef, sandbox: Sandbox) -> str | None:
    """The warning to show, or None when the sandbox works (or is required: then
    every command is refused with the reason instead)."""
    if sandbox.required:
        return None
    try:
        info = await environment.ask(Describe(), timeout=ASK_TIMEOUT_S)
    except (ActorError, trio.TooSlowError) as error:
        return unsandboxed_message(f"the environment did not say whether it can: {error}")
    state = info.sandbox if isinstance(info, EnvironmentInfo) else None
    if state is None:
        return unsandboxed_message("this environment has no OS sandbox")
    return None if state.available else unsandboxed_message(state.reason)
