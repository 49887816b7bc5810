"""The policy: one function from (tool, category, arguments, mode) to allow, ask
or deny, with the reason the model reads (design.md "Policy: where safety sits").

It sits in the tool round between validation and execution
(coding-agent-loop-spec 3.8). It is pure and cheap: a shell command is parsed once
per call, everything else is set lookups, so a round pays microseconds for it.

The shell analyser (:mod:`actors.policy.shell` and its tables, the blocklist's
matcher, confinement) is imported by the first shell call judged, not with the
engine: a session that runs no shell line, as a one-answer ``troupe run -p``, never
builds its parsers and tables (issue 36).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from actors.policy.categories import Category, worst
from actors.policy.paths import DEFAULT_DENIED, PROTECTED_PATHS

if TYPE_CHECKING:  # imported where a shell line is judged (see the module doc)
    from actors.policy.shell import ShellVerdict

Action = Literal["allow", "ask", "deny"]
Mode = Literal["interactive", "unattended"]
SandboxSetting = Literal["off", "auto", "on"]
EnvSetting = Literal["deny_secrets", "allowlist"]

NetworkSetting = Literal["on", "off"]

ALLOWLIST_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_*", "TERM", "SHELL",
                 "TMPDIR", "TZ", "VIRTUAL_ENV", "CONDA_PREFIX", "JAVA_HOME", "GOPATH", "GOROOT",
                 "CARGO_HOME", "RUSTUP_HOME", "NVM_DIR", "PYENV_ROOT", "GEM_HOME")  # fmt: skip
"""What a command inherits in allowlist mode, the default (agent-loop-and-tool-
system.md 6.4): the issue's list plus where toolchains live, which are paths, not
secrets (``VIRTUAL_ENV`` keeps an activated virtualenv active for ``uv``, ``poetry``
and prompts). A tool's declared variables are passed explicitly on top; the user
adds names with ``env_allow``."""


class Policy(msgspec.Struct, frozen=True, kw_only=True):
    """A session's safety settings (a preset is one of these, by name).

    ``allow`` lists what an unattended job may do beyond reading: tool names
    (``write_file``) or command prefixes (``command:git push``). ``ask_commands``
    are blocklist-style patterns that always ask, whatever their category.
    """

    name: str = "interactive"
    mode: Mode = "interactive"
    read: Action = "allow"
    write: Action = "allow"
    admin: Action = "ask"
    blocklist: tuple[str, ...] = ()
    ask_commands: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    deny_tools: tuple[str, ...] = ()
    tool_categories: dict[str, Category] = msgspec.field(default_factory=dict)
    allowed_paths: tuple[str, ...] = (".",)
    confine_reads: bool = False
    """Reads too must stay in ``allowed_paths`` (the seed's stance); otherwise only
    writes are confined and reads are refused only in ``denied_paths``."""
    denied_paths: tuple[str, ...] = DEFAULT_DENIED
    confine_commands: bool = False
    env: EnvSetting = "allowlist"
    env_allow: tuple[str, ...] = ()
    """Names kept besides :data:`ALLOWLIST_ENV` when ``env`` is ``allowlist``."""
    sandbox: SandboxSetting = "auto"
    """``auto``: commands run in the OS sandbox where it works, and the session warns
    once where it does not; ``on``: refused where it does not; ``off``: never."""
    network: bool | NetworkSetting = False
    """Whether sandboxed commands reach the network (loopback inside the sandbox
    only, otherwise); ``"on"``/``"off"`` or a bool."""
    protected_paths: tuple[str, ...] = PROTECTED_PATHS
    """Read-only inside the writable paths in the sandbox (relative: to the root)."""
    approval_timeout_s: float = 600.0


class Grant(msgspec.Struct, frozen=True):
    """An answer that reaches past one call (design.md "Policy", issue 30: "always
    means that command").

    - ``command`` set: "always": exactly this shell line, in the working directory ``cwd``.
    - ``arguments`` set: "always" for another tool: exactly these arguments.
    - ``command_prefix`` set: the wider rule "commands starting with ...", in ``cwd``
      when set; it never covers an ``admin`` line (those need their own exact grant).
    - none set: every call of ``tool``; for a shell tool, every line but ``admin`` ones.
    """

    tool: str
    command_prefix: str | None = None
    command: str | None = None
    cwd: str | None = None
    arguments: str | None = None


class Decision(msgspec.Struct, frozen=True):
    """What the policy says about one call, and why (the model reads ``reason``)."""

    action: Action
    category: Category
    reason: str
    rule: str
    """Which rule decided: ``blocklist``, ``category``, ``grant``, ``confinement`` ..."""
    subject: str = ""
    """What was judged: the command line, or the tool name with its target."""


class CallFacts(msgspec.Struct, frozen=True):
    """What the policy needs to know of a call."""

    tool: str
    category: Category
    arguments: dict[str, Any]
    root: str
    shell: ShellVerdict | None = None

    @property
    def command(self) -> str | None:
        value = self.arguments.get("command")
        return value if isinstance(value, str) else None


def facts_for(tool: str, declared: Category, arguments: dict[str, Any], root: str,
              overrides: dict[str, Category] | None = None, home: str | None = None,
              hidden: tuple[str, ...] = DEFAULT_DENIED,
              terminal_cwd: str | None = "", sandboxed: bool = True,
              shell: bool = False) -> CallFacts:  # fmt: skip
    """The facts of one call: a ``shell`` tool's (one whose ``command`` argument is a
    shell line, as the tool declares) category comes from its command line,
    judged in the session's working directory ``root`` and ``home`` (default: this
    process's), with ``hidden`` (the policy's denied paths) out of reach.
    ``terminal_cwd``: where the persistent terminal is (``""``: ``root``; None:
    not known), for a call that runs in it. ``sandboxed``: whether the command
    will run in the OS sandbox (see :func:`without_sandbox`)."""
    category = (overrides or {}).get(tool, declared)
    command = arguments.get("command")
    if shell and isinstance(command, str):
        from actors.policy.shell import classify_command
        from actors.policy.shell_paths import ShellContext

        persistent = arguments.get("persistent") is True
        context = ShellContext(root, home or posixpath.expanduser("~"), hidden,
                               persistent=persistent,
                               start=terminal_cwd if persistent else "")  # fmt: skip
        verdict = classify_command(command, context)
        if persistent and context.start != "":
            # The terminal may have been restarted (an abort ends it) and be back in
            # the working directory: the line must be as harmless from there too.
            fresh = classify_command(command, msgspec.structs.replace(context, start=""))
            if worst(fresh.category, verdict.category) != verdict.category:
                verdict = msgspec.structs.replace(
                    fresh, cwd_after=verdict.cwd_after, reasons=fresh.reasons
                )
        if not sandboxed:
            verdict = without_sandbox(verdict)
        return CallFacts(tool, verdict.category if category != "admin" else category,
                         arguments, root, verdict)  # fmt: skip
    return CallFacts(tool, category, arguments, root)


def without_sandbox(verdict: ShellVerdict) -> ShellVerdict:
    """The verdict of a line that runs without the OS sandbox (policy ``sandbox =
    "off"``, or ``auto`` where the environment has none): the sandbox is the
    boundary, so what it alone would confine is ``admin`` - code the line does not
    show (``runs_code``), the network, loopback included (``network``), and
    symbolic links that lead outside (``links_outside``). Under the sandbox these
    stay ``write``, so ordinary work asks nothing (docs/decisions.md)."""
    if not verdict.unconfined or verdict.category == "admin":
        return verdict
    reasons = (*verdict.reasons, *(f"{r} (without the OS sandbox)" for r in verdict.unconfined))
    return msgspec.structs.replace(verdict, category="admin", reasons=reasons)


def escalated(facts: CallFacts, why: str) -> CallFacts:
    """``facts`` of a shell call found to reach outside after all (a path it writes
    resolves outside through a symlink, with no sandbox to stop it): ``admin``."""
    if facts.shell is None or facts.category == "admin":
        return facts
    reasons = (*facts.shell.reasons, f"{why} (without the OS sandbox)")
    shell = msgspec.structs.replace(facts.shell, category="admin", reasons=reasons)
    return msgspec.structs.replace(facts, category="admin", shell=shell)


def effective_sandbox(policy: Policy, available: bool | None) -> bool:
    """Whether a command of this policy runs in the OS sandbox: never with ``off``;
    with ``on`` always (or not at all: it is refused where there is none); with
    ``auto`` where the environment says it has one (``available``; None: it did
    not say, which counts as none)."""
    if policy.sandbox == "off":
        return False
    if policy.sandbox == "on":
        return True
    return available is True


def decide(policy: Policy, facts: CallFacts, grants: Iterable[Grant] = ()) -> Decision:
    """allow, ask or deny for one call."""
    subject = facts.command if facts.command is not None else facts.tool
    if facts.tool in policy.deny_tools:
        return Decision("deny", facts.category, f"{facts.tool} is disabled by the policy",
                        "deny_tools", subject)  # fmt: skip
    verdict = facts.shell
    if verdict is not None:
        from actors.policy.blocklist import first_match

        blocked = first_match(policy.blocklist, verdict.invocations)
        if blocked is not None:
            return Decision("deny", facts.category,
                            f"blocked: '{blocked}' is on the policy's blocklist", "blocklist",
                            subject)  # fmt: skip
        if policy.confine_commands and facts.command is not None:
            from actors.policy.confine import confinement_refusal

            refusal = confinement_refusal(facts.command, facts.root)
            if refusal is not None:
                return Decision("deny", facts.category, refusal, "confinement", subject)
    by_category: dict[str, Action] = {
        "read": policy.read,
        "write": policy.write,
        "admin": policy.admin,
    }
    action = by_category[facts.category]
    reason = _category_reason(facts, verdict)
    rule = "category"
    if verdict is not None and action == "allow":
        from actors.policy.blocklist import first_match

        asked = first_match(policy.ask_commands, verdict.invocations)
        if asked is not None:
            action, reason, rule = "ask", f"'{asked}' needs approval", "ask_commands"
    if action != "allow" and _listed(policy.allow, facts):
        return Decision("allow", facts.category, "listed in the policy", "allow_list", subject)
    if action == "ask" and _granted(grants, facts):
        return Decision("allow", facts.category, "approved for this session", "grant", subject)
    if action == "ask" and policy.mode == "unattended":
        return Decision("deny", facts.category,
                        f"{reason}; an unattended session cannot ask for approval",
                        "unattended", subject)  # fmt: skip
    if action == "deny" and policy.mode == "unattended":
        reason = f"{reason}; an unattended session may do this only if its policy lists it"
    return Decision(action, facts.category, reason, rule, subject)


def _category_reason(facts: CallFacts, verdict: ShellVerdict | None) -> str:
    if verdict is not None and verdict.reasons:
        return f"{facts.category} command: {'; '.join(verdict.reasons)}"
    return f"{facts.tool} is a {facts.category} tool"


def _listed(allow: tuple[str, ...], facts: CallFacts) -> bool:
    for entry in allow:
        if entry.startswith("command:"):
            from actors.policy.blocklist import command_prefix_matches

            if (
                facts.shell is not None
                and facts.shell.invocations
                and all(
                    command_prefix_matches(entry[8:], invocation)
                    for invocation in facts.shell.invocations
                )
            ):
                return True
        elif entry == facts.tool:
            return True
    return False


def _granted(grants: Iterable[Grant], facts: CallFacts) -> bool:
    for grant in grants:
        if grant.tool != facts.tool:
            continue
        if grant.command is not None:
            if facts.command == grant.command and grant.cwd == facts.root:
                return True
            continue
        if grant.arguments is not None:
            if _canonical(facts.arguments) == grant.arguments:
                return True
            continue
        if facts.shell is not None and facts.category == "admin":
            continue  # a wider rule never covers an admin line
        if grant.command_prefix is None:
            return True
        if grant.cwd not in (None, facts.root) or facts.shell is None:
            continue
        from actors.policy.blocklist import command_prefix_matches

        if facts.shell.invocations and all(
            command_prefix_matches(grant.command_prefix, invocation)
            for invocation in facts.shell.invocations
        ):
            return True
    return False


def _canonical(arguments: dict[str, Any]) -> str:
    return msgspec.json.encode(arguments, order="sorted").decode()


def env_allowlist(policy: Policy) -> tuple[str, ...] | None:
    """The variables commands inherit under this policy (None: the environment's
    own default, which drops secrets)."""
    if policy.env != "allowlist":
        return None
    return ALLOWLIST_ENV + tuple(n for n in policy.env_allow if n not in ALLOWLIST_ENV)


GrantScope = Literal["command", "rule"]
"""``command``: "always", exactly this call; ``rule``: the wider rule :func:`rule_for` shows."""


def rule_prefix(facts: CallFacts) -> str | None:
    """The words a wider rule for this shell call would start with: the command
    and its first word when that is a subcommand (``npm test``, ``git push``)."""
    if facts.shell is None or not facts.shell.invocations:
        return None
    argv = facts.shell.invocations[0].argv
    words = list(argv[:1])
    if len(argv) > 1 and re.fullmatch(r"[A-Za-z][\w:.-]*", argv[1]):
        words.append(argv[1])
    return shlex.join(words)


def rule_for(facts: CallFacts) -> str | None:
    """What the wider answer would allow, as the user reads it before choosing it;
    None when there is no wider rule to offer (an ``admin`` shell line: only that
    exact line can be approved for the session)."""
    if facts.shell is None:
        return f"every {facts.tool} call"
    prefix = rule_prefix(facts)
    if facts.category == "admin" or prefix is None:
        return None
    return f"commands starting with `{prefix}` in {facts.root}"


def exact_for(facts: CallFacts) -> str:
    """What "always" allows, as the user reads it."""
    if facts.command is not None:
        return f"exactly `{facts.command}` in {facts.root}"
    return f"{facts.tool} with exactly these arguments"


def grant_for(facts: CallFacts, scope: GrantScope) -> Grant:
    """The grant an answer for the rest of the session gives: ``command`` is
    exactly this call (a shell line in the same working directory); ``rule`` is the
    wider rule of :func:`rule_for`, or exactly this call where there is none."""
    if scope == "rule" and rule_for(facts) is not None:
        if facts.shell is None:
            return Grant(facts.tool)
        return Grant(facts.tool, command_prefix=rule_prefix(facts), cwd=facts.root)
    if facts.command is not None:
        return Grant(facts.tool, command=facts.command, cwd=facts.root)
    return Grant(facts.tool, arguments=_canonical(facts.arguments))
