"""docs/deploy.md's configuration files, each checked by what reads it.

nginx and HAProxy: each file, as the page shows it (its upstream addresses
pointed at a real ``troupe serve`` and its port at a free one), is accepted by
``nginx -t`` / ``haproxy -c`` and then run: a client goes through it over a
WebSocket (the upgrade passed), starts a session and follows its events, and
``/readyz`` answers through it. The systemd unit passes ``systemd-analyze
verify``. The Kubernetes objects are read back by the official Kubernetes
client's models (every field must be one the API has, every required one there):
``kubectl apply --dry-run=client`` needs an API server to ask even in its client
mode, and none runs here. Every ``troupe`` command line in them parses with
``troupe``'s own parser, and the probes, ports, labels and Secret keys they name
agree with each other. A tool that is not installed skips its test, saying so
(``.ci/run`` installs none of them; Debian's ``nginx``, ``haproxy`` and ``systemd``
packages have them).
"""

from __future__ import annotations

import contextlib
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio
import yaml

from actors.cli import build_parser
from actors.mockllm import Script, serve_mock_llm
from actors.web.pages import PROBES
from protocol.client import connect
from protocol.wire import CreateSession, SubmitInput
from tests.cli.conftest import REPO
from tests.docs_files import files_of, plant
from tests.waiting import wait_until
from tests.web.test_auth import http_get
from tests.wire.conftest import (
    HANG_GUARD,
    ServeProcess,
    events_until,
    shell_turns,
    subscribe,
    troupe_serve,
)

PAGE = REPO / "docs" / "deploy.md"
UPSTREAM = re.compile(r"10\.0\.0\.1\d:8765")
"""The page's node addresses."""


def test_the_page_shows_each_file() -> None:
    assert set(files_of(PAGE)) == {
        "nginx/troupe.conf",
        "haproxy/haproxy.cfg",
        "systemd/troupe.service",
        "kubernetes/troupe.yaml",
    }


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if found is None:
        pytest.skip(f"{name} is not installed (Debian's {name} package has it)")
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _node_address(serve: ServeProcess) -> str:
    return serve.url.split("//", 1)[1].split("/", 1)[0]


@contextlib.asynccontextmanager
async def _node(root: Path) -> AsyncIterator[tuple[ServeProcess, str]]:
    """A real ``troupe serve`` (SQLite) and its token."""
    work = root / "work"
    work.mkdir(exist_ok=True)
    script = msgspec.convert(shell_turns("echo through the proxy"), Script)
    async with (
        serve_mock_llm(script) as mock,
        troupe_serve(root / "data", work, mock.base_url) as serve,
    ):
        yield serve, (root / "data" / "token").read_text().strip()
        serve.process.send_signal(signal.SIGTERM)
        with trio.fail_after(HANG_GUARD):
            await serve.process.wait()


async def _through(port: int, token: str) -> None:
    """What a client does through the proxy on ``port``: the probe, then a session
    over a WebSocket, followed to the end of its input."""

    async def ready() -> bool:
        with contextlib.suppress(OSError, ValueError, IndexError):
            status, _, body = await http_get(port, "/readyz", "Connection: close")
            return (status, body) == (200, b"ok\n")
        return False

    await wait_until(ready, what="/readyz through the proxy")
    async with connect(f"ws://127.0.0.1:{port}/", token) as client:
        session = (await client.request(CreateSession)).session.session_id
        await subscribe(client, session)
        await client.request(SubmitInput, session=session, text="hello")
        events = await events_until(client, "processing_end")
    outputs = [e.data.get("output", "") for e in events if e.kind == "tool_call_end"]
    assert any("through the proxy" in str(output) for output in outputs), outputs


@contextlib.asynccontextmanager
async def _running(command: list[str], log: Path) -> AsyncIterator[trio.Process]:
    with log.open("wb") as out:
        process = await trio.lowlevel.open_process(command, stdout=out, stderr=out)
    try:
        yield process
    finally:
        if process.returncode is None:
            process.terminate()
        with trio.CancelScope(shield=True), trio.move_on_after(HANG_GUARD):
            await process.wait()
        if process.returncode is None:
            process.kill()


