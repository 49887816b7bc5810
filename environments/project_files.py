"""Files a session reads for itself from the project (instruction files, skills,
custom commands, hook and tool settings): only from inside the project.

A repository is hostile input. Its ``AGENTS.md`` may be a symlink to
``~/.aws/credentials``, and what these reads return goes into the prompt sent to
the provider (or into a skill the model reads), with no policy in between, since
the session, not the model, asked. So a project file is read as usual and then
its real path is resolved on the environment's host: a file that lies outside the
project's root is refused with :class:`OutsideProject` and its content dropped.

Resolved after the read, not before, so the common case (the file is absent)
costs one request, not three. Someone able to swap the link between the two
requests could already write the project, which is a different threat.
"""

from __future__ import annotations

import posixpath

from actors.kernel import ActorRef
from environments.errors import PermissionDenied
from protocol.environment import FileContent, ReadFile, ResolvePath

PROBE_TIMEOUT = 30.0


class OutsideProject(PermissionDenied):
    """A project file whose real path is outside the project (a symlink out)."""

    code = "outside_project"


def is_within(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it (both absolute and resolved)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


async def read_project_file(
    environment: ActorRef, path: str, root: str, *, limit: int | None = None
) -> FileContent:
    """The whole text of ``path`` as stored, read as the session's own probe, if its
    real path lies within ``root``; else :class:`OutsideProject`. Any refusal of the
    read itself (absent, unreadable) comes through as it is."""
    read = ReadFile(path, limit=limit, line_numbers=False, exact=True, probe=True)
    content: FileContent = await environment.ask(read, timeout=PROBE_TIMEOUT)
    real = await environment.ask(ResolvePath(path), timeout=PROBE_TIMEOUT)
    real_root = await environment.ask(ResolvePath(root), timeout=PROBE_TIMEOUT)
    if not is_within(posixpath.normpath(real.path), posixpath.normpath(real_root.path)):
        raise OutsideProject(f"{path} leads outside the project (to {real.path}); not read")
    return content
