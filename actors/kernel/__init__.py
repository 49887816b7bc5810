"""The actor kernel: actors, mailboxes, refs, addresses, supervision, shutdown.

This is the layer everything else in Troupe stands on, and the only part of
``actors`` that ``environments`` may import.
"""

from actors.kernel.actor import Actor, handler
from actors.kernel.cell import Cell
from actors.kernel.errors import (
    ActorError,
    ActorFailedError,
    AddressInUseError,
    AskTimeoutError,
    DeadActorError,
    DepthLimitError,
    InvalidAddressError,
    Rejection,
    SpawnError,
    StoppingError,
    UnhandledMessageError,
    UnknownAddressError,
)
from actors.kernel.processes import KILL_GRACE, live_groups, terminate_groups
from actors.kernel.ref import DEFAULT_ASK_TIMEOUT, ActorRef
from actors.kernel.restart import RestartPolicy
from actors.kernel.runtime import Runtime

__all__ = [
    "DEFAULT_ASK_TIMEOUT",
    "KILL_GRACE",
    "Actor",
    "ActorError",
    "ActorFailedError",
    "ActorRef",
    "AddressInUseError",
    "AskTimeoutError",
    "Cell",
    "DeadActorError",
    "DepthLimitError",
    "InvalidAddressError",
    "Rejection",
    "RestartPolicy",
    "Runtime",
    "SpawnError",
    "StoppingError",
    "UnhandledMessageError",
    "UnknownAddressError",
    "handler",
    "live_groups",
    "terminate_groups",
]