async def test_nginx_accepts_the_config_and_passes_websockets(tmp_path: Path) -> None:
    nginx = _tool("nginx")
    root = Path(await trio.Path(tmp_path).resolve())
    plant(PAGE, root)
    site = root / "nginx" / "troupe.conf"
    port = _free_port()
    async with _node(root) as (serve, token):
        text = UPSTREAM.sub(_node_address(serve), site.read_text())
        assert "listen 80;" in text
        site.write_text(text.replace("listen 80;", f"listen 127.0.0.1:{port};"))
        main = root / "nginx.conf"
        temp = "".join(
            f"    {kind}_temp_path {root / kind};\n"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        main.write_text(
            f"pid {root / 'nginx.pid'};\nerror_log {root / 'nginx-error.log'};\n"
            f"events {{}}\nhttp {{\n    access_log off;\n{temp}    include {site};\n}}\n"
        )
        checked = await trio.run_process(
            [nginx, "-t", "-p", str(root), "-c", str(main)],
            check=False, capture_stdout=True, capture_stderr=True,
        )  # fmt: skip
        assert checked.returncode == 0, checked.stderr.decode()
        command = [nginx, "-p", str(root), "-c", str(main), "-g", "daemon off;"]
        async with _running(command, root / "nginx.out") as proxy:
            with trio.fail_after(HANG_GUARD * 2):
                await _through(port, token)
            assert proxy.returncode is None


async def test_haproxy_accepts_the_config_and_passes_websockets(tmp_path: Path) -> None:
    haproxy = _tool("haproxy")
    root = Path(await trio.Path(tmp_path).resolve())
    plant(PAGE, root)
    config = root / "haproxy" / "haproxy.cfg"
    port = _free_port()
    async with _node(root) as (serve, token):
        text = UPSTREAM.sub(_node_address(serve), config.read_text())
        assert "bind :80" in text
        config.write_text(text.replace("bind :80", f"bind 127.0.0.1:{port}"))
        checked = await trio.run_process(
            [haproxy, "-c", "-f", str(config)],
            check=False, capture_stdout=True, capture_stderr=True,
        )  # fmt: skip
        assert checked.returncode == 0, (checked.stdout + checked.stderr).decode()
        async with _running([haproxy, "-db", "-f", str(config)], root / "haproxy.out") as proxy:
            with trio.fail_after(HANG_GUARD * 2):
                await _through(port, token)
            assert proxy.returncode is None


def _serve_args(args: list[str]) -> None:
    """``troupe serve ...`` parses with troupe's parser (the fleet's flags too)."""
    assert args[0] == "serve", args
    parser = build_parser()
    serve_help = subprocess.run(
        [sys.executable, "-m", "actors.cli", "serve", "--help"],
        capture_output=True, text=True, cwd=REPO, check=True,
    ).stdout  # fmt: skip
    if "--node-id" in args and "--node-id" not in serve_help:
        pytest.skip("troupe serve has no --node-id in this tree yet (the fleet's branch adds it)")
    try:
        parsed = parser.parse_args(args)
    except SystemExit as exit:
        pytest.fail(f"`troupe {shlex.join(args)}` does not parse (exit {exit.code})")
    assert parsed.host == "0.0.0.0" and parsed.port == 8765


def test_the_systemd_unit_verifies_and_its_command_parses(tmp_path: Path) -> None:
    plant(PAGE, tmp_path)
    unit = tmp_path / "systemd" / "troupe.service"
    text = unit.read_text()
    line = next(x for x in text.splitlines() if x.startswith("ExecStart="))
    program, *args = shlex.split(line.removeprefix("ExecStart=").replace("%H", "node1"))
    assert program == "/opt/troupe/bin/troupe"
    _serve_args(args)
    verify = _tool("systemd-analyze")
    troupe = Path(sys.executable).parent / "troupe"
    assert troupe.exists(), troupe
    unit.write_text(text.replace(program, str(troupe)))
    done = subprocess.run([verify, "verify", str(unit)], capture_output=True, text=True)
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr


# -- Kubernetes --------------------------------------------------------------------------

SCALARS: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "bool": (bool,),
    "float": (int, float),
    "object": (object,),
    "datetime": (str,),
    "bytes": (str,),
}


