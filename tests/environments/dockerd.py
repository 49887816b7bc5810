"""A private Docker daemon for the tests, and a test image built from this host.

No image registry is reachable here, so the image is a root filesystem assembled
from the host's own binaries (bash, coreutils, grep, find, awk, ps and the shared
libraries they load, found with ``ldd``) and loaded with the Engine API's import.
The daemon runs with no network setup at all (no bridge, no iptables) and with its
own data root, exec root, socket and pidfile, so it never touches a system daemon.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

DOCKERD = "/usr/sbin/dockerd"
TEST_IMAGE = "troupe-test:latest"
IMAGE_USER_UID = 4242
"""The unprivileged account of the test image (``troupe``), for the as-user tests."""

_BINARIES = [
    "bash",
    "sh",
    "cat",
    "ls",
    "mkdir",
    "rm",
    "rmdir",
    "mv",
    "cp",
    "head",
    "tail",
    "tr",
    "sleep",
    "seq",
    "dirname",
    "basename",
    "stat",
    "realpath",
    "readlink",
    "test",
    "echo",
    "printf",
    "wc",
    "sort",
    "uniq",
    "env",
    "id",
    "pwd",
    "touch",
    "chmod",
    "chown",
    "ln",
    "true",
    "false",
    "base64",
    "date",
    "uname",
    "awk",
    "mawk",
    "grep",
    "find",
    "sed",
    "ps",
    "xargs",
    "timeout",
    "kill",
    "setsid",
    "cut",
    "tee",
    "mktemp",
    "md5sum",
    "mkfifo",
]
_START_BOUND = 60.0


class DockerUnavailable(Exception):
    """Why no test daemon could be started (the tests that need it skip with this)."""


@dataclass(frozen=True)
class DockerDaemon:
    socket: Path
    process: subprocess.Popen[bytes]
    directory: Path

    @property
    def host(self) -> str:
        return f"unix://{self.socket}"


def start_dockerd(directory: Path) -> DockerDaemon:
    """Start dockerd in ``directory`` and wait until its API answers."""
    if os.geteuid() != 0:
        raise DockerUnavailable("dockerd needs root here")
    if not os.path.exists(DOCKERD):
        raise DockerUnavailable(f"{DOCKERD} is not installed (apt-get install docker.io)")
    socket = directory / "docker.sock"
    log = (directory / "dockerd.log").open("wb")
    process = subprocess.Popen(
        [
            DOCKERD,
            "--iptables=false",
            "--ip-forward=false",
            "--bridge=none",
            "--storage-driver=vfs",
            f"--data-root={directory / 'data'}",
            f"--exec-root={directory / 'exec'}",
            f"--pidfile={directory / 'dockerd.pid'}",
            f"--host=unix://{socket}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    daemon = DockerDaemon(socket, process, directory)
    deadline = time.monotonic() + _START_BOUND
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = (directory / "dockerd.log").read_text(errors="replace")[-600:]
            raise DockerUnavailable(f"dockerd exited with {process.returncode}: {tail}")
        if socket.exists():
            try:
                with _client(daemon) as client:
                    if client.get("/_ping").status_code == 200:
                        return daemon
            except httpx.TransportError:
                pass
        time.sleep(0.1)  # polling a daemon's socket: nothing to wait on instead
    stop_dockerd(daemon)
    raise DockerUnavailable(f"dockerd did not answer within {_START_BOUND:.0f} s")


def stop_dockerd(daemon: DockerDaemon) -> None:
    """Remove every container, stop the daemon by its pid, and remove its files."""
    if daemon.process.poll() is None:
        try:
            with _client(daemon) as client:
                for container in client.get("/containers/json", params={"all": "1"}).json():
                    client.delete(f"/containers/{container['Id']}", params={"force": "1"})
        except httpx.HTTPError:
            pass
        daemon.process.terminate()
        try:
            daemon.process.wait(30)
        except subprocess.TimeoutExpired:
            daemon.process.kill()
            daemon.process.wait()
    # A daemon that died (rather than stopped) leaves its mounts: lift those under
    # its own directory, deepest first, before removing the files.
    root = f"{daemon.directory}/"
    with open("/proc/mounts") as mounts:
        points = [line.split()[1] for line in mounts if line.split()[1].startswith(root)]
    for point in sorted(points, reverse=True):
        subprocess.run(["umount", "-l", point], check=False)
    subprocess.run(["rm", "-rf", str(daemon.directory)], check=False)


def _client(daemon: DockerDaemon) -> httpx.Client:
    transport = httpx.HTTPTransport(uds=str(daemon.socket))
    return httpx.Client(transport=transport, base_url="http://docker", timeout=120)


def _libraries(binary: str) -> set[str]:
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=False).stdout
    found: set[str] = set()
    for line in out.splitlines():
        words = line.split()
        if "=>" in words and len(words) > words.index("=>") + 1:
            path = words[words.index("=>") + 1]
            if path.startswith("/"):
                found.add(path)
        elif words and words[0].startswith("/"):
            found.add(words[0])
    return found


def root_filesystem() -> bytes:
    """A tar of a minimal root filesystem made of this host's binaries."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:

        def add_dir(name: str, mode: int = 0o755) -> None:
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, mode
            tar.addfile(info)

        def add_text(name: str, text: str) -> None:
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))

        for directory in ("usr", "usr/bin", "usr/lib", "usr/lib64", "etc", "root", "home"):
            add_dir(directory)
        add_dir("tmp", 0o1777)
        home = tarfile.TarInfo("home/troupe")
        home.type, home.mode, home.uid, home.gid = tarfile.DIRTYPE, 0o755, IMAGE_USER_UID, 4242
        tar.addfile(home)
        for link, target in (("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64")):
            info = tarfile.TarInfo(link)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
        files: dict[str, str] = {}
        for name in _BINARIES:
            found = shutil.which(name)
            if found is None:
                continue
            files[f"usr/bin/{name}"] = os.path.realpath(found)
            for library in _libraries(found):
                real = os.path.realpath(library)
                inside = library.lstrip("/")
                for prefix in ("lib/", "lib64/"):
                    if inside.startswith(prefix):
                        inside = "usr/" + inside
                files[inside] = real
        made: set[str] = {"usr", "usr/bin", "usr/lib", "usr/lib64"}
        for inside, real in sorted(files.items()):
            parent = os.path.dirname(inside)
            parts = parent.split("/")
            for depth in range(1, len(parts) + 1):
                step = "/".join(parts[:depth])
                if step not in made:
                    made.add(step)
                    add_dir(step)
            tar.add(real, arcname=inside)
        add_text(
            "etc/passwd",
            "root:x:0:0:root:/root:/bin/bash\n"
            f"troupe:x:{IMAGE_USER_UID}:4242:troupe:/home/troupe:/bin/bash\n",
        )
        add_text("etc/group", "root:x:0:\ntroupe:x:4242:\n")
    return buffer.getvalue()


