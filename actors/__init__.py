"""Troupe's actors: the kernel, and on top of it the model gateways, tools, sessions,
subagents, the event store, the WebSocket gateway and the CLI.

Only the kernel is imported here, so ``import actors`` stays cheap and never pulls
in the upper layers.
"""

from actors.kernel import Actor, ActorRef, Runtime, handler

__all__ = ["Actor", "ActorRef", "Runtime", "handler"]
