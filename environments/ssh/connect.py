"""asyncio side: opening one SSH connection, with keys, jump hosts and typed errors.

Keys named in ``client_keys`` are loaded once, up front, so that a missing file or
a passphrase problem is a :class:`KeyLoadFailed` naming the file instead of an
untyped crash or a misleading "host unreachable". A ``ProxyJump`` from the SSH
config is opened here, hop by hop, with the same explicit ``known_hosts`` and keys
as the target (asyncssh's own handling gives the hops only the config).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import asyncssh

from environments.errors import (
    AuthenticationFailed,
    ConnectionLost,
    HostKeyRejected,
    HostUnreachable,
    KeyLoadFailed,
)
from environments.ssh.target import SSHTarget

LINK_ERRORS = (asyncssh.Error, OSError, EOFError, asyncio.IncompleteReadError)
"""What a broken or closed link raises."""


@dataclass(frozen=True)
class ConnectOptions:
    """How to reach and trust the host; empty tuples mean asyncssh's defaults
    (``~/.ssh/known_hosts``, ``~/.ssh/config``, the default identities and ssh-agent).

    The defaults work against a stock sshd: ``channels_per_connection`` is only where
    the pool starts (it learns a lower limit from the first refused channel), one
    session per connection stays free for the kill path, and at most
    ``max_connections`` connections are opened to the host before callers wait.
    A dead peer is noticed after about ``keepalive_interval * keepalive_count_max``
    seconds (20 s by default); a connect gives up after ``connect_timeout``.
    """

    known_hosts: Any = ()
    client_keys: Any = ()
    config: Any = ()
    passphrase: str | None = None
    agent_forwarding: bool = False
    keepalive_interval: float = 5.0
    keepalive_count_max: int = 4
    connect_timeout: float = 10.0
    channels_per_connection: int = 8
    max_connections: int = 4


def classify(error: BaseException, target: SSHTarget) -> Exception:
    """Turn an asyncssh or socket error met on a live link into a typed refusal."""
    if isinstance(error, asyncssh.HostKeyNotVerifiable):
        return HostKeyRejected(f"{target}: host key not trusted ({error}); check known_hosts")
    if isinstance(error, asyncssh.PermissionDenied):
        return AuthenticationFailed(f"{target}: authentication failed ({error})")
    if isinstance(error, asyncssh.ConnectionLost | asyncssh.DisconnectError | EOFError):
        return ConnectionLost(f"{target}: connection lost ({error or type(error).__name__})")
    if isinstance(error, TimeoutError | asyncio.TimeoutError):
        return HostUnreachable(f"{target}: timed out")
    return ConnectionLost(f"{target}: {type(error).__name__}: {error}")


def load_client_keys(options: ConnectOptions) -> Any:
    """The keys named in ``client_keys``, loaded now; () keeps asyncssh's defaults."""
    if not options.client_keys:
        return ()
    paths = [options.client_keys] if isinstance(options.client_keys, str) else options.client_keys
    keys: list[asyncssh.SSHKeyPair] = []
    for path in paths:
        try:
            keys.extend(asyncssh.load_keypairs(path, options.passphrase))
        except asyncssh.KeyImportError as exc:
            hint = "" if options.passphrase else " (set a passphrase, or load the key in ssh-agent)"
            raise KeyLoadFailed(f"cannot load client key {path}: {exc}{hint}") from None
        except OSError as exc:
            raise KeyLoadFailed(f"cannot read client key {path}: {exc.strerror or exc}") from None
        except (ValueError, asyncssh.Error) as exc:
            raise KeyLoadFailed(f"cannot load client key {path}: {exc}") from None
    return keys


def _hops(spec: str) -> list[tuple[str, int | tuple[()], str | tuple[()]]]:
    hops: list[tuple[str, int | tuple[()], str | tuple[()]]] = []
    for hop in spec.split(","):
        user, _, host = hop.rpartition("@")
        name, _, port = host.partition(":")
        hops.append((name, int(port) if port else (), user or ()))
    return hops


async def _jump_spec(target: SSHTarget, common: dict[str, Any]) -> str | None:
    """The ProxyJump the SSH config names for ``target``, if any."""
    if not common.get("config"):
        return None
    settings = await asyncssh.SSHClientConnectionOptions.construct(
        host=target.host, port=target.port or (), username=target.username or (), **common
    )
    tunnel = settings.tunnel
    return tunnel if isinstance(tunnel, str) and tunnel.lower() != "none" else None


async def _open(target: SSHTarget, common: dict[str, Any]) -> asyncssh.SSHClientConnection:
    hops: list[asyncssh.SSHClientConnection] = []
    try:
        spec = await _jump_spec(target, common)
        for host, port, user in _hops(spec) if spec else []:
            hop = await asyncssh.connect(
                host, port, username=user, tunnel=hops[-1] if hops else (), **common
            )
            hops.append(hop)
        connection = await asyncssh.connect(
            target.host,
            target.port or (),
            username=target.username or (),
            tunnel=hops[-1] if hops else (),
            **common,
        )
    except BaseException:
        for hop in reversed(hops):
            hop.close()
        raise
    return connection


async def open_connection(
    target: SSHTarget, options: ConnectOptions, keys: Any
) -> asyncssh.SSHClientConnection:
    """A new authenticated connection, or a typed refusal saying why not."""
    common: dict[str, Any] = {
        "known_hosts": options.known_hosts,
        "client_keys": keys,
        "passphrase": options.passphrase,
        "config": options.config,
        "keepalive_interval": options.keepalive_interval,
        "keepalive_count_max": options.keepalive_count_max,
        "agent_forwarding": options.agent_forwarding,
    }
    try:
        return await asyncio.wait_for(_open(target, common), options.connect_timeout)
    except asyncssh.HostKeyNotVerifiable as exc:
        raise classify(exc, target) from None
    except asyncssh.PermissionDenied as exc:
        raise classify(exc, target) from None
    except asyncssh.KeyImportError as exc:
        raise KeyLoadFailed(f"{target}: cannot load a client key: {exc}") from None
    except TimeoutError:
        raise HostUnreachable(
            f"{target}: no answer within {options.connect_timeout:g} s (connect_timeout)"
        ) from None
    except (OSError, asyncssh.Error) as exc:
        raise HostUnreachable(f"{target}: cannot connect: {exc}") from None
    except (ValueError, TypeError) as exc:  # asyncssh's refusal of a bad option or config
        raise HostUnreachable(f"{target}: cannot connect: {type(exc).__name__}: {exc}") from None


async def login_shell_is_bash(connection: asyncssh.SSHClientConnection) -> bool | None:
    """Ask the login shell once per host whether it is bash; None if it cannot tell."""
    try:
        result = await asyncio.wait_for(
            connection.run('echo "${BASH_VERSION:+bash}"', encoding="utf-8"), 10
        )
    except (TimeoutError, *LINK_ERRORS):
        return None
    return str(result.stdout or "").strip() == "bash"