def build_test_image(daemon: DockerDaemon, name: str = TEST_IMAGE) -> str:
    """Import the host-made root filesystem as ``name`` (no registry needed)."""
    repo, _, tag = name.partition(":")
    with _client(daemon) as client:
        response = client.post(
            "/images/create",
            params={"fromSrc": "-", "repo": repo, "tag": tag or "latest"},
            content=root_filesystem(),
            headers={"Content-Type": "application/x-tar"},
        )
        if response.status_code != 200 or '"error"' in response.text:
            raise DockerUnavailable(f"image import failed: {response.text[-400:]}")
    return name


def container_exec(daemon: DockerDaemon, container: str, argv: list[str]) -> str:
    """Run ``argv`` in ``container`` as root and return its stdout (for checks from
    outside the environment under test: what runs in the container)."""
    with _client(daemon) as client:
        created = client.post(
            f"/containers/{container}/exec",
            json={"Cmd": argv, "AttachStdout": True, "AttachStderr": True, "User": "0"},
        )
        created.raise_for_status()
        raw = client.post(f"/exec/{created.json()['Id']}/start", json={"Detach": False}).content
    out = bytearray()
    while len(raw) >= 8:
        size = int.from_bytes(raw[4:8], "big")
        if raw[0] == 1:
            out += raw[8 : 8 + size]
        raw = raw[8 + size :]
    return out.decode(errors="replace")


def alive_in(daemon: DockerDaemon, container: str | None, pids: list[int]) -> list[int]:
    """Those of ``pids`` (the container's own numbers) running there, zombies aside;
    none when the container is gone."""
    if container is None:
        return []
    with _client(daemon) as client:
        if client.get(f"/containers/{container}/json").status_code == 404:
            return []
    listing = container_exec(daemon, container, ["ps", "-eo", "pid=,stat="])
    running = {
        int(pid)
        for pid, state in (line.split(None, 1) for line in listing.splitlines() if line.strip())
        if not state.startswith("Z")
    }
    return [pid for pid in pids if pid in running]


def labelled_containers(daemon: DockerDaemon, label: str) -> list[str]:
    """Ids of every container (running or not) that carries ``label``."""
    with _client(daemon) as client:
        found = client.get(
            "/containers/json",
            params={"all": "1", "filters": f'{{"label": ["{label}"]}}'},
        ).json()
    return [container["Id"] for container in found]
