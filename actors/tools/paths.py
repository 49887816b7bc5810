"""Which of a tool's arguments are paths, and the paths the policy cleared.

A tool declares its paths (:class:`PathDeclaration`, one place per tool): the
parameters that hold a path or a list of paths, or a function that finds them in
the arguments (``apply_patch`` reads its targets with the patch parser itself, so
the policy judges exactly what the applier will touch). Nothing is guessed from a
parameter's name.

The session's policy resolves each declared path once, on the environment's host,
and judges the result; a :class:`Clearance` then carries the resolved paths to the
tool, which uses them, and nothing else, with a :class:`PathGuard` so the
environment opens exactly that path (no link followed on the way).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from protocol.environment import PathGuard


class PathDeclaration(msgspec.Struct, frozen=True):
    """The paths a call names. ``parameters`` hold a path or a list of paths;
    ``extract`` finds paths inside another value (a patch); ``confined``: every
    path must be inside the working directory, whatever the policy allows (a
    subagent's working directory); ``defaults``: the path a parameter means when
    the call leaves it out (``list_dir`` lists ``.``)."""

    parameters: tuple[str, ...] = ()
    extract: Callable[[Mapping[str, Any]], list[str]] | None = None
    confined: bool = False
    defaults: Mapping[str, str] = msgspec.field(default_factory=dict[str, str])

    def of(self, arguments: Mapping[str, Any]) -> list[str]:
        found: list[str] = []
        for name in self.parameters:
            value = arguments.get(name)
            if value is None:
                value = self.defaults.get(name)
            if isinstance(value, str) and value:
                found.append(value)
            elif isinstance(value, list):
                found.extend(item for item in value if isinstance(item, str) and item)
        if self.extract is not None:
            found.extend(self.extract(arguments))
        return found


NO_PATHS = PathDeclaration()


class UncheckedPath(Exception):
    """A tool used a path its declaration did not name (a bug in the tool): refused."""


class Clearance(msgspec.Struct, frozen=True):
    """The policy's answer for one call: each declared path as the model wrote it,
    mapped to the resolved path that was judged; ``hard_links``: the user approved
    files with more than one hard link."""

    resolved: Mapping[str, str] = msgspec.field(default_factory=dict[str, str])
    hard_links: bool = False
    entries: Mapping[str, str] = msgspec.field(default_factory=dict[str, str])
    """Each path's directory entry (its parent resolved, its name kept): a delete
    removes a symlink itself, not what it points to."""

    def path(self, written: str) -> str:
        return self._of(self.resolved, written)

    def entry(self, written: str) -> str:
        return self._of(self.entries, written)

    @staticmethod
    def _of(table: Mapping[str, str], written: str) -> str:
        try:
            return table[written]
        except KeyError:
            raise UncheckedPath(f"{written!r} was not checked by the policy") from None

    @property
    def guard(self) -> PathGuard:
        return PathGuard(hard_links=self.hard_links)
