"""The OS sandbox for local commands: bubblewrap (Debian ``bubblewrap``).

Classification is advice; this is the boundary. The command sees the whole
filesystem read-only except the writable paths (the working directory and a
private /tmp), has no network unless the policy allows it, and dies with its
parent. The sandbox does not start a new session or PID namespace, so the
command stays in the process group Troupe created and the SIGTERM / SIGKILL
ladder reaches it as before.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence

import msgspec


class SandboxSpec(msgspec.Struct, frozen=True):
    """How to wrap one command: what may be written, and whether the network works."""

    writable: tuple[str, ...]
    network: bool = False


def find_bwrap() -> str | None:
    """The bubblewrap binary, or None where it is not installed."""
    return shutil.which("bwrap")


def bwrap_argv(bwrap: str, spec: SandboxSpec, argv: Sequence[str]) -> list[str]:
    """``argv`` wrapped in bubblewrap according to ``spec``."""
    wrapped = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
               "--tmpfs", "/tmp", "--die-with-parent"]  # fmt: skip
    if not spec.network:
        wrapped.append("--unshare-net")
    for path in spec.writable:
        real = os.path.realpath(path)
        if os.path.exists(real):
            wrapped += ["--bind", real, real]
    return [*wrapped, "--", *argv]
