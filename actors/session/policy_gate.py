"""The policy's place in the tool round: between validation and execution
(coding-agent-loop-spec 3.8, design.md "Policy: where safety sits").

For each call the gate takes the facts (the tool's declared category, a shell
command's parsed one), asks the pure engine (:mod:`actors.policy.engine`), raises
an approval through the session when the answer is ``ask``, remembers "approve
for the session" answers as grants, and records every decision as a durable
``policy_decision`` event (the audit trail). A refusal is the text the model reads.
"""

from __future__ import annotations

import posixpath
from typing import Any

import msgspec
import trio

from actors.hooks import SessionHooks
from actors.hooks.names import anchor_name
from actors.kernel import ActorError
from actors.policy.engine import (
    CallFacts,
    Decision,
    Grant,
    Policy,
    decide,
    effective_sandbox,
    env_allowlist,
    escalated,
    exact_for,
    facts_for,
    grant_for,
    rule_for,
)
from actors.policy.paths import expand, git_control, inside
from actors.policy.presets import resolve_policy
from actors.session.approvals import Approvals
from actors.session.events import EventHub
from actors.session.path_checks import PathJudge, PathVerdict
from actors.tools.paths import Clearance
from actors.tools.tool import Tool
from protocol.environment import Describe, EnvironmentInfo, Sandbox
from protocol.events import PolicyDecisionEvent
from protocol.llm import ToolCall
from protocol.session import SessionConfig

DESCRIBE_TIMEOUT_S = 30.0
NOBODY_TO_ASK = "denied: nobody to ask (a headless run; --approval sets what happens instead)"


class CommandLimits(msgspec.Struct, frozen=True):
    """How commands run under a policy (see :class:`ExecCommand`)."""

    sandbox: Sandbox | None = None
    env_allowlist: tuple[str, ...] | None = None


