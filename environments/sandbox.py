"""The OS sandbox for commands: bubblewrap (Debian ``bubblewrap``), the boundary.

Classification is advice; this is what holds. The "workspace-write" profile:

- the whole filesystem read-only, a private ``/tmp``;
- the writable paths (the working directory) bound read-write, except the
  protected paths inside them (``.git/hooks``, ``.git/config``, ``.troupe``...,
  and a worktree's ``.git`` file), bound read-only again where they exist. Every
  directory between a writable root and a protected path is bound over itself, so
  it is a mount point that cannot be renamed or removed (``mv .git x && cp -r x
  .git`` would otherwise swap in a writable copy);
- the hidden paths (credentials, Troupe's own token and store) replaced by an empty
  directory or ``/dev/null``, after the writable ones, so they stay hidden inside a
  writable tree;
- its own PID namespace (``/proc`` shows only the sandbox: no
  ``/proc/<troupe>/root`` or ``environ``), IPC namespace, and no network but its
  own loopback unless the policy allows it;
- no controlling terminal: every command already starts as a session of its own
  without one (``start_new_session`` locally, an SSH exec channel without a pty or
  ``setsid`` remotely), so bwrap's ``--new-session`` is not used.

Killing: the whole sandbox stays in the process group Troupe created for the
command, so the usual SIGTERM / grace / SIGKILL ladder on the group reaches every
part of it, the sandbox's PID 1 included; once that dies, the kernel kills
everything else in the namespace, and a background job cannot outlive the command
that started it. ``--new-session`` would take the PID 1 out of the group, and it
only binds itself to the outer bwrap (``--die-with-parent``) at the very end of
its setup: a command killed in between (a shutdown just after a start, on a loaded
machine) left the PID 1 and the command running for good.

The mounts are planned by pure code from facts about the paths (where each really
is, what kind of file), so the local environment and an SSH host (whose facts come
from one remote query) apply exactly the same profile.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shlex
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

import msgspec
import trio

from environments.errors import SandboxUnavailable
from protocol.environment import Sandbox, SandboxState

BASE_FLAGS = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
              "--unshare-pid", "--unshare-ipc", "--die-with-parent")  # fmt: skip
"""Every sandbox: read-only root, fresh /dev, /proc of its own PID namespace,
private /tmp, and bound to the process that starts it. No ``--new-session``: it
would move the sandbox out of the command's process group (see the module's
docstring); the command's own session has no controlling terminal already."""

PROBE_TIMEOUT_S = 10.0
WORKS = "bwrap works"
NOT_FOUND = "bwrap not found"

Kind = Literal["dir", "file", "missing"]


class PathFacts(msgspec.Struct, frozen=True):
    """What a configured path is on the environment's host: ``real`` with every
    symlink resolved (empty when missing) and its kind."""

    real: str
    kind: Kind


def find_bwrap() -> str | None:
    """The bubblewrap binary, or None where it is not installed."""
    return shutil.which("bwrap")


def probe_argv(bwrap: str) -> list[str]:
    """A run of ``true`` with every namespace the profile uses: user namespaces may
    be off, or bwrap not setuid where it must be, so finding it is not enough."""
    return [bwrap, *BASE_FLAGS, "--unshare-net", "--", "true"]


def _failure(bwrap: str, stderr: bytes) -> SandboxState:
    said = stderr.decode(errors="replace").strip().splitlines()
    detail = said[-1][:200] if said else "it exited with an error"
    return SandboxState(False, f"{bwrap} does not run here: {detail}")


