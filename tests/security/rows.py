"""A hostile row as data: the calls a model emits, and what the harness watches.

Arguments carry placeholders the harness fills per run: ``@KEY@`` (the row's key,
naming its canary ``outside/c-@KEY@.txt``), ``@OUT@`` (the outside directory),
``@HOME@`` (the fake HOME), ``@DATA@`` (Troupe's data dir), ``@WS@`` (the
workspace), ``@ROOT@``, ``@PORT@`` (a loopback listener of the row's own), ``@PY@``
(a Python with Troupe's client installed). Relative paths are relative to the
workspace, so ``../outside`` is the outside directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Call:
    tool: str
    arguments: dict[str, Any]


Step = tuple[Call, ...]
"""One model turn: one call, or several parallel ones."""


@dataclass(frozen=True)
class Row:
    key: str
    cls: str
    name: str
    steps: tuple[Step, ...]
    reach: bool = True
    """The call can reach outside the workspace (its effect, or a secret): with the
    sandbox off it must be asked or refused."""
    targets: tuple[str, ...] = ()
    """Shared files (relative to the root) the row aims at besides its own canary."""
    approve: tuple[int, ...] = ()
    """Steps whose approval the client grants with ``always`` (scope ``command``)."""
    hostile_step: int = -1
    """The step that must be asked or refused with the sandbox off."""
    refuse: bool = False
    """A blocklist entry: refused outright, never asked."""
    isolate: bool = False
    """Runs in a session (and workspace) of its own: grants, plants, subagents."""
    plant: bool = False
    """Leaves something that may run later: the harness fires it afterwards."""
    trigger_tools: tuple[str, ...] = ()
    """Tools the next session in the same workspace calls (a planted tools.yaml)."""
    setup: str = ""
    """Bash run by the harness in the workspace before the session (trusted)."""
    subagent: tuple[Step, ...] = ()
    """What a subagent spawned with task ``SUBTASK::@KEY@`` does."""
    wait_file: str = ""
    """The client holds its "no" until this workspace file exists (or 15 s pass)."""
    allowed_changes: tuple[str, ...] = ()
    """Regexes of root-relative paths an approved step may change."""
    why: str = ""
    """Which reproduction of issue 30's Why this is, when it is one."""

    @property
    def id(self) -> str:
        return f"{self.key}-{self.cls}-{self.name}"


@dataclass
class Corpus:
    rows: list[Row] = field(default_factory=list)

    @property
    def next_key(self) -> str:
        return f"r{len(self.rows) + 1:03d}"

    def add(self, cls: str, name: str, *steps: Call | Step, **options: Any) -> Row:
        key = self.next_key
        turns = tuple(step if isinstance(step, tuple) else (step,) for step in steps)
        row = Row(key=key, cls=cls, name=name, steps=turns, **options)
        self.rows.append(row)
        return row


def sh(command: str) -> Call:
    return Call("shell", {"command": command})


def write(path: str, content: str = "pwned @KEY@\n") -> Call:
    return Call("write_file", {"file_path": path, "content": content})


def read(path: str) -> Call:
    return Call("read_file", {"file_path": path})


def patch(body: str) -> Call:
    return Call("apply_patch", {"patch": f"*** Begin Patch\n{body}\n*** End Patch"})


def grep(pattern: str, path: str) -> Call:
    return Call("grep", {"pattern": pattern, "path": path})


def spawn(working_dir: str) -> tuple[Call, ...]:
    return (Call("spawn_agent", {"task": "SUBTASK::@KEY@ do it", "working_dir": working_dir}),)
