"""The registry of environment kinds: what starts an environment from its spec.

A kind is its spec type (:mod:`protocol.environment_specs`, tagged with the kind's
name) and one :class:`Kind` in the kind's own module: how to check a spec, which
address an environment of that name gets, and how to start it. The server knows
kinds only through :class:`Kinds` (no name of a kind appears in its code; a test
over the source holds that), so adding a kind is its module and one line in
:mod:`environments.builtin_kinds`. Kind modules import their heavy parts
(asyncssh, httpx) inside ``start``, so the registry costs nothing at start-up. See
docs/environment-kinds.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Generic, TypeVar

import msgspec

from actors.kernel import ActorRef, Rejection, Runtime
from actors.kernel.processes import GroupRecord, ProcessLedger
from protocol.environment_specs import EnvironmentSpec

S = TypeVar("S", bound=EnvironmentSpec)

ENVIRONMENTS = "/environments/"


class AlreadyExists(Rejection):
    code = "already_exists"


class SpecRefused(Rejection):
    """A spec no environment can be made from (the message says which field)."""

    code = "invalid_request"


class KindContext(msgspec.Struct, frozen=True):
    """What a kind may use to start an environment: the runtime, the process
    ledger (commands' groups, ended after a crash), the owner label of what it
    creates outside this process, and a check that a directory of this machine
    exists (its real path, or :class:`SpecRefused`)."""

    runtime: Runtime
    ledger: ProcessLedger | None
    owner: str
    real_directory: Callable[[str], Awaitable[str]]
    started: Callable[[str, object], None] = lambda address, actor: None
    """Told of each environment actor started on this machine (the server asks
    them which process groups they run)."""


LeftoverEnder = Callable[[ProcessLedger, list[tuple[str, GroupRecord]]], Awaitable[None]]


def _no_check(spec: Any) -> None:
    return None


class Kind(msgspec.Struct, Generic[S], frozen=True):
    """One kind of environment."""

    spec: type[S]
    start: Callable[[str, S, KindContext], Awaitable[ActorRef]]
    """Start the environment named ``name``; its address must be ``address(name)``."""
    prefixes: tuple[str, ...]
    """Every environment of the kind has an address starting with one of these; a
    name's is the first plus the name (``/environments/x/<name>``)."""
    check: Callable[[S], None] = _no_check
    """Raise :class:`SpecRefused` naming the field of a spec that cannot work."""
    internal: tuple[str, ...] = ()
    """Addresses of the kind's helper actors (not environments themselves)."""
    end_leftovers: LeftoverEnder | None = None
    """End the process groups a killed server left on this kind's hosts (ledger
    records with a host), or None if the kind leaves none."""
    machine: MachineEntry[S] | None = None
    """Set on the kind of this machine's directories (the server's default)."""

    @property
    def name(self) -> str:
        tag = self.spec.__struct_config__.tag
        assert isinstance(tag, str), f"{self.spec.__name__} has no string tag"
        return tag

    def address(self, name: str) -> str:
        return self.prefixes[0] + name


class MachineEntry(msgspec.Struct, Generic[S], frozen=True):
    """How the server starts environments for directories of its own machine."""

    address: str
    """The server's own directory's environment (others are ``<address>-N``)."""
    spec: Callable[[str], S]
    """The spec of a directory (its real path)."""
    start_at: Callable[[str, S, KindContext], Awaitable[ActorRef]]


class Kinds:
    """The kinds a server can start, by name and by spec type."""

    def __init__(self, kinds: Iterable[Kind[Any]]) -> None:
        self._by_name: dict[str, Kind[Any]] = {}
        for kind in kinds:
            if kind.name in self._by_name:
                raise ValueError(f"two kinds named {kind.name}")
            if not kind.prefixes or not all(p.startswith(ENVIRONMENTS) for p in kind.prefixes):
                raise ValueError(f"kind {kind.name}: its addresses must be under {ENVIRONMENTS}")
            if not kind.prefixes[0].endswith("/"):
                raise ValueError(f"kind {kind.name}: {kind.prefixes[0]!r} must end with /")
            self._by_name[kind.name] = kind
        machines = [kind for kind in self._by_name.values() if kind.machine is not None]
        if len(machines) != 1:
            raise ValueError("exactly one kind must serve this machine's directories")
        self.machine: Kind[Any] = machines[0]

    def __iter__(self):
        return iter(self._by_name.values())

    def names(self) -> list[str]:
        return list(self._by_name)

    def named(self, name: str) -> Kind[Any]:
        try:
            return self._by_name[name]
        except KeyError:
            raise SpecRefused(f"unknown environment kind {name!r}") from None

    def of(self, spec: EnvironmentSpec) -> Kind[Any]:
        kind = self.named(type(spec).__struct_config__.tag)  # type: ignore[arg-type]
        if not isinstance(spec, kind.spec):
            raise SpecRefused(f"spec {type(spec).__name__} is not kind {kind.name}'s")
        return kind

    def kind_at(self, address: str) -> str | None:
        """The kind of the environment at ``address`` (None if no kind's prefix)."""
        found = [(p, kind) for kind in self._by_name.values() for p in kind.prefixes]
        for prefix, kind in sorted(found, key=lambda item: -len(item[0])):
            if address.startswith(prefix):
                return kind.name
        return None

    def internal(self) -> frozenset[str]:
        return frozenset(a for kind in self._by_name.values() for a in kind.internal)

    def decode(self, kind: str, blob: bytes) -> EnvironmentSpec:
        """A stored spec (JSON of the kind's spec, with or without its tag)."""
        import msgspec

        return msgspec.json.decode(blob, type=self.named(kind).spec)


__all__ = [
    "AlreadyExists",
    "Kind",
    "KindContext",
    "Kinds",
    "MachineEntry",
    "SpecRefused",
]