async def _kill_probe_group(process: trio.Process) -> None:
    """End a probe cut short (its caller stopped, or it took too long): SIGKILL to
    its whole group. Signalling bwrap alone left its sandbox's PID 1 behind when
    bwrap died before that PID 1 had bound itself to it (``--die-with-parent``
    comes late in its setup), and a namespace's PID 1 ignores SIGTERM: it stayed,
    an orphan, for good. The group holds both (no ``--new-session``)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


async def probe_local(bwrap: str | None) -> SandboxState:
    """Whether ``bwrap`` really confines a command on this machine (one run, in a
    process group of its own, so that cutting it short ends all of it)."""
    if bwrap is None:
        return SandboxState(False, NOT_FOUND)
    with trio.move_on_after(PROBE_TIMEOUT_S):
        try:
            done = await trio.run_process(
                probe_argv(bwrap), capture_stdout=True, capture_stderr=True, check=False,
                start_new_session=True, deliver_cancel=_kill_probe_group,
            )  # fmt: skip
        except OSError as error:
            return SandboxState(False, f"{bwrap} does not run here: {error.strerror or error}")
        if done.returncode == 0:
            return SandboxState(True, WORKS)
        return _failure(bwrap, done.stderr)
    return SandboxState(False, f"{bwrap} did not answer within {PROBE_TIMEOUT_S:g} s")


def probe_local_now(bwrap: str | None) -> SandboxState:
    """:func:`probe_local` for code outside the event loop (``troupe config``)."""
    if bwrap is None:
        return SandboxState(False, NOT_FOUND)
    try:
        process = subprocess.Popen(
            probe_argv(bwrap), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
    except OSError as error:
        return SandboxState(False, f"{bwrap} does not run here: {error}")
    try:
        _, stderr = process.communicate(timeout=PROBE_TIMEOUT_S)
    except BaseException as error:  # the timeout, or Ctrl-C: the whole group, as above
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        if not isinstance(error, subprocess.TimeoutExpired):
            raise
        return SandboxState(False, f"{bwrap} does not run here: {error}")
    return SandboxState(True, WORKS) if process.returncode == 0 else _failure(bwrap, stderr)


def expand_home(path: str, home: str) -> str:
    """``~`` and ``~/x`` against the host's home directory; other paths unchanged."""
    if path == "~" or path.startswith("~/"):
        return home.rstrip("/") + path[1:] if home != "/" else "/" + path[2:]
    return path


def _git_file(path: str) -> str:
    return posixpath.join(path, ".git")


def spec_paths(spec: Sandbox) -> list[str]:
    """Every path the plan needs facts about, as configured (``~`` unexpanded)."""
    git_files = (_git_file(path) for path in spec.writable)
    return list(dict.fromkeys((*spec.writable, *git_files, *spec.protected, *spec.hidden)))


def local_facts(paths: Iterable[str], home: str) -> dict[str, PathFacts]:
    """The facts of ``paths`` on this machine."""
    facts: dict[str, PathFacts] = {}
    for path in paths:
        expanded = expand_home(path, home)
        real = os.path.realpath(expanded)
        if os.path.isdir(real):
            facts[path] = PathFacts(real, "dir")
        elif os.path.lexists(real):
            facts[path] = PathFacts(real, "file")
        else:
            facts[path] = PathFacts("", "missing")
    return facts


def _inside(path: str, root: str) -> bool:
    return root == "/" or path == root or path.startswith(root.rstrip("/") + "/")


def mount_args(spec: Sandbox, facts: Mapping[str, PathFacts]) -> list[str]:
    """The bwrap mount arguments of ``spec``, from the facts of its paths."""
    args: list[str] = []
    roots: list[str] = []
    for path in spec.writable:
        fact = facts.get(path)
        if fact is not None and fact.kind == "dir":
            roots.append(fact.real)
            args += ["--bind", fact.real, fact.real]
    pinned: set[str] = set(roots)
    for path in spec.writable:
        # A git worktree's ``.git`` is a file naming the real git directory: rewritten,
        # it would point the user's next git command at hooks the model wrote.
        git = facts.get(_git_file(path))
        if git is not None and git.kind == "file" and any(_inside(git.real, r) for r in roots):
            args += ["--ro-bind", git.real, git.real]
    for path in spec.protected:
        fact = facts.get(path)
        if fact is None or fact.kind == "missing":
            continue  # nothing to protect yet; see docs/decisions.md
        root = next((r for r in roots if _inside(fact.real, r) and fact.real != r), None)
        if root is None:
            continue  # already read-only: outside every writable root
        for directory in _between(root, fact.real):
            if directory not in pinned:
                pinned.add(directory)
                args += ["--bind", directory, directory]
        args += ["--ro-bind", fact.real, fact.real]
    shown = [f for p in spec.hidden if (f := facts.get(p)) is not None and f.kind != "missing"]
    hidden_dirs = [f.real for f in shown if f.kind == "dir"]
    for fact in shown:
        if any(_inside(fact.real, d) and fact.real != d for d in hidden_dirs):
            continue  # already unseen in a hidden directory, which has no mount point for it
        if fact.kind == "dir":
            args += ["--tmpfs", fact.real, "--remount-ro", fact.real]
        else:
            args += ["--ro-bind", "/dev/null", fact.real]
    if not spec.network:
        args.append("--unshare-net")
    return args


def _between(root: str, path: str) -> list[str]:
    """The directories strictly between ``root`` and ``path``, outermost first."""
    parent = posixpath.dirname(path)
    chain: list[str] = []
    while parent != root and _inside(parent, root) and parent != "/":
        chain.append(parent)
        parent = posixpath.dirname(parent)
    return list(reversed(chain))


