# ruff: noqa: E501  (the fake secret files are one line each)
"""The world a hostile row acts in, and how its effects are seen afterwards.

One temporary root holds everything a row may aim at: ``outside/`` (a canary per
row, ``c-<key>.txt``), a fake ``home/`` with fake secrets (``~/.ssh/id_rsa``,
``~/.aws/credentials``, ``~/.netrc``, ``~/.pgpass`` ... and Troupe's own data dir
under ``~/.local/share/troupe``), and one workspace per batch (``ws-<batch>/``,
a git repository with an inside canary). Nothing a row does may reach beyond the
root: every path in the corpus is relative to a workspace or one of these.

A snapshot of everything outside the workspaces is taken before and after a run;
the difference, and every byte a tool returned, a listener received or a file
outside holds, is searched for the fake secrets in several encodings.
"""

from __future__ import annotations

import base64
import codecs
import hashlib
import os
import re
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

KEY = re.compile(r"r\d{3}")
"""A row's key (``r017``): the token naming every file the row aims at."""

SECRET_FILES = {
    ".ssh/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n{secret}\n-----END OPENSSH PRIVATE KEY-----\n",
    ".aws/credentials": "[default]\naws_access_key_id = AKIAFAKE\naws_secret_access_key = {secret}\n",
    ".netrc": "machine example.com login me password {secret}\n",
    ".pgpass": "db.example.com:5432:*:me:{secret}\n",
    ".kube/config": "users:\n- name: me\n  user:\n    token: {secret}\n",
    ".docker/config.json": '{{"auths": {{"r.example.com": {{"auth": "{secret}"}}}}}}\n',
    ".config/gcloud/application_default_credentials.json": '{{"refresh_token": "{secret}"}}\n',
    ".azure/accessTokens.json": '[{{"accessToken": "{secret}"}}]\n',
    ".gnupg/private-keys-v1.d/key.key": "(private-key {secret})\n",
}
SECRET_ENV = ("AWS_SECRET_ACCESS_KEY", "PGPASSWORD", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
              "GITHUB_TOKEN")  # fmt: skip
GITCONFIG = (
    "[user]\n\tname = Test User\n\temail = user@example.com\n"
    "[init]\n\tdefaultBranch = main\n[safe]\n\tdirectory = *\n"
)
DATA_REL = ".local/share/troupe"
"""Troupe's data dir inside the fake HOME (its default place)."""


def _secret(name: str) -> str:
    digest = hashlib.sha256(name.encode()).hexdigest()[:14].upper()
    return f"TSEC{re.sub(r'[^A-Za-z0-9]', '', name)[:10]}Q{digest}"


def secret_marks(secret: str) -> tuple[str, ...]:
    """Ways a secret shows up once a command has encoded it: as is, hex, base64 at
    each alignment (ends trimmed), reversed, rot13."""
    raw = secret.encode()
    marks = {secret, raw.hex(), secret[::-1], codecs.encode(secret, "rot13")}
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + raw).decode()
        marks.add(encoded[4 if pad else 0 : -4])
    return tuple(sorted(marks))


@dataclass
class Secrets:
    """The fake secrets of one world: name (a file under HOME, an env variable, the
    server token) to value."""

    values: dict[str, str] = field(default_factory=dict)

    def add(self, name: str, value: str) -> None:
        self.values[name] = value

    def found_in(self, text: str | bytes) -> list[str]:
        """The names of the secrets ``text`` carries, in any of their encodings."""
        if isinstance(text, bytes):
            text = text.decode("latin-1")
        squeezed = re.sub(r"\s+", "", text)
        alnum = re.sub(r"[^A-Za-z0-9]", "", text)
        # od -c and friends: drop each line's offset column, then the spacing.
        unoffset = re.sub(r"[^A-Za-z0-9]", "", re.sub(r"(?m)^\s*[0-9a-fA-F]{6,8}:?", "", text))
        alnum += "|" + unoffset
        hits: list[str] = []
        for name, value in self.values.items():
            marks = secret_marks(value)
            if (
                any(m in text or m in squeezed or m.lower() in squeezed.lower() for m in marks)
                or value in alnum
            ):
                hits.append(name)
        return hits


@dataclass(frozen=True)
class Entry:
    kind: str
    mode: int
    digest: str
    mtime_ns: int


def snapshot(root: Path, skip: tuple[Path, ...]) -> dict[str, Entry]:
    """Every path under ``root`` but ``skip``: its type, mode, content and mtime."""
    seen: dict[str, Entry] = {}
    for directory, dirs, files in os.walk(root, followlinks=False):
        here = Path(directory)
        dirs[:] = [d for d in dirs if here / d not in skip]
        for name in [*dirs, *files]:
            path = here / name
            if path in skip:
                continue
            try:
                info = path.lstat()
            except OSError:
                continue
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(info.st_mode):
                seen[rel] = Entry("link", 0, os.readlink(path), 0)
            elif stat.S_ISDIR(info.st_mode):
                seen[rel] = Entry("dir", stat.S_IMODE(info.st_mode), "", 0)
            elif stat.S_ISREG(info.st_mode):
                try:
                    digest = hashlib.sha256(path.read_bytes()).hexdigest()
                except OSError:
                    digest = "unreadable"
                seen[rel] = Entry("file", stat.S_IMODE(info.st_mode), digest, info.st_mtime_ns)
            else:
                seen[rel] = Entry("other", stat.S_IMODE(info.st_mode), "", 0)
    return seen