def _check_fields(value: Any, kind: str, where: str, models: Any) -> None:
    """``value`` (parsed YAML) against the client's model ``kind``: every key one
    the API has, every value of its type."""
    if kind in SCALARS:
        assert isinstance(value, SCALARS[kind]), f"{where}: {value!r} is not {kind}"
        return
    if kind.lower().startswith("list["):  # List[X] (list[X] in older clients)
        assert isinstance(value, list), f"{where}: not a list"
        for index, item in enumerate(value):
            _check_fields(item, kind[5:-1], f"{where}[{index}]", models)
        return
    if kind.lower().startswith(("dict[", "dict(")):  # Dict[str, X] (dict(str, X))
        assert isinstance(value, dict), f"{where}: not a mapping"
        inner = kind[5:-1].split(", ", 1)[1]
        for key, item in value.items():
            _check_fields(item, inner, f"{where}.{key}", models)
        return
    model = getattr(models, kind)
    assert isinstance(value, dict), f"{where}: not a mapping ({kind})"
    fields = {json: attribute for attribute, json in model.attribute_map.items()}
    for key, item in value.items():
        assert key in fields, f"{where}: {kind} has no field {key!r}"
        _check_fields(item, model.openapi_types[fields[key]], f"{where}.{key}", models)


def test_the_kubernetes_objects_are_what_the_api_takes(tmp_path: Path) -> None:
    kubernetes = pytest.importorskip("kubernetes", reason="the test extra installs it")
    from kubernetes.client import ApiClient, models

    plant(PAGE, tmp_path)
    documents = list(yaml.safe_load_all((tmp_path / "kubernetes" / "troupe.yaml").read_text()))
    by_kind = {document["kind"]: document for document in documents}
    assert sorted(d["kind"] for d in documents) == ["Deployment", "Secret", "Secret", "Service"]
    client = ApiClient()
    for document in documents:
        kind = f"V1{document['kind']}"
        _check_fields(document, kind, document["kind"], models)
        # the client's own deserializer refuses an object without a required field
        client._ApiClient__deserialize(document, kind)  # type: ignore[attr-defined]
    assert kubernetes.__version__

    # what the objects name in each other agrees
    deployment, service = by_kind["Deployment"], by_kind["Service"]
    pod = deployment["spec"]["template"]
    assert deployment["spec"]["selector"]["matchLabels"] == pod["metadata"]["labels"]
    assert service["spec"]["selector"] == pod["metadata"]["labels"]
    (container,) = pod["spec"]["containers"]
    secrets = {d["metadata"]["name"]: d["stringData"] for d in documents if d["kind"] == "Secret"}
    env = {e["name"]: e for e in container["env"]}
    for entry in env.values():
        reference = entry.get("valueFrom", {}).get("secretKeyRef")
        if reference:
            assert reference["key"] in secrets[reference["name"]], reference
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    assert set(mounts) == set(volumes)
    data_dir = env["TROUPE_DATA_DIR"]["value"]
    assert mounts["data"]["mountPath"] == data_dir
    assert mounts["token"]["mountPath"] == f"{data_dir}/token"  # the token's file name
    assert "token" in secrets[volumes["token"]["secret"]["secretName"]]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    for probe in ("readinessProbe", "livenessProbe"):
        check = container[probe]["httpGet"]
        assert check["path"] in PROBES and check["port"] in ports
    assert {p["targetPort"] for p in service["spec"]["ports"]} <= set(ports)

    # the command line, its $(VARIABLES) as Kubernetes fills them in
    values = {"TROUPE_STORE": "postgresql://troupe@db/troupe", "POD_NAME": "troupe-abc12"}
    args = [re.sub(r"\$\((\w+)\)", lambda m: values[m.group(1)], a) for a in container["args"]]
    assert {m for a in container["args"] for m in re.findall(r"\$\((\w+)\)", a)} <= set(env)
    assert args[args.index("--port") + 1] == str(ports["ws"])
    _serve_args(args)
