"""Layered system prompts (coding-agent-loop-spec §6).

Everything the prompt needs from the environment is gathered once, when the session
starts (:func:`take_snapshot`): platform, git state and project documents. Peers
that probed git on every model call paid for it on every round; the model can run
``git status`` itself when it needs the current state.
"""

from __future__ import annotations

import datetime as dt
import posixpath

import msgspec

from actors.kernel import ActorRef, Rejection
from actors.session.profiles import ProviderProfile
from environments.project_files import read_project_file
from environments.safe_git import safe_git_shell
from protocol.environment import DEFAULT_READ_LIMIT, Describe, ExecCommand

PROJECT_DOC_BUDGET = 32 * 1024
PROJECT_DOC_MARKER = "[Project instructions truncated at 32KB]"
_RECENT_COMMITS = 10
_GIT_PROBE = (
    f"{safe_git_shell('rev-parse', '--show-toplevel')} 2>/dev/null || exit 0; "
    f"echo '--branch'; {safe_git_shell('rev-parse', '--abbrev-ref', 'HEAD')} 2>/dev/null; "
    f"echo '--status'; {safe_git_shell('status', '--porcelain')} 2>/dev/null; "
    f"echo '--log'; {safe_git_shell('log', '--oneline', '-n', str(_RECENT_COMMITS))} 2>/dev/null"
)
"""Git state at session start, with the repository's own programs off (fsmonitor,
hooks, pager: see :mod:`environments.safe_git`), so looking runs no planted code."""


class GitSnapshot(msgspec.Struct, frozen=True):
    root: str
    branch: str
    modified: int
    untracked: int
    recent_commits: list[str]


class EnvironmentSnapshot(msgspec.Struct, frozen=True):
    working_directory: str
    platform: str
    os_version: str
    date: str
    git: GitSnapshot | None
    project_docs: str
    skills: str = ""
    """The skills' names and descriptions (:func:`actors.skills.index.skills_index`)."""


def parse_git_probe(output: str) -> GitSnapshot | None:
    lines = output.splitlines()
    if not lines or "--branch" not in lines:
        return None
    sections: dict[str, list[str]] = {"root": [lines[0]]}
    current = "root"
    for line in lines[1:]:
        if line in ("--branch", "--status", "--log"):
            current = line[2:]
            sections[current] = []
        elif line:
            sections[current].append(line)
    status = sections.get("status", [])
    untracked = sum(1 for line in status if line.startswith("??"))
    return GitSnapshot(
        root=sections["root"][0],
        branch=(sections.get("branch") or ["(detached)"])[0],
        modified=len(status) - untracked,
        untracked=untracked,
        recent_commits=sections.get("log", []),
    )


def directories_from(root: str, leaf: str) -> list[str]:
    """``root`` and each directory down to ``leaf`` (just ``leaf`` when outside root)."""
    relative = posixpath.relpath(leaf, root)
    if relative.startswith(".."):
        return [leaf]
    chain = [root]
    for part in [] if relative == "." else relative.split("/"):
        chain.append(posixpath.join(chain[-1], part))
    return chain


async def discover_project_docs(
    environment: ActorRef, root: str, working_dir: str, file_names: tuple[str, ...]
) -> str:
    """Root-level files first, deeper ones after; AGENTS.md always; 32 KB in all.
    Read as probes: from the environment's disk, never asked of an editor (most of
    these files do not exist, and each would be a failed request to it)."""
    names = ("AGENTS.md", *[n for n in file_names if n != "AGENTS.md"])
    sections = []
    for directory in directories_from(root, working_dir):
        for name in names:
            path = posixpath.join(directory, name)
            try:
                content = await read_project_file(environment, path, root, limit=DEFAULT_READ_LIMIT)
            except Rejection:
                continue
            sections.append(f"## {path}\n{content.text.rstrip()}")
    text = "\n\n".join(sections)
    encoded = text.encode()
    if len(encoded) <= PROJECT_DOC_BUDGET:
        return text
    kept = encoded[: PROJECT_DOC_BUDGET - len(PROJECT_DOC_MARKER) - 1].decode(errors="ignore")
    return f"{kept}\n{PROJECT_DOC_MARKER}"


async def take_snapshot(environment: ActorRef, profile: ProviderProfile) -> EnvironmentSnapshot:
    """One look at the environment, at session start."""
    info = await environment.ask(Describe(sandbox=False))
    probe = await environment.ask(ExecCommand(_GIT_PROBE, timeout_ms=10_000), timeout=30)
    git = parse_git_probe(probe.stdout) if probe.exit_code == 0 else None
    root = git.root if git else info.working_directory
    docs = await discover_project_docs(
        environment, root, info.working_directory, profile.project_doc_files
    )
    return EnvironmentSnapshot(
        working_directory=info.working_directory,
        platform=info.platform,
        os_version=info.os_version,
        date=dt.date.today().isoformat(),
        git=git,
        project_docs=docs,
    )


def environment_block(snapshot: EnvironmentSnapshot, model: str) -> str:
    git = snapshot.git
    return "\n".join(
        [
            "<environment>",
            f"Working directory: {snapshot.working_directory}",
            f"Is git repository: {'true' if git else 'false'}",
            *([f"Git branch: {git.branch}"] if git else []),
            f"Platform: {snapshot.platform}",
            f"OS version: {snapshot.os_version}",
            f"Today's date: {snapshot.date}",
            f"Model: {model}",
            "</environment>",
        ]
    )


def git_block(git: GitSnapshot) -> str:
    commits = "\n".join(f"  {line}" for line in git.recent_commits) or "  (none)"
    return (
        f"Git status at session start: {git.modified} modified, {git.untracked} untracked "
        f"file(s) on branch {git.branch}.\nRecent commits:\n{commits}"
    )


def build_system_prompt(
    profile: ProviderProfile,
    snapshot: EnvironmentSnapshot,
    user_instructions: str | None = None,
    model: str | None = None,
) -> str:
    """Base instructions, environment, git, tools, project documents, then the user's
    own instructions last (highest precedence). ``model`` is the model the request
    goes to (None: the profile's): after a switch the model is told who it is."""
    layers = [profile.base_instructions, environment_block(snapshot, model or profile.model)]
    if snapshot.git:
        layers.append(git_block(snapshot.git))
    tools = "\n".join(f"- {d.name}: {d.description}" for d in profile.tools())
    layers.append(f"Available tools:\n{tools}")
    if snapshot.skills:
        layers.append(snapshot.skills)
    if snapshot.project_docs:
        layers.append(f"Project instructions:\n{snapshot.project_docs}")
    if user_instructions:
        layers.append(f"User instructions:\n{user_instructions}")
    return "\n\n".join(layers)
