"""The kinds a server knows out of the box: this machine, SSH hosts and Docker
containers. Apart from the registry (:mod:`environments.kinds`), which every kind's
module imports, so that the registry never imports a kind back."""

from __future__ import annotations

from environments.docker.kind import KIND as DOCKER
from environments.kinds import Kinds
from environments.local_kind import KIND as LOCAL
from environments.ssh.kind import KIND as SSH


def builtin_kinds() -> Kinds:
    """This machine, SSH hosts and Docker containers."""
    return Kinds([LOCAL, SSH, DOCKER])
