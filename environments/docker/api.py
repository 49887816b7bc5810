"""The few Docker Engine API calls the Docker environment needs, over httpx.

The Engine API is plain HTTP; on a Unix socket httpx speaks it through its
transport's ``uds=`` (anyio underneath, so it runs under trio). ``DOCKER_HOST`` is
honoured (``unix://PATH``, or ``tcp://HOST:PORT`` with TLS from ``DOCKER_CERT_PATH``
when ``DOCKER_TLS_VERIFY`` is set), as the docker CLI does. An exec's output is the
daemon's multiplexed stream (8-byte frame headers naming stdout or stderr), read
as it arrives.
"""

from __future__ import annotations

import json
import os
import ssl
import struct
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal

import httpx

from environments.errors import EnvironmentError_

DEFAULT_SOCKET = "/var/run/docker.sock"
API_VERSION = "v1.41"
"""Docker 20.10's API, the oldest this speaks; newer daemons serve it too."""
_HEADER = struct.Struct(">BxxxI")


class DockerError(EnvironmentError_):
    """The Docker daemon refused a request or could not be reached."""


class ContainerGone(DockerError):
    """The container is missing or not running (removed, or its init ended)."""


def _transport(host: str) -> tuple[httpx.AsyncBaseTransport, str]:
    if host.startswith("unix://"):
        return httpx.AsyncHTTPTransport(uds=host.removeprefix("unix://")), "http://docker"
    if host.startswith("tcp://"):
        address = host.removeprefix("tcp://")
        if os.environ.get("DOCKER_TLS_VERIFY") or os.environ.get("DOCKER_CERT_PATH"):
            certs = os.environ.get("DOCKER_CERT_PATH", os.path.expanduser("~/.docker"))
            context = ssl.create_default_context(cafile=os.path.join(certs, "ca.pem"))
            context.load_cert_chain(os.path.join(certs, "cert.pem"), os.path.join(certs, "key.pem"))
            return httpx.AsyncHTTPTransport(verify=context), f"https://{address}"
        return httpx.AsyncHTTPTransport(), f"http://{address}"
    raise DockerError(f"unsupported Docker host {host!r} (unix:// or tcp://)")


def docker_host(explicit: str | None = None) -> str:
    """The daemon's address: given, else ``DOCKER_HOST``, else the standard socket."""
    return explicit or os.environ.get("DOCKER_HOST") or f"unix://{DEFAULT_SOCKET}"


