"""Typed refusals of environment requests.

Each is a :class:`Rejection`: the asker gets it as itself, the environment actor
keeps serving. ``code`` is the stable name a wire client sees.
"""

from __future__ import annotations

from actors.kernel.errors import Rejection


class EnvironmentError_(Rejection):
    """Base of every environment refusal."""

    code = "environment_error"


class FileNotFound(EnvironmentError_):
    code = "file_not_found"


class NotAFile(EnvironmentError_):
    """The path is a directory (or another non-regular file) where a file is needed."""

    code = "not_a_file"


class NotADirectory(EnvironmentError_):
    code = "not_a_directory"


class PermissionDenied(EnvironmentError_):
    code = "permission_denied"


class HardLinkRefused(PermissionDenied):
    """A regular file with more than one hard link, where the policy did not allow
    one: its other names may be outside the working directory."""

    code = "hard_link"


class LinkInPath(PermissionDenied):
    """A judged path that now has a symbolic link in it (it was swapped after the
    check): refused rather than followed."""

    code = "link_in_path"


class BinaryFile(EnvironmentError_):
    code = "binary_file"


class NotUtf8(BinaryFile):
    """An exact read of a file that is not valid UTF-8. ``detail`` says where, in
    Rust's ``Utf8Error`` wording, which codex's apply_patch shows."""

    code = "not_utf8"

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(f"{path} is not valid UTF-8: {detail}")
        self.detail = detail


class InvalidRequest(EnvironmentError_):
    """Bad arguments: an invalid regex or glob, a negative offset."""

    code = "invalid_request"


class ReadOnly(EnvironmentError_):
    code = "read_only"


class HostUnreachable(EnvironmentError_):
    """Could not connect (refused, unknown host, timed out)."""

    code = "host_unreachable"


class HostKeyRejected(EnvironmentError_):
    """The host key is unknown or changed: refused, as known_hosts verification asks."""

    code = "host_key_rejected"


class AuthenticationFailed(EnvironmentError_):
    code = "authentication_failed"


class ConnectionLost(EnvironmentError_):
    """The connection dropped while the request was in flight; the next one reconnects."""

    code = "connection_lost"


class EnvironmentUnavailable(EnvironmentError_):
    """A wrapped environment stopped or failed; the wrapper itself is fine."""

    code = "environment_unavailable"


class InvalidPath(EnvironmentError_):
    """A path no file system accepts: a NUL byte, a name or path too long, a loop of
    symbolic links."""

    code = "invalid_path"


class FileSystemError(EnvironmentError_):
    """Any other refusal of the operating system (disk full, read-only file system,
    too many open files, ...), with its text: the caller or the model reads it."""

    code = "os_error"


class KeyLoadFailed(EnvironmentError_):
    """A client key could not be loaded: missing file, wrong or absent passphrase,
    unknown format. The message names the file."""

    code = "key_load_failed"


class EnvironmentExists(EnvironmentError_):
    """An environment of that name is already there; the existing one is untouched."""

    code = "already_exists"


class SandboxUnavailable(EnvironmentError_):
    """The policy requires the OS sandbox and this environment cannot give it:
    ``bwrap`` is not installed, or the environment is remote."""

    code = "sandbox_unavailable"