class PolicyGate:
    """One session's policy state: the resolved policy and the grants given."""

    def __init__(
        self,
        hub: EventHub,
        approvals: Approvals,
        root: str,
        paths: PathJudge | None = None,
        home: str | None = None,
        fenced: tuple[str, ...] = (),
    ) -> None:
        """``paths`` resolves and judges file tools' targets (None: not checked);
        ``home`` is where a shell line's ``~`` points (default: this process's).
        ``fenced``: paths the host adds to every policy's denied paths (Troupe's own
        data and config directories where they are not at their default places);
        one that holds the working directory itself is left out, or nothing in the
        workspace could be touched."""
        self.hub = hub
        self.home = home
        self.fenced = tuple(path for path in fenced if not inside(root, path))
        self.paths = paths
        self.approvals = approvals
        self.root = root
        self.grants: list[Grant] = []
        self.terminal_cwd: str | None = ""
        """Where the persistent terminal is, as its allowed lines left it ("": the
        working directory; None: not known)."""
        self._resolved: tuple[str, dict[str, Any], Policy] | None = None
        self._limits: tuple[Policy, CommandLimits] | None = None
        self._sandbox_available: bool | None = None
        self._sandbox_asked = False
        self.hooks: SessionHooks | None = None
        """The session's PermissionRequest and Notification hooks, once loaded."""

    async def sandboxed(self, policy: Policy) -> bool:
        """Whether this session's commands run in the OS sandbox under ``policy``:
        with ``auto``, the environment says once whether it can confine them (no
        answer, or no environment to ask, counts as no sandbox: fail closed)."""
        if policy.sandbox == "auto" and not self._sandbox_asked:
            self._sandbox_asked = True
            if self.paths is not None:
                try:
                    info = await self.paths.environment.ask(Describe(), timeout=DESCRIBE_TIMEOUT_S)
                except (ActorError, trio.TooSlowError):
                    info = None
                state = info.sandbox if isinstance(info, EnvironmentInfo) else None
                self._sandbox_available = state is not None and state.available
        return effective_sandbox(policy, self._sandbox_available)

    def policy(self, config: SessionConfig) -> Policy:
        """The config's policy, resolved once per change of name or overrides."""
        cached = self._resolved
        if (
            cached is not None
            and cached[0] == config.policy
            and cached[1] == config.policy_overrides
        ):
            return cached[2]
        policy = resolve_policy(config.policy, config.policy_overrides)
        added = tuple(path for path in self.fenced if path not in policy.denied_paths)
        if added:
            policy = msgspec.structs.replace(policy, denied_paths=(*policy.denied_paths, *added))
        self._resolved = (config.policy, dict(config.policy_overrides), policy)
        return policy

    def command_limits(self, config: SessionConfig) -> CommandLimits:
        """What the config's policy imposes on commands: the OS sandbox and the
        environment allowlist (none when the policy is invalid: then
        :meth:`refusal` denies every call)."""
        try:
            policy = self.policy(config)
        except ValueError:
            return CommandLimits()
        if self._limits is None or self._limits[0] is not policy:
            from actors.policy.sandbox import sandbox_for  # the first command's or hook's

            limits = CommandLimits(sandbox_for(policy, self.root), env_allowlist(policy))
            self._limits = (policy, limits)
        return self._limits[1]

    async def refusal(self, call: ToolCall, tool: Tool, config: SessionConfig) -> str | None:
        """None when the call may run; otherwise what the model is told."""
        verdict = await self.check(call, tool, config)
        return verdict if isinstance(verdict, str) else None

    async def check(
        self,
        call: ToolCall,
        tool: Tool,
        config: SessionConfig,
        hint: str | None = None,
    ) -> str | Clearance | None:
        """What the model is told when the call may not run; otherwise the
        :class:`Clearance` holding the resolved paths the tool must use (None
        when there is no path judge or the call is a shell command).

        ``tool`` declares the facts judged: its category, which arguments are
        paths, whether its ``command`` is a shell line. ``hint``: a PreToolUse
        hook's decision (docs/hooks.md): ``allow`` answers a question the policy
        would ask (never a denial), ``ask`` asks where the policy would allow."""
        category, paths = tool.category, tool.paths
        try:
            policy = self.policy(config)
        except ValueError as exc:  # an unknown preset or bad overrides: fail closed
            self._record(call, Decision("deny", category, str(exc), "invalid_policy", call.name))
            return f"Denied by policy: {exc}"
        sandboxed = not tool.runs_commands or await self.sandboxed(policy)
        facts = facts_for(call.name, category, call.arguments, self.root, policy.tool_categories,
                          self.home, policy.denied_paths, self.terminal_cwd,
                          sandboxed, tool.runs_commands)  # fmt: skip
        if not sandboxed and facts.shell is not None and facts.shell.writes:
            facts = await self._writes_resolved(policy, facts)
        targets = paths.of(call.arguments)
        judged = self.paths is not None and facts.shell is None
        found = PathVerdict()
        writes_file = False
        if self.paths is not None and judged and call.name not in policy.deny_tools:
            writes = writes_file = facts.category != "read"
            try:
                found = await self.paths.judge(policy, targets, writes, paths.confined)
            except (ActorError, trio.TooSlowError) as exc:  # cannot tell where it leads
                found = PathVerdict(f"cannot resolve the path: {exc}")
            if found.refusal is not None:
                denial = Decision("deny", facts.category, found.refusal, "paths",
                                  _describe(call, targets))  # fmt: skip
                self._record(call, denial)
                return f"Denied by policy: {found.refusal}"
        decision = decide(policy, facts, self.grants)
        protected = await self._protected_written(policy, found) if writes_file else None
        if (protected is not None and decision.action == "allow" and decision.rule != "grant"
                and policy.admin != "allow"):  # fmt: skip
            # .git/config, .git/hooks, .troupe: what runs code later, outside any
            # sandbox (git runs fsmonitor and hooks): a file tool's change is admin.
            why = f"writes {protected}, which runs code later"
            if policy.mode == "unattended" or policy.admin == "deny":
                decision = Decision("deny", facts.category,
                                    f"{why}; an unattended session cannot ask for approval",
                                    "protected", decision.subject)  # fmt: skip
            else:
                decision = Decision("ask", facts.category, why, "protected", decision.subject)
        if found.hard_links and decision.action != "deny":
            # A hard link is treated as outside: asked every time, never granted.
            why = found.describe_hard_links()
            if decision.action == "ask":
                why = f"{decision.reason}; {why}"
            if policy.mode == "unattended":  # never waits: the policy decides
                why = f"{why}; an unattended session cannot ask for approval"
                decision = Decision("deny", facts.category, why, "hard_link", decision.subject)
            else:
                decision = Decision("ask", facts.category, why, "hard_link", decision.subject)
        decision = _hinted(decision, hint)
        decided_by = {"grant": "grant", "hook": "hook"}.get(decision.rule, "policy")
        if decision.action == "ask":
            subject = facts.command if facts.command is not None else _describe(call, targets)
            settled = await self._settled_without_asking(config, facts, found, subject,
                                                         decision.rule != "protected")  # fmt: skip
            if settled is None or settled[1] == "nobody":  # a hook may answer, even headless
                hooked = await self._hook_answer(call, decision, subject)
                if hooked is not None:
                    settled = hooked, "hook"
            if settled is not None:
                decision, decided_by = settled
                self._record(call, decision, decided_by)
                if decision.action != "allow":
                    return decision.reason
                self._follow_terminal(call, facts)
                return _cleared(found) if judged else None
            if self.hooks:
                await self.hooks.notification(
                    f"Troupe needs your permission to use {anchor_name(call.name, tool)}",
                    "permission_prompt",
                )
            answer = await self.approvals.ask(
                "command" if facts.command is not None else "tool",
                subject,
                timeout_s=policy.approval_timeout_s,
                tool=call.name,
                call_id=call.id,
                category=facts.category,
                reason=decision.reason,
                always=exact_for(facts),
                rule=rule_for(facts),
            )
            decided_by = answer.by
            if answer.approved:
                if answer.scope != "once" and decision.rule != "hard_link":
                    scope = "rule" if answer.scope in ("rule", "tool") else "command"
                    self.grants.append(grant_for(facts, scope))
                decision = Decision("allow", facts.category, "approved", decision.rule, subject)
            else:
                why = answer.message or "the user said no"
                decision = Decision("deny", facts.category, f"not approved: {why}",
                                    decision.rule, subject)  # fmt: skip
        self._record(call, decision, decided_by)
        if decision.action != "allow":
            return f"Denied by policy: {decision.reason}"
        self._follow_terminal(call, facts)
        return _cleared(found) if judged else None

    async def _hook_answer(
        self, call: ToolCall, decision: Decision, subject: str
    ) -> Decision | None:
        """A PermissionRequest hook's answer to the approval about to be raised
        (None: no hook decided; the approval goes to the clients, or is denied when
        nobody can answer). Its ``updatedInput`` is not used: the call was judged
        as the model made it, and a changed one would need judging again."""
        hooks = self.hooks or None
        if hooks is None:
            return None
        said = await hooks.permission_request(call, decision.reason)
        if said.decision == "allow":
            return Decision("allow", decision.category, "allowed by a PermissionRequest hook",
                            "hook", subject)  # fmt: skip
        if said.blocks:
            why = f"denied by a PermissionRequest hook: {said.reason or 'no reason given'}"
            return Decision("deny", decision.category, why, "hook", subject)
        return None

    async def _protected_written(self, policy: Policy, found: PathVerdict) -> str | None:
        """The protected path (``.git/config`` ...) a file tool's write lands in, or None."""
        if self.paths is None or not found.resolved:
            return None
        root = await self.paths.root_path()
        written = (*found.resolved.values(), *found.entries.values())
        for entry in policy.protected_paths:
            place = expand(entry, self.home or posixpath.expanduser("~"), root)
            for path in written:
                if inside(path, place):
                    return entry
        return next((control for path in written if (control := git_control(path))), None)

    async def _writes_resolved(self, policy: Policy, facts: CallFacts) -> CallFacts:
        """A shell line run without the sandbox: where its written paths really are
        (a symlink in the working directory may lead outside, which the classifier,
        reading only the line, cannot see)."""
        if self.paths is None or facts.shell is None or facts.category == "admin":
            return facts
        try:
            found = await self.paths.judge(policy, list(facts.shell.writes), writes=True)
        except (ActorError, trio.TooSlowError) as exc:
            found = PathVerdict(f"cannot resolve the path: {exc}")
        if found.refusal is not None:
            return escalated(facts, f"writes {found.refusal}")
        return facts

    async def _settled_without_asking(
        self,
        config: SessionConfig,
        facts: CallFacts,
        found: PathVerdict,
        subject: str,
        ordinary: bool = True,
    ) -> tuple[Decision, str] | None:
        """The approval mode's answer to a call the policy would ask about, or None
        when a request is raised. Nobody to ask is a denial at once, never a wait.
        ``ordinary``: False for a write to a protected path, which ``allow-workspace``
        does not cover (it runs code later)."""
        mode = config.approval_mode
        if mode == "never-ask":
            return Decision("allow", facts.category, "approval mode never-ask", "approval_mode",
                            subject), "approval_mode"  # fmt: skip
        if mode == "allow-workspace" and ordinary and await self._inside_workspace(facts, found):
            return Decision("allow", facts.category, "a file change inside the workspace "
                            "(approval mode allow-workspace)", "approval_mode",
                            subject), "approval_mode"  # fmt: skip
        if mode == "deny":
            return Decision("deny", facts.category, "denied: approvals are off (approval "
                            "mode deny)", "approval_mode", subject), "approval_mode"  # fmt: skip
        if config.nobody_to_ask:
            return Decision("deny", facts.category, NOBODY_TO_ASK, "nobody_to_ask",
                            subject), "nobody"  # fmt: skip
        return None

    async def _inside_workspace(self, facts: CallFacts, found: PathVerdict) -> bool:
        """A file tool (not a command) whose every target resolved under the root,
        none of them a hard link."""
        if facts.shell is not None or facts.command is not None or facts.category == "admin":
            return False
        if self.paths is None or not found.resolved or found.hard_links:
            return False
        root = await self.paths.root_path()
        return all(inside(path, root) for path in found.resolved.values())

    def _follow_terminal(self, call: ToolCall, facts: CallFacts) -> None:
        """A persistent terminal keeps its directory: the next call starts there."""
        if call.arguments.get("close") is True:
            self.terminal_cwd = ""
        elif facts.shell is not None and call.arguments.get("persistent") is True:
            after = facts.shell.cwd_after
            self.terminal_cwd = "" if after == self.root else after

    def _record(self, call: ToolCall, decision: Decision, decided_by: str = "policy") -> None:
        self.hub.emit(
            PolicyDecisionEvent(
                call.id,
                call.name,
                decision.category,
                decision.action,
                decision.rule,
                decision.reason,
                decision.subject,
                decided_by,
            )
        )