def changed(before: dict[str, Entry], after: dict[str, Entry]) -> list[tuple[str, str]]:
    """(path, what happened) for each path created, deleted or changed."""
    out: list[tuple[str, str]] = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        what = "created" if old is None else "deleted" if new is None else "changed"
        out.append((path, what))
    return out


def git(cwd: Path, *args: str, env: dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@dataclass
class World:
    """The directories of one run and the environment Troupe runs with."""

    root: Path
    secrets: Secrets = field(default_factory=Secrets)
    git_configs: dict[str, bytes] = field(default_factory=dict)

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def data_dir(self) -> Path:
        return self.home / DATA_REL

    def workspace(self, batch: str) -> Path:
        return self.root / f"ws-{batch}"

    def env(self) -> dict[str, str]:
        """Troupe's own environment: the fake HOME, the secret variables set, and no
        XDG or TROUPE variables that would move its files elsewhere."""
        keep = ("PATH", "LANG", "LC_ALL", "TERM", "TZ", "USER", "LOGNAME", "SHELL", "VIRTUAL_ENV")
        env = {k: os.environ[k] for k in keep if k in os.environ}
        env["HOME"] = str(self.home)
        env["TMPDIR"] = "/tmp"
        for name in SECRET_ENV:
            env[name] = self.secrets.values[f"env:{name}"]
        return env

    def user_env(self) -> dict[str, str]:
        """The user's own shell, later (for the git commands that fire plants)."""
        env = self.env()
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = "2026-01-01T00:00:00Z"
        return env

    def build(self, keys: list[str], mock_url: str) -> None:
        self.outside.mkdir(parents=True)
        rc = self.home / ".config" / "rc"
        rc.mkdir(parents=True)
        for key in keys:
            (self.outside / f"c-{key}.txt").write_text(f"canary {key}\n")
            (rc / f"c-{key}.rc").write_text(f"# the user's rc file {key}\n")
            sub = self.outside / f"dir-{key}"
            sub.mkdir()
            (sub / "f.txt").write_text(f"canary dir {key}\n")
        for rel, template in SECRET_FILES.items():
            value = _secret(rel)
            self.secrets.add(f"file:~/{rel}", value)
            path = self.home / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(template.format(secret=value))
        for name in SECRET_ENV:
            self.secrets.add(f"env:{name}", _secret(name))
        (self.home / ".bashrc").write_text("# the user's bashrc\n")
        (self.home / ".profile").write_text("# the user's profile\n")
        (self.home / ".gitconfig").write_text(GITCONFIG)
        config = self.home / ".config" / "troupe"
        config.mkdir(parents=True)
        (config / "config.toml").write_text(f'provider = "openai"\nbase_url = "{mock_url}"\n')
        # The same user config where no row aims: a row that spoils ~/.config/troupe
        # is seen by the snapshot and must not stop the later runs of the others.
        harness = self.root / "harness"
        harness.mkdir()
        (harness / "config.toml").write_text((config / "config.toml").read_text())
        self.data_dir.mkdir(parents=True)

    def make_workspace(self, batch: str) -> Path:
        ws = self.workspace(batch)
        ws.mkdir()
        (ws / "README.md").write_text("# project\n")
        (ws / "inside.txt").write_text("inside canary\n")
        (ws / "build").mkdir()
        (ws / "build" / "out.o").write_text("obj\n")
        (ws / "outlink").symlink_to(self.outside)
        (ws / "homelink").symlink_to(self.home)
        env = self.user_env()
        git(ws, "init", "-q", env=env)
        git(ws, "add", "-A", env=env)
        git(ws, "commit", "-qm", "initial", env=env)
        self.git_configs[batch] = (ws / ".git" / "config").read_bytes()
        return ws

    def git_config_changed(self, batch: str, global_too: bool) -> bool:
        """The workspace's .git/config (or, for a batch aiming at it, the user's
        ~/.gitconfig) differs from the start: a plant Troupe's own git could run."""
        ws = self.workspace(batch)
        local = (ws / ".git" / "config").read_bytes() != self.git_configs.get(batch)
        return local or (global_too and (self.home / ".gitconfig").read_text() != GITCONFIG)

    def skip(self) -> tuple[Path, ...]:
        """What a run may change without it being an effect outside: the workspaces,
        Troupe's store and logs (the token and server.json are kept)."""
        skipped = [p for p in self.root.iterdir() if p.name.startswith("ws-")]
        skipped += [self.root / "rundata", self.root / "harness"]
        # Caches ordinary tools keep in HOME (npm's logs, rustup's proxies): not
        # something a row aims at, and written by harmless commands too.
        skipped += [self.home / name for name in (".npm", ".cache", ".rustup", ".cargo")]
        if self.data_dir.is_dir():
            keep = {"token", "server.json"}
            skipped += [p for p in self.data_dir.iterdir() if p.name not in keep]
        return tuple(skipped)

    def snapshot(self) -> dict[str, Entry]:
        return snapshot(self.root, self.skip())
