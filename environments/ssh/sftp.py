"""asyncio side: file operations over SFTP, with SFTP errors turned into refusals."""

from __future__ import annotations

import posixpath
import stat
from collections.abc import Awaitable, Callable
from typing import TypeVar

import asyncssh

from environments.errors import (
    FileNotFound,
    NotADirectory,
    NotAFile,
    PermissionDenied,
)
from environments.ssh.pool import LINK_ERRORS, HostPool, classify
from protocol.environment import DirEntry, PathKind

T = TypeVar("T")


async def _guard(pool: HostPool, path: str, work: Callable[[], Awaitable[T]]) -> T:
    try:
        return await work()
    except (asyncssh.SFTPNoSuchFile, asyncssh.SFTPNoSuchPath):
        raise FileNotFound(f"{path} does not exist") from None
    except asyncssh.SFTPPermissionDenied:
        raise PermissionDenied(f"permission denied: {path}") from None
    except asyncssh.SFTPNotADirectory:
        raise NotADirectory(f"{path}: a parent is not a directory") from None
    except asyncssh.SFTPFailure as exc:
        raise NotAFile(f"{path}: {exc.reason}") from None
    except LINK_ERRORS as exc:
        raise classify(exc, pool.target) from None


async def home_directory(pool: HostPool) -> str:
    sftp = await pool.sftp()
    return await _guard(pool, ".", lambda: sftp.realpath("."))


async def read_bytes(pool: HostPool, path: str) -> bytes:
    sftp = await pool.sftp()

    async def read() -> bytes:
        attributes = await sftp.stat(path)
        if attributes.permissions is not None and stat.S_ISDIR(attributes.permissions):
            raise NotAFile(f"{path} is a directory")
        async with sftp.open(path, "rb") as handle:
            return await handle.read()

    return await _guard(pool, path, read)


async def write_bytes(pool: HostPool, path: str, data: bytes) -> None:
    sftp = await pool.sftp()

    async def write() -> None:
        parent = posixpath.dirname(path)
        if parent:
            await sftp.makedirs(parent, exist_ok=True)
        async with sftp.open(path, "wb") as handle:
            await handle.write(data)

    await _guard(pool, path, write)


async def exists(pool: HostPool, path: str) -> bool:
    sftp = await pool.sftp()
    return await _guard(pool, path, lambda: sftp.exists(path))


async def is_directory(pool: HostPool, path: str) -> bool:
    sftp = await pool.sftp()
    return await _guard(pool, path, lambda: sftp.isdir(path))


async def list_tree(pool: HostPool, root: str, depth: int) -> list[DirEntry]:
    sftp = await pool.sftp()
    entries: list[DirEntry] = []

    async def visit(directory: str, level: int) -> None:
        children = await sftp.readdir(directory)
        for child in sorted(children, key=lambda c: c.filename):
            name = str(child.filename)
            if name in (".", ".."):
                continue
            mode = child.attrs.permissions or 0
            is_dir = stat.S_ISDIR(mode)
            full = posixpath.join(directory, name)
            relative = posixpath.relpath(full, root)
            entries.append(DirEntry(relative, is_dir, None if is_dir else child.attrs.size))
            if is_dir and level < depth:
                await visit(full, level + 1)

    async def walk() -> list[DirEntry]:
        if not await sftp.isdir(root):
            raise (NotADirectory if await sftp.exists(root) else FileNotFound)(
                f"{root} is not a directory"
            )
        await visit(root, 1)
        return entries

    return await _guard(pool, root, walk)


async def path_kind(pool: HostPool, path: str) -> PathKind:
    sftp = await pool.sftp()

    async def kind() -> PathKind:
        try:
            attributes = await sftp.stat(path)
        except (asyncssh.SFTPNoSuchFile, asyncssh.SFTPNoSuchPath):
            return "missing"
        mode = attributes.permissions or 0
        if stat.S_ISREG(mode):
            return "file"
        return "directory" if stat.S_ISDIR(mode) else "other"

    return await _guard(pool, path, kind)


async def delete_file(pool: HostPool, path: str) -> None:
    sftp = await pool.sftp()

    async def delete() -> None:
        if await sftp.isdir(path):
            raise NotAFile(f"{path} is a directory")
        await sftp.remove(path)

    await _guard(pool, path, delete)
