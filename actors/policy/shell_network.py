"""The classifier's rules for programs that reach other hosts (curl, wget, nc,
rsync, ssh ...) and for git: which hosts a line talks to (proxies and
``--connect-to`` included), which git subcommands talk to a remote or run
configured programs, and which git configuration a line may set.

Each rule takes the classifier (:class:`actors.policy.shell._Classifier`) and
raises its category with a reason.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from actors.policy.argv import parse, split_flags
from actors.policy.command_tables import (
    CURL,
    CURL_OUTPUT,
    CURL_PROXY,
    GIT,
    GIT_NETWORK,
    GIT_READ,
    GIT_SAFE_CONFIG_KEYS,
    GIT_WRITE,
    LOOPBACK,
    NC,
    WGET,
    WGET_OUTPUT,
    WRITER_GRAMMARS,
    Grammar,
)
from actors.policy.paths import inside
from actors.policy.shell_words import Word

if TYPE_CHECKING:
    from actors.policy.shell import _Classifier as Classifier


def is_loopback(host: str | None) -> bool:
    return bool(host) and LOOPBACK.match(host or "") is not None


def host_of(text: str) -> str:
    """The host a URL or ``host[:port][/path]`` names ("" when it names none)."""
    try:
        if "://" in text:
            return urlsplit(text).hostname or ""
    except ValueError:
        return ""
    host = text.split("/", 1)[0].rsplit("@", 1)[-1]
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.split(":", 1)[0]


def network(c: Classifier, name: str, args: list[Word]) -> None:
    hosts: list[str] = list(c.proxies)
    if name != "rsync":
        c.reaches(f"{name} uses the network")
    if name == "curl":
        parsed = parse(args, CURL)
        if parsed.has("-K", "--config"):
            c.admin("curl reads its options from a file")
        if parsed.has("--unix-socket", "--abstract-unix-socket"):
            c.admin("curl talks to a local socket")
        hosts += [host_of(w.text) if not w.substituted else "" for w in parsed.operands]
        hosts += [host_of(w.text) for w in parsed.values(*CURL_PROXY)]
        for value in parsed.values("--connect-to"):
            parts = value.text.split(":")
            hosts += [parts[0], parts[2] if len(parts) > 2 else ""]
        for value in parsed.values("--resolve"):
            hosts += value.text.split(":", 2)[-1].strip("[]").split(",")
        for target in parsed.values(*CURL_OUTPUT):
            c.write_target(target)
    elif name == "wget":
        parsed = parse(args, WGET)
        if parsed.has("-e", "--execute", "-i", "--input-file", "--config"):
            c.admin("wget runs settings or reads addresses given elsewhere (-e, -i)")
        hosts += [host_of(w.text) if not w.substituted else "" for w in parsed.operands]
        for target in parsed.values(*WGET_OUTPUT):
            c.write_target(target)
    elif name in ("nc", "ncat", "netcat"):
        parsed = parse(args, NC)
        if parsed.has("-e", "-c", "--exec", "--sh-exec", "--lua-exec", "-l", "--listen"):
            c.admin(f"{name} runs a program on a connection or listens for one")
        hosts += [w.text if not w.substituted else "" for w in parsed.operands[:1]]
    elif name == "rsync":
        parsed = parse(args, WRITER_GRAMMARS["rsync"])
        remote = [w for w in parsed.operands if re.match(r"^([^/]*@)?[^/:]+:|^rsync://", w.text)]
        if parsed.has("-e", "--rsh", "--rsync-path") or remote:
            c.admin(f"network access (rsync to {', '.join(w.text for w in remote)})")
            return
        for target in parsed.operands[-1:]:
            c.write_target(target, recursive=True)
        c.raise_to("write")
        return
    elif name in ("dig", "nslookup", "host", "ping", "ping6", "traceroute", "tracepath",
                  "whois", "mtr"):  # fmt: skip
        hosts += [w.text.lstrip("@") for w in args if not w.text.startswith("-")]
    else:
        c.admin(f"network access ({name})")
        return
    if hosts and all(is_loopback(host) for host in hosts):
        c.raise_to("write", f"{name} to loopback only")
        return
    shown = ", ".join(sorted({h for h in hosts if h})) or "an unknown host"
    c.admin(f"network access ({name} to {shown})")


def git(c: Classifier, args: list[Word]) -> None:
    parsed = parse(args, GIT, stop_at_operand=True)
    saved = c.cwd
    for option, value in parsed.options:
        if option in ("-c", "--config-env"):
            c.admin("git -c sets configuration for this call (aliases, hooks, programs)")
        elif option in ("--git-dir", "--work-tree", "--exec-path", "--namespace"):
            c.admin(f"git {option} works on another repository or programs")
        elif option == "-C" and value is not None:
            c.cd("cd", [value])
    rest = list(parsed.rest)
    try:
        if rest:
            git_subcommand(c, rest[0], rest[1:])
    finally:
        c.cwd = saved


def git_subcommand(c: Classifier, word: Word, args: list[Word]) -> None:
    sub = word.text
    texts = [w.text for w in args]
    operands = [t for t in texts if not t.startswith("-")]
    outside = c.cwd is None or not inside(c.cwd, c.context.cwd)
    for index, text in enumerate(texts):
        if text.startswith("--output="):
            c.write_target(Word(text[9:], args[index].substituted))
        elif text == "--output" and index + 1 < len(args):
            c.write_target(args[index + 1])
    if word.substituted or word.pattern:
        c.admin(f"git subcommand computed at run time ({sub})")
    elif sub in GIT_NETWORK or (sub == "remote" and operands[:1] in (["update"], ["prune"],
                                                                     ["show"])):  # fmt: skip
        c.admin(f"git {sub} talks to another host or runs configured programs")
    elif sub == "archive" and any(t.startswith("--remote") for t in texts):
        c.admin("git archive --remote talks to another host")
    elif sub == "config":
        git_config(c, args)
    elif sub in GIT_READ:
        if sub == "grep" and ({"-O", "--open-files-in-pager"} & set(texts)
                              or any(t.startswith("--open-files") for t in texts)):  # fmt: skip
            c.admin("git grep -O runs a pager program")
        if sub == "diff" and "--ext-diff" in texts:
            c.admin("git diff --ext-diff runs the configured diff program")
    elif sub in GIT_WRITE:
        git_write(c, sub, args, texts, operands, outside)
    else:
        c.admin(f"unknown git subcommand {sub} (a git alias can run anything)")


def git_write(c: Classifier, sub: str, args: list[Word], texts: list[str], operands: list[str],
              outside: bool) -> None:  # fmt: skip
    listing = (
        sub in ("branch", "tag", "remote", "stash")
        and (not operands or operands[:1] == ["list"] or (sub == "remote" and operands == []))
        and not set(texts) & {"-d", "-D", "-m", "-M", "--delete", "-f", "--force"}
    )
    if (listing and sub != "stash") or (sub == "stash" and operands[:1] in (["list"], ["show"])):
        return
    if outside:
        c.admin(f"git {sub} changes a repository outside the working directory")
    if sub == "reset" and "--hard" in texts:
        c.admin("git reset --hard discards work")
    elif sub == "clean" and split_flags(texts) & {"-f", "--force"}:
        c.admin("git clean -f deletes untracked files")
    elif sub in ("checkout", "restore") and ("." in operands or "--" in texts):
        c.admin(f"git {sub} discards changes")
    elif sub in ("worktree", "init") and operands:
        for word in args:
            if word.text == operands[-1]:
                c.write_target(word)
    elif sub == "format-patch":
        parsed = parse(args, Grammar(values="ov", long_values=frozenset({"output-directory"})))
        for target in parsed.values("-o", "--output-directory"):
            c.write_target(target)
    elif sub in ("archive", "bundle"):
        parsed = parse(args, Grammar(values="o", long_values=frozenset({"output"})))
        for target in parsed.values("-o", "--output") + (
            list(parsed.operands[1:2]) if sub == "bundle" else []
        ):
            c.write_target(target)
    c.raise_to("write")


def git_config(c: Classifier, args: list[Word]) -> None:
    parsed = parse(args, Grammar(values="f", long_values=frozenset(
        {"file", "blob", "type", "default", "comment", "value"})))  # fmt: skip
    operands = [w.text for w in parsed.operands]
    if operands[:1] in (["get"], ["list"]) or parsed.has(
        "--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch",
        "--get-color", "--get-colorbool", "--show-origin", "--name-only"
    ) or (len(operands) <= 1 and not parsed.has(
        "--unset", "--unset-all", "--remove-section", "--rename-section", "-e", "--edit"
    )):  # fmt: skip
        return
    if parsed.has("-e", "--edit"):
        c.admin("git config --edit runs an editor")
        return
    if parsed.has("--global", "--system", "-f", "--file"):
        c.admin("git config writes configuration outside the working directory")
        return
    key = (operands[1] if operands[:1] in (["set"], ["unset"]) else operands[0]).lower()
    if key not in GIT_SAFE_CONFIG_KEYS:
        c.admin(f"git config {key} can run programs or name hosts later")
        return
    c.raise_to("write", "git config sets a repository setting")
