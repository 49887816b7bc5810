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

from environments.errors import SandboxUnavailable
from protocol.environment import Sandbox

MISSING_BWRAP = (
    "the policy requires the OS sandbox but bubblewrap (bwrap) is not installed "
    "(apt-get install bubblewrap, or choose a policy without sandbox)"
)


def find_bwrap() -> str | None:
    """The bubblewrap binary, or None where it is not installed."""
    return shutil.which("bwrap")


def bwrap_argv(bwrap: str, spec: Sandbox, argv: Sequence[str]) -> list[str]:
    """``argv`` wrapped in bubblewrap according to ``spec``.

    Mounts apply in order: the read-only root, a private /tmp, then the writable
    paths (a working directory under /tmp is bound over the private one), then the
    hidden paths, so a denied path inside a writable one stays hidden.
    """
    wrapped = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
               "--tmpfs", "/tmp", "--die-with-parent"]  # fmt: skip
    if not spec.network:
        wrapped.append("--unshare-net")
    for path in spec.writable:
        real = os.path.realpath(os.path.expanduser(path))
        if os.path.exists(real):
            wrapped += ["--bind", real, real]
    for path in spec.hidden:
        real = os.path.realpath(os.path.expanduser(path))
        if os.path.isdir(real):
            wrapped += ["--tmpfs", real]
        elif os.path.exists(real):
            wrapped += ["--ro-bind", "/dev/null", real]
    return [*wrapped, "--", *argv]


def sandboxed_argv(bwrap: str | None, spec: Sandbox | None, argv: list[str]) -> list[str]:
    """What to run for ``argv`` under ``spec``: wrapped when the sandbox is asked
    for and bwrap is there; unwrapped when it is optional and missing; a typed
    refusal when it is required and missing."""
    if spec is None:
        return argv
    if bwrap is None:
        if spec.required:
            raise SandboxUnavailable(MISSING_BWRAP)
        return argv
    return bwrap_argv(bwrap, spec, argv)