class DockerAPI:
    """One daemon; a connection pool shared by every call of one environment."""

    def __init__(self, host: str | None = None) -> None:
        self.host = docker_host(host)
        transport, base = _transport(self.host)
        self._client = httpx.AsyncClient(
            transport=transport, base_url=f"{base}/{API_VERSION}", timeout=httpx.Timeout(120.0)
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    def unreachable(self, error: Exception) -> DockerError:
        """One line a user can act on: where it looked, why it failed, what to check."""
        reason = str(error).strip() or type(error).__name__
        return DockerError(
            f"cannot reach the Docker daemon at {self.host} ({reason}); is dockerd running, "
            "and does DOCKER_HOST name it?"
        )

    async def call(
        self, method: str, path: str, *, ok: tuple[int, ...] = (200, 201, 204), **kwargs: Any
    ) -> httpx.Response:
        try:
            response = await self._client.request(method, path, **kwargs)
        except httpx.TransportError as error:
            raise self.unreachable(error) from error
        if response.status_code not in ok:
            try:
                message = response.json().get("message", response.text)
            except ValueError:
                message = response.text
            text = f"Docker: {method} {path}: {response.status_code} {message[:300]}"
            if response.status_code in (404, 409) and path.startswith("/containers/"):
                raise ContainerGone(text)
            raise DockerError(text)
        return response

    async def ping(self) -> bool:
        """Whether the daemon answers ``/_ping`` (within the caller's deadline)."""
        try:
            response = await self._client.get("/_ping", timeout=httpx.Timeout(10.0))
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    async def create_container(self, config: Mapping[str, Any], name: str | None) -> str:
        params = {"name": name} if name else {}
        response = await self.call("POST", "/containers/create", json=config, params=params)
        return response.json()["Id"]

    async def start_container(self, container: str) -> None:
        await self.call("POST", f"/containers/{container}/start", ok=(204, 304))

    async def remove_container(self, container: str) -> None:
        """Kill and remove (with its anonymous volumes); gone already is fine."""
        await self.call(
            "DELETE", f"/containers/{container}", params={"force": "1", "v": "1"}, ok=(204, 404)
        )

    async def containers(self, labels: Mapping[str, str]) -> list[dict[str, Any]]:
        """Every container (running or not) carrying all of ``labels``."""
        wanted = [f"{key}={value}" if value else key for key, value in labels.items()]
        filters = httpx.QueryParams({"all": "1", "filters": json.dumps({"label": wanted})})
        return (await self.call("GET", "/containers/json", params=filters)).json()

    async def exec_create(
        self, container: str, argv: list[str], *, user: str | None, workdir: str | None = None
    ) -> str:
        config: dict[str, Any] = {"Cmd": argv, "AttachStdout": True, "AttachStderr": True}
        if user:
            config["User"] = user
        if workdir:
            config["WorkingDir"] = workdir
        response = await self.call("POST", f"/containers/{container}/exec", json=config)
        return response.json()["Id"]

    @asynccontextmanager
    async def exec_stream(
        self, exec_id: str
    ) -> AsyncIterator[AsyncIterator[tuple[Literal["stdout", "stderr"], bytes]]]:
        """Start an exec and yield its output frames as they arrive."""
        request = self._client.build_request(
            "POST", f"/exec/{exec_id}/start", json={"Detach": False, "Tty": False},
            timeout=httpx.Timeout(120.0, read=None),
        )  # fmt: skip
        try:
            response = await self._client.send(request, stream=True)
        except httpx.TransportError as error:
            raise self.unreachable(error) from error
        try:
            if response.status_code != 200:
                await response.aread()
                raise DockerError(f"Docker: exec start: {response.status_code} {response.text}")
            yield _frames(response)
        finally:
            await response.aclose()

    async def exec_inspect(self, exec_id: str) -> dict[str, Any]:
        return (await self.call("GET", f"/exec/{exec_id}/json")).json()

    async def run(
        self, container: str, argv: list[str], *, user: str | None
    ) -> tuple[int, bytes, bytes]:
        """Run ``argv`` to its end: exit status, stdout, stderr (for short helpers)."""
        exec_id = await self.exec_create(container, argv, user=user)
        out, err = bytearray(), bytearray()
        async with self.exec_stream(exec_id) as frames:
            async for stream, chunk in frames:
                (out if stream == "stdout" else err).extend(chunk)
        status = (await self.exec_inspect(exec_id)).get("ExitCode")
        return (status if isinstance(status, int) else -1), bytes(out), bytes(err)

    async def put_archive(self, container: str, directory: str, tar: bytes) -> None:
        await self.call(
            "PUT", f"/containers/{container}/archive", params={"path": directory}, content=tar,
            headers={"Content-Type": "application/x-tar"},
        )  # fmt: skip


async def _frames(
    response: httpx.Response,
) -> AsyncIterator[tuple[Literal["stdout", "stderr"], bytes]]:
    pending = bytearray()
    try:
        async for chunk in response.aiter_raw():
            pending.extend(chunk)
            while len(pending) >= _HEADER.size:
                kind, size = _HEADER.unpack_from(pending)
                if len(pending) < _HEADER.size + size:
                    break
                data = bytes(pending[_HEADER.size : _HEADER.size + size])
                del pending[: _HEADER.size + size]
                yield ("stderr" if kind == 2 else "stdout"), data
    except httpx.TransportError as error:
        raise DockerError(f"the Docker daemon's exec stream broke: {error}") from error
