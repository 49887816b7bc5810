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
    CallFacts,
    Decision,
    Grant,
    Policy,
    decide,
    env_allowlist,
    exact_for,
    facts_for,
    grant_for,
    rule_for,
)
from actors.policy.presets import resolve_policy
from actors.policy.sandbox import sandbox_for
from actors.session.approvals import Approvals
from actors.session.events import EventHub
from actors.session.path_checks import PathJudge, call_paths
from protocol.environment import Sandbox
from protocol.events import PolicyDecisionEvent
from protocol.llm import ToolCall
from protocol.session import SessionConfig

PATH_ARGUMENTS = ("path", "file_path", "paths")


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
    ) -> None:
        """``paths`` resolves and judges file tools' targets (None: not checked);
        ``home`` is where a shell line's ``~`` points (default: this process's)."""
        self.hub = hub
        self.home = home
        self.paths = paths
        self.approvals = approvals
        self.root = root
        self.grants: list[Grant] = []
        self.terminal_cwd: str | None = ""
        """Where the persistent terminal is, as its allowed lines left it ("": the
        working directory; None: not known)."""
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

    async def refusal(self, call: ToolCall, category: Any, config: SessionConfig) -> str | None:
        """None when the call may run; otherwise what the model is told."""
        try:
            policy = self.policy(config)
        except ValueError as exc:  # an unknown preset or bad overrides: fail closed
            self._record(call, Decision("deny", category, str(exc), "invalid_policy", call.name))
            return f"Denied by policy: {exc}"
        facts = facts_for(call.name, category, call.arguments, self.root, policy.tool_categories,
                          self.home, policy.denied_paths, self.terminal_cwd)  # fmt: skip
        if self.paths is not None and facts.shell is None and call.name not in policy.deny_tools:
            targets = call_paths(call.arguments)
            try:
                refused = await self.paths.refusal(policy, targets, facts.category != "read")
            except (ActorError, trio.TooSlowError) as exc:  # cannot tell where it leads
                refused = f"cannot resolve the path: {exc}"
            if refused is not None:
                denial = Decision("deny", facts.category, refused, "paths", _describe(call))
                self._record(call, denial)
                return f"Denied by policy: {refused}"
        decision = decide(policy, facts, self.grants)
        decided_by = "grant" if decision.rule == "grant" else "policy"
        if decision.action == "ask":
            subject = facts.command if facts.command is not None else _describe(call)
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
                if answer.scope != "once":
                    scope = "rule" if answer.scope in ("rule", "tool") else "command"
                    self.grants.append(grant_for(facts, scope))
                decision = Decision("allow", facts.category, "approved", decision.rule, subject)
            else:
                why = answer.message or "the user said no"
                decision = Decision("deny", facts.category, f"not approved: {why}",
                                    decision.rule, subject)  # fmt: skip
        self._record(call, decision, decided_by)
        if decision.action == "allow":
            self._follow_terminal(call, facts)
            return None
        return f"Denied by policy: {decision.reason}"

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


def _describe(call: ToolCall) -> str:
    """A non-shell call as a person reads it: the tool and its target."""
    for name in PATH_ARGUMENTS:
        value = call.arguments.get(name)
        if isinstance(value, str):
            return f"{call.name} {value}"
    return call.name
