"""The policy's place in the tool round: between validation and execution
(coding-agent-loop-spec 3.8, design.md "Policy: where safety sits").

For each call the gate takes the facts (the tool's declared category, a shell
command's parsed one), asks the pure engine (:mod:`actors.policy.engine`), raises
an approval through the session when the answer is ``ask``, remembers "approve
for the session" answers as grants, and records every decision as a durable
``policy_decision`` event (the audit trail). A refusal is the text the model reads.
"""

from __future__ import annotations

from typing import Any

import msgspec
import trio

from actors.kernel import ActorError
from actors.policy.engine import (
    Decision,
    Grant,
    Policy,
    decide,
    env_allowlist,
    facts_for,
    grant_for,
)
from actors.policy.presets import resolve_policy
from actors.policy.sandbox import sandbox_for
from actors.session.approvals import Approvals
from actors.session.events import EventHub
from actors.session.path_checks import PathJudge, PathVerdict
from actors.tools.paths import NO_PATHS, Clearance, PathDeclaration
from protocol.environment import Sandbox
from protocol.events import PolicyDecisionEvent
from protocol.llm import ToolCall
from protocol.session import SessionConfig


class CommandLimits(msgspec.Struct, frozen=True):
    """How commands run under a policy (see :class:`ExecCommand`)."""

    sandbox: Sandbox | None = None
    env_allowlist: tuple[str, ...] | None = None


class PolicyGate:
    """One session's policy state: the resolved policy and the grants given."""

    def __init__(
        self, hub: EventHub, approvals: Approvals, root: str, paths: PathJudge | None = None
    ) -> None:
        """``paths`` resolves and judges file tools' targets (None: not checked)."""
        self.hub = hub
        self.paths = paths
        self.approvals = approvals
        self.root = root
        self.grants: list[Grant] = []
        self._resolved: tuple[str, dict[str, Any], Policy] | None = None
        self._limits: tuple[Policy, CommandLimits] | None = None

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
            limits = CommandLimits(sandbox_for(policy, self.root), env_allowlist(policy))
            self._limits = (policy, limits)
        return self._limits[1]

    async def refusal(
        self,
        call: ToolCall,
        category: Any,
        config: SessionConfig,
        paths: PathDeclaration = NO_PATHS,
    ) -> str | None:
        """None when the call may run; otherwise what the model is told."""
        verdict = await self.check(call, category, config, paths)
        return verdict if isinstance(verdict, str) else None

    async def check(
        self,
        call: ToolCall,
        category: Any,
        config: SessionConfig,
        paths: PathDeclaration = NO_PATHS,
    ) -> str | Clearance | None:
        """What the model is told when the call may not run; otherwise the
        :class:`Clearance` holding the resolved paths the tool must use (None
        when there is no path judge or the call is a shell command).

        ``paths`` is the tool's declaration of which arguments are paths."""
        try:
            policy = self.policy(config)
        except ValueError as exc:  # an unknown preset or bad overrides: fail closed
            self._record(call, Decision("deny", category, str(exc), "invalid_policy", call.name))
            return f"Denied by policy: {exc}"
        facts = facts_for(call.name, category, call.arguments, self.root, policy.tool_categories)
        targets = paths.of(call.arguments)
        judged = self.paths is not None and facts.shell is None
        found = PathVerdict()
        if self.paths is not None and judged and call.name not in policy.deny_tools:
            writes = facts.category != "read"
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
        decided_by = "grant" if decision.rule == "grant" else "policy"
        if decision.action == "ask":
            subject = facts.command if facts.command is not None else _describe(call, targets)
            answer = await self.approvals.ask(
                "command" if facts.command is not None else "tool",
                subject,
                timeout_s=policy.approval_timeout_s,
                tool=call.name,
                call_id=call.id,
                category=facts.category,
                reason=decision.reason,
            )
            decided_by = answer.by
            if answer.approved:
                if answer.scope != "once" and decision.rule != "hard_link":
                    scope = "command" if answer.scope == "session" else answer.scope
                    self.grants.append(grant_for(facts, scope))
                decision = Decision("allow", facts.category, "approved", decision.rule, subject)
            else:
                why = answer.message or "the user said no"
                decision = Decision("deny", facts.category, f"not approved: {why}",
                                    decision.rule, subject)  # fmt: skip
        self._record(call, decision, decided_by)
        if decision.action != "allow":
            return f"Denied by policy: {decision.reason}"
        if not judged:
            return None
        return Clearance(found.resolved, bool(found.hard_links), found.entries)

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