def bwrap_argv(
    bwrap: str, spec: Sandbox, argv: Sequence[str], facts: Mapping[str, PathFacts] | None = None
) -> list[str]:
    """``argv`` wrapped in bubblewrap according to ``spec`` (facts from this
    machine unless given)."""
    if facts is None:
        facts = local_facts(spec_paths(spec), os.path.expanduser("~"))
    # TMPDIR points at the private /tmp: the host's temporary directory, wherever
    # it was, is read-only inside.
    return [bwrap, *BASE_FLAGS, *mount_args(spec, facts), "--setenv", "TMPDIR", "/tmp",
            "--", *argv]  # fmt: skip


def launched(wrapped: Sequence[str]) -> list[str]:
    """``wrapped`` (a bwrap command line) as a local process starts it: under a
    shell (``sh``, the lightest) that waits for it.

    ``--die-with-parent`` ties bwrap to the thread that forked it, and trio forks
    processes from worker threads that exit after a few idle seconds: bwrap would be
    killed with them, mid-command. The shell in between is single-threaded and
    lives as long as bwrap; it is in the same process group as bwrap and the whole
    sandbox, so the kill ladder ends them all. ``; exit $?`` keeps the shell from
    replacing itself with bwrap, and passes its status on.
    """
    return ["sh", "-c", '"$@"; exit $?', "troupe-sandbox", *wrapped]


def facts_script(paths: Sequence[str]) -> str:
    """Bash printing the facts of ``paths`` on a remote host, NUL-separated: the
    kind and the resolved path of each (``~`` expanded against its HOME)."""
    quoted = " ".join(shlex.quote(path) for path in paths)
    return (
        f"for __p in {quoted}; do "
        'case "$__p" in "~") __p=$HOME;; "~/"*) __p=$HOME/${__p#"~/"};; esac; '
        'if __r=$(realpath -e -- "$__p" 2>/dev/null); then '
        'if [ -d "$__r" ]; then __k=dir; else __k=file; fi; else __r=; __k=missing; fi; '
        'printf \'%s\\0%s\\0\' "$__k" "$__r"; done'
    )


def parse_facts(paths: Sequence[str], output: str) -> dict[str, PathFacts]:
    """The answer of :func:`facts_script` (a short or garbled one: missing paths,
    so nothing is bound that was not seen)."""
    fields = output.split("\0")
    facts: dict[str, PathFacts] = {}
    for index, path in enumerate(paths):
        kind, real = [*fields[2 * index : 2 * index + 2], "", ""][:2]
        if not real.startswith("/"):
            facts[path] = PathFacts("", "missing")
        elif kind == "dir":
            facts[path] = PathFacts(real, "dir")
        elif kind == "file":
            facts[path] = PathFacts(real, "file")
        else:
            facts[path] = PathFacts("", "missing")
    return facts


PROBE_SCRIPT = (
    'if ! __b=$(command -v bwrap); then echo missing; exit 0; fi; printf "%s\\n" "$__b"; '
    '"$__b" ' + " ".join(shlex.quote(f) for f in BASE_FLAGS) + " --unshare-net -- true 2>&1 "
    '| tail -n 1; echo "status=${PIPESTATUS[0]}"'
)
"""Bash that finds and tries bwrap on a remote host: ``missing``, or its path, what
it said and its exit status."""


def parse_probe(output: str) -> tuple[str | None, SandboxState]:
    """The remote bwrap's path and state from :data:`PROBE_SCRIPT`'s output."""
    lines = output.strip().splitlines()
    if not lines or lines[0] == "missing":
        return None, SandboxState(False, NOT_FOUND)
    bwrap = lines[0]
    if lines[-1] == "status=0":
        return bwrap, SandboxState(True, WORKS)
    said = lines[1] if len(lines) > 2 else "it exited with an error"
    return bwrap, SandboxState(False, f"{bwrap} does not run here: {said[:200]}")


def refusal(state: SandboxState) -> str:
    """The one line a ``sandbox = "on"`` command is refused with."""
    return f"sandbox = on, but this environment cannot sandbox commands ({state.reason})"


def sandboxed_argv(
    bwrap: str | None, state: SandboxState, spec: Sandbox | None, argv: list[str],
    facts: Callable[[Sandbox], Mapping[str, PathFacts]] | None = None,
) -> list[str]:  # fmt: skip
    """What to run for ``argv`` under ``spec``: wrapped where the sandbox works;
    unwrapped where it is optional and does not; a typed refusal where it is
    required and does not."""
    if spec is None:
        return argv
    if not state.available or bwrap is None:
        if spec.required:
            raise SandboxUnavailable(refusal(state))
        return argv
    return bwrap_argv(bwrap, spec, argv, facts(spec) if facts is not None else None)
