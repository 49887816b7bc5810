"""Environment kinds as data: the registry, the store's one table (and the move of
the old SSH rows into it), and a check over the source that the server and the
environments package name no kind outside the kind's own module and the registry."""

from __future__ import annotations

import ast
import re
import sqlite3
from pathlib import Path

import msgspec
import pytest

from actors.store.store import open_store
from environments.builtin_kinds import builtin_kinds
from environments.kinds import Kinds, SpecRefused
from protocol.environment_specs import DockerSpec, LocalSpec, SSHSpec

ROOT = Path(__file__).resolve().parents[2]
KIND_WORDS = {"ssh", "docker"}
"""Kinds other than this machine's, as words of identifiers, imports and strings."""
LOCAL_NAMES = {"LocalEnvironment", "LocalSpec", "local_kind"}
"""This machine's kind, by the names that would start it directly."""
OWN_FILES = {
    "environments/kinds.py",  # the registry
    "environments/builtin_kinds.py",  # the registry's list of the kinds out of the box
    "environments/local.py",
    "environments/local_kind.py",
    "environments/local_exec.py",
    "environments/local_terminal.py",
    "environments/__init__.py",  # the package's public names, imported lazily
}
OWN_DIRECTORIES = ("environments/ssh/", "environments/docker/")
ALLOWED = {
    ("environments/safe_git.py", "ssh"): "git's core.sshCommand, which it turns off",
    ("environments/shell/scripts.py", "ssh"): "SSH_AUTH_SOCK, a variable commands may keep",
}


def _words(text: str) -> set[str]:
    """The lower-case words of an identifier or a string (snake, camel, dots)."""
    parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", text)
    return {part.lower() for part in parts}


def _docstrings(tree: ast.AST) -> set[int]:
    """Strings standing alone as statements: docstrings, and the notes under
    attributes and assignments."""
    found: set[int] = set()
    for node in ast.walk(tree):
        value = node.value if isinstance(node, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            found.add(id(value))
    return found


def _names_in_code(source: str) -> list[tuple[int, str]]:
    """Every identifier, attribute, imported name and string constant (docstrings
    and comments aside: prose may mention kinds), with its line."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.alias):
            found.append((node.lineno, node.name))
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append((node.lineno, node.name))
        elif isinstance(node, ast.arg):
            found.append((node.lineno, node.arg))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [] if id(node) in skip else [(node.lineno, node.value)]
    return found


def kind_mentions(path: Path, relative: str) -> list[str]:
    mentions: list[str] = []
    for line, name in _names_in_code(path.read_text()):
        words = _words(name)
        for word in sorted(words & KIND_WORDS):
            if (relative, word) not in ALLOWED:
                mentions.append(f"{relative}:{line}: {name!r} names the kind {word!r}")
        if any(local in name for local in LOCAL_NAMES):
            mentions.append(f"{relative}:{line}: {name!r} names this machine's kind")
    return mentions


def test_the_server_and_environments_name_no_kind_outside_its_module_and_the_registry() -> None:
    mentions: list[str] = []
    checked = 0
    for package in ("environments", "actors/server"):
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative in OWN_FILES or relative.startswith(OWN_DIRECTORIES):
                continue
            checked += 1
            mentions += kind_mentions(path, relative)
    assert checked > 30, "the walk found the sources"
    assert mentions == []


def test_the_check_finds_a_kind_named_in_code(tmp_path: Path) -> None:
    """The check is not blind: the lines it was written against are found."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""Prose may say SSH and Docker."""\n'
        "from environments.ssh.bridge import SSHBridge  # noqa\n"
        'summary = EnvironmentSummary(ref.address, "ssh")\n'
        'if address.startswith("/environments/docker/"): pass\n'
        "environment = LocalEnvironment(path)\n"
    )
    lines = {mention.split(":")[1] for mention in kind_mentions(sample, "sample.py")}
    assert lines == {"2", "3", "4", "5"}


def test_the_registry_knows_every_kind_by_name_spec_and_address() -> None:
    kinds = builtin_kinds()
    assert kinds.names() == ["local", "ssh", "docker"]
    assert kinds.of(SSHSpec("ssh://a@b")).name == "ssh"
    assert kinds.kind_at("/environments/docker/box") == "docker"
    assert kinds.kind_at("/environments/local-3") == "local"
    assert kinds.kind_at("/environments/dir/mine") == "local"
    assert kinds.kind_at("/environments/elsewhere") is None
    assert "/environments/ssh" in kinds.internal()
    with pytest.raises(SpecRefused):
        kinds.named("podman")
    with pytest.raises(ValueError, match="two kinds"):
        Kinds([*kinds, kinds.named("ssh")])
    for bad in (DockerSpec("", "/w"), DockerSpec("i", "rel"), DockerSpec("i", "/w", cpus=0)):
        with pytest.raises(SpecRefused):
            kinds.of(bad).check(bad)
    with pytest.raises(SpecRefused):
        kinds.named("ssh").check(SSHSpec(""))
    with pytest.raises(SpecRefused, match="absolute"):
        kinds.named("local").check(LocalSpec("relative/dir"))
    assert kinds.decode("local", msgspec.json.encode(LocalSpec("/srv"))) == LocalSpec("/srv")


async def test_old_ssh_rows_move_to_the_one_environments_table(tmp_path: Path) -> None:
    """A database of the last release (its ``ssh_environments`` table, the old JSON
    with the name in it) opens with those rows in ``environments``, kind ``ssh``,
    decodable as SSH specs; they are moved once."""
    path = tmp_path / "troupe.db"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE ssh_environments (name TEXT PRIMARY KEY, spec BLOB NOT NULL)")
    stored = {"name": "box", "target": "ssh://dev@build", "client_keys": ["/k"]}
    old.execute("INSERT INTO ssh_environments VALUES (?, ?)", ("box", msgspec.json.encode(stored)))
    old.commit()
    old.close()
    async with open_store(tmp_path) as store:
        rows = await store.environments()
        assert [(row.name, row.kind) for row in rows] == [("box", "ssh")]
        spec = builtin_kinds().decode("ssh", rows[0].spec)
        assert spec == SSHSpec("ssh://dev@build", client_keys=["/k"])
        store.put_environment("img", "docker", msgspec.json.encode(DockerSpec("i", "/w")))
    async with open_store(tmp_path) as store:
        rows = await store.environments()
        assert [(row.name, row.kind) for row in rows] == [("box", "ssh"), ("img", "docker")]
        store.delete_environment("box")
    async with open_store(tmp_path) as store:
        assert [row.name for row in await store.environments()] == ["img"]
    tables = sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type='table'")
    assert "ssh_environments" not in {name for (name,) in tables}
