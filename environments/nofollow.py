"""Opening a judged path exactly: no symbolic link followed anywhere in it.

The policy resolves a path once (``realpath``) and judges the result; the tool then
uses that result. Between the two, a directory of the path could be swapped for a
link pointing elsewhere. So a guarded path is opened without following any link:
``openat2`` with ``RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH``
(from ``/``) where the kernel has it (Linux 5.6+), otherwise one component at a
time with ``O_NOFOLLOW`` from the parent's descriptor. A link anywhere, put there
before or after the check, is refused (``ELOOP``/``ENOTDIR``), never followed.

A regular file with more than one hard link is refused unless allowed: a hard link
made inside the working directory to a file outside (``ln ~/.ssh/id_rsa k``) is a
second name for the outside file, and no path check can tell. The count is read
from the open descriptor (``fstat``), so a link made after the check is seen too.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import posixpath
import stat
import sys

_SYS_OPENAT2 = 437  # the same number on every Linux architecture
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_DIRECTORY = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class HardLinked(OSError):
    """The file has other names (more than one hard link), and that was not allowed."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]  # fmt: skip


def _openat2(dir_fd: int, path: str, flags: int) -> int | None:
    """``openat2`` refusing every link, or None when the kernel (or a seccomp
    filter) does not offer it (or this is not Linux: the module also runs on SSH
    hosts, see :mod:`environments.shell.exact`)."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    how = _OpenHow(flags, 0, _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS | _RESOLVE_BENEATH)
    fd = libc.syscall(_SYS_OPENAT2, dir_fd, os.fsencode(path), ctypes.byref(how),
                      ctypes.sizeof(how))  # fmt: skip
    if fd >= 0:
        return int(fd)
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EPERM):
        return None
    raise OSError(code, os.strerror(code), "/" + path)


def _components(path: str) -> list[str]:
    normal = path == "/" or posixpath.normpath(path) == path
    if not path.startswith("/") or "//" in path or not normal:
        raise OSError(errno.EINVAL, "not an absolute, normalised path", path)
    return [part for part in path.split("/") if part]


def open_directory(path: str, create: bool = False) -> int:
    """A descriptor (``O_PATH``) of the directory ``path``, reached with no link
    followed; ``create`` makes missing directories on the way (each one made
    relative to its parent's descriptor, never through a link)."""
    parts = _components(path)
    if parts and not create:
        with _root() as root:
            fd = _openat2(root, "/".join(parts), _DIRECTORY)
        if fd is not None:
            return fd
    fd = os.open("/", _DIRECTORY)
    try:
        for part in parts:
            try:
                child = os.open(part, _DIRECTORY, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                child = os.open(part, _DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


class _root:
    """The root directory's descriptor, for ``openat2`` beneath it."""

    def __enter__(self) -> int:
        self.fd = os.open("/", _DIRECTORY)
        return self.fd

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


def _split(path: str) -> tuple[str, str]:
    parts = _components(path)
    if not parts:
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    return "/" + "/".join(parts[:-1]), parts[-1]


def _checked_file(fd: int, path: str, hard_links: bool) -> os.stat_result:
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file", path)
    if info.st_nlink > 1 and not hard_links:
        raise HardLinked(errno.EPERM, f"has {info.st_nlink} hard links", path)
    return info


def read_file(path: str, hard_links: bool) -> bytes:
    """The bytes of the regular file at exactly ``path``."""
    parent, name = _split(path)
    directory = open_directory(parent)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=directory)  # fmt: skip
    finally:
        os.close(directory)
    with os.fdopen(fd, "rb") as handle:
        _checked_file(fd, path, hard_links)
        return handle.read()


def write_file(path: str, data: bytes, hard_links: bool) -> None:
    """Replace the contents of exactly ``path`` (created with its parents when
    missing). The file is checked before it is truncated."""
    parent, name = _split(path)
    directory = open_directory(parent, create=True)
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                     | os.O_CLOEXEC, 0o666, dir_fd=directory)  # fmt: skip
    finally:
        os.close(directory)
    with os.fdopen(fd, "wb") as handle:
        _checked_file(fd, path, hard_links)
        os.ftruncate(fd, 0)
        handle.write(data)


def delete_file(path: str, hard_links: bool) -> None:
    """Remove the name ``path`` (never a directory), reached with no link followed."""
    parent, name = _split(path)
    directory = open_directory(parent)
    try:
        info = os.stat(name, dir_fd=directory, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1 and not hard_links:
            raise HardLinked(errno.EPERM, f"has {info.st_nlink} hard links", path)
        os.unlink(name, dir_fd=directory)
    finally:
        os.close(directory)


def kind(path: str) -> str:
    """``file``, ``directory``, ``other`` or ``missing`` for exactly ``path``
    (a link on the way, or at the end, is ``other``)."""
    try:
        parent, name = _split(path)
    except IsADirectoryError:
        return "directory"
    try:
        directory = open_directory(parent)
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "other"
    try:
        mode = os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "other"
    finally:
        os.close(directory)
    if stat.S_ISREG(mode):
        return "file"
    return "directory" if stat.S_ISDIR(mode) else "other"


def list_tree(path: str, depth: int) -> list[tuple[str, bool, int | None]]:
    """(name relative to ``path``, is a directory, size) for the entries below the
    directory at exactly ``path``, ``depth`` levels down; links are listed, never
    entered."""
    entries: list[tuple[str, bool, int | None]] = []

    def visit(fd: int, prefix: str, level: int) -> None:
        listing = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
        try:
            names = sorted(os.listdir(listing))
        finally:
            os.close(listing)
        for name in names:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            is_dir = stat.S_ISDIR(info.st_mode)
            entries.append((prefix + name, is_dir, None if is_dir else info.st_size))
            if is_dir and level < depth:
                child = os.open(name, _DIRECTORY, dir_fd=fd)
                try:
                    visit(child, f"{prefix}{name}/", level + 1)
                finally:
                    os.close(child)

    top = open_directory(path)
    try:
        visit(top, "", 1)
    finally:
        os.close(top)
    return entries


SEARCH_LIMIT = 20_000
"""Entries looked at per search for a file's other names: the denied directories
are small (credentials); a search that runs out finds nothing, and the policy
still asks about the hard link."""


def other_name(info: os.stat_result, path: str, directories: tuple[str, ...]) -> str | None:
    """Another name of the file ``info`` describes (same device and inode) under
    ``directories``, walked without following links; None when there is none."""
    budget = SEARCH_LIMIT
    for top in directories:
        for directory, subdirectories, files in os.walk(top):
            budget -= len(files) + len(subdirectories)
            if budget < 0:
                return None
            for name in files:
                candidate = os.path.join(directory, name)
                if candidate == path:
                    continue
                try:
                    other = os.stat(candidate, follow_symlinks=False)
                except OSError:
                    continue
                if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
                    return candidate
        if os.path.isfile(top) and not os.path.islink(top):
            try:
                other = os.stat(top, follow_symlinks=False)
            except OSError:
                continue
            if top != path and (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
                return top
    return None
