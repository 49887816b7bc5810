"""Structured CLI tools made real: each YAML declaration becomes a registry tool
that runs its argument vector in the session's environment, never through a shell.

The user's file (``$XDG_CONFIG_HOME/troupe/tools.yaml``, default
``~/.config/troupe/tools.yaml``) is read on this machine; the project's
(``.troupe/tools.yaml`` in the working directory) is read through the environment,
so an SSH session gets the tools of the project on that host. A project's tools
load only once the user has trusted its directory (:mod:`actors.config.trust`);
until then a warning names what was ignored. A project tool replaces a user tool
of the same name. A file that cannot be used is a warning,
never a failed session.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from actors.config.trust import is_trusted, untrusted_line
from actors.kernel import ActorError, ActorRef, Rejection
from actors.tools.registry import Tool
from environments.errors import FileNotFound
from environments.project_files import read_project_file

if TYPE_CHECKING:
    from actors.tools.cli_tools import CliToolSpec

PROJECT_TOOLS = ".troupe/tools.yaml"


def user_tools_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "troupe" / "tools.yaml"


async def load_cli_tools(
    environment: ActorRef, working_dir: str, environ: Mapping[str, str] | None = None
) -> tuple[list[Tool], list[str]]:
    """The tools both files declare, and a warning for each file that is unusable."""
    specs: dict[str, CliToolSpec] = {}
    warnings: list[str] = []
    # The files' reader and checks (:mod:`actors.tools.cli_tools`) are imported only
    # when a file is there: most sessions have neither (issue 36).
    user_file = user_tools_path(environ)
    if await trio.to_thread.run_sync(user_file.is_file):
        from actors.tools.cli_tools import CliToolError, load_tools_file

        try:
            for spec in await trio.to_thread.run_sync(load_tools_file, user_file):
                specs[spec.name] = spec
        except CliToolError as exc:
            warnings.append(f"CLI tools not loaded: {exc}")
    project_file = posixpath.join(working_dir, PROJECT_TOOLS)
    try:
        content = await read_project_file(environment, project_file, working_dir)
    except FileNotFound:
        content = None
    except (ActorError, Rejection) as exc:
        warnings.append(f"CLI tools not loaded: {exc}")
        content = None
    if content is not None:
        from actors.tools.cli_tools import CliToolError, parse_tools_text

        try:
            if await trio.to_thread.run_sync(is_trusted, working_dir, environ):
                for spec in parse_tools_text(content.text, project_file):
                    specs[spec.name] = spec
            else:
                names = [spec.name for spec in _declared(content.text, project_file)]
                shown = [f"tool {name}" for name in names] or ["its tools"]
                warnings.append(f"{project_file}: {untrusted_line(shown, working_dir)}")
        except CliToolError as exc:
            warnings.append(f"CLI tools not loaded: {exc}")
    if not specs:  # the usual case: no tools file; the tool class is not needed
        return [], warnings
    from actors.tools.cli_tool import cli_tool

    return [cli_tool(spec) for spec in specs.values()], warnings


def _declared(text: str, source: str) -> list[CliToolSpec]:
    """An untrusted file's declarations, only to name them in the warning."""
    from actors.tools.cli_tools import CliToolError, parse_tools_text

    try:
        return parse_tools_text(text, source)
    except CliToolError:
        return []
