"""Where an SSH environment connects: ``ssh://user@host:port`` or a config alias.

An alias is handed to asyncssh as it is, so ``~/.ssh/config`` decides the real
host name, user, port, identity file and ProxyJump, as it would for ``ssh``.
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

import msgspec

from environments.errors import InvalidRequest


class SSHTarget(msgspec.Struct, frozen=True):
    host: str
    port: int | None = None
    username: str | None = None

    def __str__(self) -> str:
        user = f"{self.username}@" if self.username else ""
        port = f":{self.port}" if self.port else ""
        return f"ssh://{user}{self.host}{port}"


def parse_target(text: str) -> SSHTarget:
    """Parse ``ssh://[user@]host[:port]`` or a bare alias (``build-box``)."""
    if not text.startswith("ssh://"):
        if not text or any(c in text for c in "/@: "):
            raise InvalidRequest(f"{text!r} is neither ssh://user@host:port nor a config alias")
        return SSHTarget(host=text)
    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError:
        raise InvalidRequest(f"invalid port in {text!r}") from None
    if not parts.hostname or parts.path not in ("", "/"):
        raise InvalidRequest(f"{text!r} must look like ssh://user@host:port")
    return SSHTarget(
        host=parts.hostname,
        port=port,
        username=unquote(parts.username) if parts.username else None,
    )
