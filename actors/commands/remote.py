"""``troupe run --host NAME``: run the session on an SSH host.

``NAME`` is a ``[ssh_hosts.NAME]`` entry of a config file, or an ``ssh://`` target
(``ssh://dev@build.example.com:22``) or ``~/.ssh/config`` alias written out. The
server adds the host as an environment (``/environments/ssh/NAME``) unless it has
it already; a resumed session on a host gets its host back the same way.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, cast

from actors.commands.errors import EXIT_BAD_INPUT, CommandError
from actors.config import SSHHost
from protocol.environment_specs import SSHSpec
from protocol.wire import AddEnvironment, EnvironmentAdded, EnvironmentList, ListEnvironments

if TYPE_CHECKING:  # the types only: a command that reads an address needs no event loop
    from protocol.client import TroupeClient

SSH_PREFIX = "/environments/ssh/"


def host_entry(name: str, hosts: dict[str, SSHHost]) -> tuple[str, SSHHost]:
    """The configured host ``name``, or one made from a target given in full."""
    if name in hosts:
        return name, hosts[name]
    if name.startswith("ssh://") or "@" in name:
        short = re.sub(r"[^A-Za-z0-9_.-]+", "-", name.removeprefix("ssh://")).strip("-")
        return short, SSHHost(target=name)
    known = ", ".join(sorted(hosts)) or "none configured"
    raise CommandError(
        f"no SSH host {name!r} ({known}); add [ssh_hosts.{name}] to a config file or give "
        "ssh://user@host",
        EXIT_BAD_INPUT,
    )


async def ensure_host(client: TroupeClient, name: str, host: SSHHost) -> str:
    """The environment address of ``host`` on the server, adding it if needed."""
    listed = cast(EnvironmentList, await client.request(ListEnvironments))
    address = SSH_PREFIX + name
    if any(env.address == address for env in listed.environments):
        return address
    added = cast(
        EnvironmentAdded,
        await client.request(
            AddEnvironment,
            name=name,
            spec=SSHSpec(
                target=host.target,
                working_dir=host.working_dir,
                known_hosts=_expand(host.known_hosts),
                client_keys=[str(_expand(key)) for key in host.client_keys],
            ),
        ),
    )
    return added.environment.address


def _expand(path: str | None) -> str | None:
    """``~`` in a config file means the user's home, as in ``~/.ssh/config``."""
    return str(Path(path).expanduser()) if path else None


def host_of(environment: str) -> str | None:
    """The SSH host name in an environment address, if it is one."""
    return environment.removeprefix(SSH_PREFIX) if environment.startswith(SSH_PREFIX) else None
