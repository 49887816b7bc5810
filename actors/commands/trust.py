"""``troupe trust [DIR]``: let a project's ``.troupe/`` settings that run code or
send credentials take effect (its MCP servers, endpoints, SSH hosts, YAML tools).

``--list`` prints the trusted directories, ``--revoke`` takes one back. At a
terminal, ``troupe run`` asks instead (:func:`ask_to_trust`). The list is
the user's (:mod:`actors.config.trust`); a project cannot write itself into it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from actors.commands.errors import EXIT_BAD_INPUT, CommandError
from actors.config.trust import (
    TrustError,
    is_trusted,
    project_root,
    set_trust,
    trust_file,
    trusted_directories,
)


def run(args: argparse.Namespace) -> int:
    try:
        if args.list:
            if args.directory is not None or args.revoke:
                raise CommandError("--list takes no directory", EXIT_BAD_INPUT)
            for directory in trusted_directories():
                print(directory)
            return 0
        given = Path(args.directory or ".").expanduser()
        if not given.is_dir() and not args.revoke:
            raise CommandError(f"{given} is not a directory", EXIT_BAD_INPUT)
        root = project_root(given) if given.is_dir() else given.absolute()
        changed = set_trust(root, not args.revoke, None)
    except TrustError as error:
        raise CommandError(str(error)) from None
    if args.revoke:
        print(f"no longer trusted: {root}" if changed else f"{root} was not trusted")
    else:
        state = "trusted" if changed else "already trusted"
        print(f"{state}: {root} (its .troupe/ settings take effect; list in {trust_file()})")
    return 0


def ask_to_trust(workdir: Path, ignored: str | None) -> bool:
    """At a terminal, ``troupe run`` asks once whether to trust the project whose
    settings were just ignored (``ignored``: the line already printed; a project
    ``tools.yaml`` counts too). True when the user said yes and it is now trusted."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return False
    root = project_root(workdir)
    tools = workdir / ".troupe" / "tools.yaml"
    untrusted_tools = tools.is_file() and not is_trusted(workdir)
    if ignored is None and not untrusted_tools:
        return False
    if ignored is None:
        print(f"troupe: {tools}: ignored until you trust {workdir}", file=sys.stderr)
    sys.stderr.write(f"Trust {root} (its .troupe/ may run programs)? (yes/no) ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        return False
    try:
        set_trust(root, True)
    except TrustError as error:
        raise CommandError(str(error)) from None
    print(f"trusted: {root}", file=sys.stderr)
    return True