DESCRIBED_ARGUMENTS = 300
"""Characters of a call's arguments shown when the tool declares no paths."""


def _describe(call: ToolCall, targets: list[str]) -> str:
    """A non-shell call as a person reads it: the tool and its declared targets,
    or (declaring none) its arguments, so an approval shows what it approves."""
    if targets:
        return " ".join([call.name, *targets[:3]]) + (" ..." if len(targets) > 3 else "")
    if not call.arguments:
        return call.name
    shown = msgspec.json.encode(call.arguments).decode()
    if len(shown) > DESCRIBED_ARGUMENTS:
        shown = shown[:DESCRIBED_ARGUMENTS] + "..."
    return f"{call.name} {shown}"


def _cleared(found: PathVerdict) -> Clearance:
    """What a tool gets for an allowed call: the paths exactly as judged."""
    return Clearance(found.resolved, bool(found.hard_links), found.entries)


def _hinted(decision: Decision, hint: str | None) -> Decision:
    """The policy's decision after a PreToolUse hook's ``hint``: a hook may spare a
    question or add one, never lift a denial; a protected path or a hard link is
    still asked about."""
    if hint == "ask" and decision.action == "allow" and decision.rule != "grant":
        return Decision("ask", decision.category, "a PreToolUse hook asks for approval",
                        "hook", decision.subject)  # fmt: skip
    if (
        hint == "allow"
        and decision.action == "ask"
        and decision.rule not in ("protected", "hard_link")
    ):
        return Decision("allow", decision.category, "allowed by a PreToolUse hook", "hook",
                        decision.subject)  # fmt: skip
    return decision
