"""The interactive conversation's commands: a line that starts with ``/``.

``/help``, ``/model [NAME]``, ``/policy``, ``/sessions``, ``/resume ID``,
``/clear`` (a new session), ``/cost``, ``/diff`` (what the session changed),
``/compact``, ``/rewind`` (pick an input to go back to), ``/fork``, ``/skills``
and ``/exit``; a custom command (a Markdown prompt file,
:mod:`actors.skills.commands`) is sent to the session, which expands it. Each
is a small method on :class:`SlashCommands`, found by name, so later ones
(``/compact``, ``/rewind``, ``/fork``) are one method and one help line.
A line like ``/usr/bin is empty`` is no command (its first word is not a
``/name``) and goes to the model as it is.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, cast

import trio

from actors.commands.common import data_dir
from actors.commands.render_calls import dollars, short
from actors.commands.render_diff import DiffLine, call_diff, text_diff
from actors.commands.stored import stored_sessions
from actors.policy.presets import UnknownPreset, policy_preset
from actors.skills.catalog import discover_local
from actors.skills.commands import discover_commands_local
from environments.safe_git import SAFE_GIT_ENV, safe_git_argv
from protocol.client import RequestError
from protocol.session import Spend, UserTurn
from protocol.wire import (
    Compacted,
    CompactSession,
    ConfigUpdated,
    Forked,
    ForkSession,
    GetSession,
    RewindSession,
    Rewound,
    SessionDetail,
    UpdateSessionConfig,
)

if TYPE_CHECKING:
    from actors.commands.interactive import Conversation

HELP = (
    ("/help", "this list"),
    ("/model [NAME]", "the model; with NAME, switch to it from the next model call"),
    ("/policy", "the safety policy of this session and what it asks"),
    ("/sessions", "the latest sessions (resume one with /resume ID)"),
    ("/resume ID", "go on with another session"),
    ("/clear", "start a new session (this one is kept)"),
    ("/cost", "tokens and cost of this session so far"),
    ("/compact [INSTRUCTIONS]", "summarize the older part of the conversation now"),
    ("/rewind [N [code|both] [summarize]]", "list the inputs; go back to before input N"),
    ("/fork [N]", "go on in a new session: all of this one, or up to before input N"),
    ("/diff", "what the session changed (git diff of the workspace, else its edits)"),
    ("/skills", "the skills the model can load (docs/skills.md)"),
    ("/exit", "leave (also Ctrl-D); the session is kept"),
)
IDLE_ONLY = frozenset({"clear", "resume", "compact", "rewind"})
"""Commands that change the session: not while it works (Ctrl-C first)."""
SESSIONS_SHOWN = 10

_NAME = re.compile(r"^/([a-z][a-z-]*)$")


def is_command(line: str) -> bool:
    """Whether the line is meant as a command: its first word is ``/name``."""
    first = line.split(maxsplit=1)[0] if line.strip() else ""
    return _NAME.match(first) is not None


def _split(line: str) -> tuple[str, str]:
    parts = line.strip().split(maxsplit=1)
    return parts[0][1:], (parts[1].strip() if len(parts) > 1 else "")


class SlashCommands:
    """The commands of one conversation."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation

    def known(self, line: str) -> bool:
        name, _ = _split(line)
        return self._handler(name) is not None

    def _handler(self, name: str) -> Callable[[str], Awaitable[None]] | None:
        name = {"quit": "exit", "new": "clear", "?": "help"}.get(name, name)
        handler = getattr(self, "do_" + name.replace("-", "_"), None)
        return cast(Callable[[str], Awaitable[None]] | None, handler)

    async def run(self, line: str) -> None:
        name, argument = _split(line)
        handler = self._handler(name)
        if handler is None:
            commands, _ = discover_commands_local(self.conversation.workdir)
            if commands.get(name) is not None:  # the session expands it (docs/skills.md)
                await self.conversation.submit(line.strip())
                return
            self.say(f"unknown command /{name}; /help lists them")
            return
        conversation = self.conversation
        if name in IDLE_ONLY and conversation.session.state == "processing":
            self.say(f"/{name} waits for the session: press Ctrl-C to interrupt it first")
            return
        try:
            await handler(argument)
        except RequestError as error:
            self.say(f"[refused] {error}")

    def say(self, text: str) -> None:
        self.conversation.note(text)

    async def _detail(self) -> SessionDetail:
        conversation = self.conversation
        reply = await conversation.host.client.request(
            GetSession, session=conversation.session.session
        )
        return cast(SessionDetail, reply)

    async def do_help(self, _: str) -> None:
        width = max(len(usage) for usage, _ in HELP)
        lines = [f"  {usage:<{width}}  {what}" for usage, what in HELP]
        extra = [
            "  Enter sends; Alt-Enter, or Enter after a \\, starts a new line.",
            "  While the session works, a typed line steers it; 'stop' stops it after the",
            "  current step; Ctrl-C interrupts the turn (the session is kept).",
        ]
        commands, _problems = discover_commands_local(self.conversation.workdir)
        custom = [
            f"  /{c.name} {c.argument_hint}".rstrip() + f"  {c.description}"
            for c in commands.commands
        ]
        if custom:
            extra = ["custom commands (Markdown prompt files):", *custom, *extra]
        self.say("\n".join(["commands:", *lines, *extra]))

    async def do_skills(self, _: str) -> None:
        catalog, problems = discover_local(self.conversation.workdir)
        if not catalog.skills:
            self.say("no skills (SKILL.md folders in .troupe/skills, .claude/skills, "
                     ".codex/skills, .agents/skills, or the same under ~)")  # fmt: skip
        else:
            width = max(len(skill.name) for skill in catalog.skills)
            lines = [f"  {k.name:<{width}}  {k.scope:<7}  {short(k.description, 70)}"
                     for k in catalog.skills]  # fmt: skip
            self.say("\n".join(["skills:", *lines]))
        for problem in problems:
            self.say(problem)

    async def do_exit(self, _: str) -> None:
        conversation = self.conversation
        conversation.leaving = True
        await conversation.interrupt_and_wait()

    async def do_model(self, name: str) -> None:
        conversation = self.conversation
        if not name:
            detail = await self._detail()
            model = detail.session.config.model or detail.session.model
            self.say(f"model: {model} (/model NAME switches)")
            return
        reply = await conversation.host.client.request(
            UpdateSessionConfig, session=conversation.session.session, model=name
        )
        model = cast(ConfigUpdated, reply).config.model or name
        self.say(f"model: {model} from the next model call")

    async def do_policy(self, _: str) -> None:
        detail = await self._detail()
        config = detail.session.config
        try:
            policy = policy_preset(config.policy)
        except UnknownPreset:
            self.say(f"policy: {config.policy}")
            return
        parts = [
            f"reads {policy.read}",
            f"writes {policy.write}",
            f"admin commands {policy.admin}",
            f"sandbox {policy.sandbox}",
            f"network {'on' if policy.network else 'off'}",
        ]
        overrides = " (with overrides)" if config.policy_overrides else ""
        self.say(
            f"policy: {config.policy}{overrides}: " + ", ".join(parts)
            + "\n  another policy: troupe --policy NAME (interactive, unattended, sandboxed, "
            "permissive, ...)"
        )  # fmt: skip

    async def do_sessions(self, _: str) -> None:
        conversation = self.conversation
        stored = await stored_sessions(data_dir(conversation.args))
        if not stored:
            self.say("no sessions stored yet")
            return
        current = conversation.session.session
        lines = []
        for item in sorted(stored, key=lambda s: s.updated, reverse=True)[:SESSIONS_SHOWN]:
            mark = "*" if item.session_id == current else " "
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(item.updated))
            task = short(item.task, 50) or "(no input yet)"
            lines.append(f" {mark}{item.session_id:<12} {when}  {item.working_dir or '-'}  {task}")
        more = len(stored) - SESSIONS_SHOWN
        tail = [f"  … {more} more (troupe sessions)"] if more > 0 else []
        self.say("\n".join(["sessions (newest first; * is this one):", *lines, *tail]))

    async def do_resume(self, session: str) -> None:
        if not session:
            self.say("/resume ID: which session (/sessions lists them)")
            return
        await self.conversation.open_session(session)

    async def do_clear(self, _: str) -> None:
        await self.conversation.open_session(None)

    async def do_cost(self, _: str) -> None:
        conversation = self.conversation
        outcome = conversation.session.outcome
        detail = await self._detail()
        info = detail.session
        tokens_in = max(info.input_tokens, outcome.usage.get("input_tokens", 0))
        tokens_out = max(info.output_tokens, outcome.usage.get("output_tokens", 0))
        cost = info.cost_usd if info.cost_usd is not None else outcome.cost_usd
        spend = info.spend
        if spend is not None and spend.calls:
            self.say(ledger_lines(spend, info.model))
            return
        price = "price unknown (a model without a listed price)" if cost is None else dollars(cost)
        self.say(
            f"cost: {tokens_in:,} in / {tokens_out:,} out tokens · {price} · "
            f"{max(info.iterations, outcome.iterations)} model calls ({info.model})"
        )

    async def do_compact(self, instructions: str) -> None:
        conversation = self.conversation
        self.say("compacting the conversation …")
        reply = await conversation.host.client.request(
            CompactSession, session=conversation.session.session, instructions=instructions or None
        )
        outcome = cast(Compacted, reply).outcome
        if outcome.error is not None:
            self.say(f"compaction: {outcome.error}")
        elif outcome.kind == "none":
            self.say("compaction: nothing old enough to compact yet")
        else:
            what = "summarized" if outcome.kind == "summary" else "pruned old tool outputs"
            self.say(
                f"compaction: {what}; context ~{outcome.tokens_before:,} → "
                f"~{outcome.tokens_after:,} tokens"
            )

    async def _inputs(self) -> list[UserTurn]:
        detail = await self._detail()
        return [t for t in detail.history if isinstance(t, UserTurn) and t.seq > 0]

    async def _pick(self, word: str, usage: str) -> UserTurn | None:
        """The input numbered ``word`` in the list, or the list (and None)."""
        inputs = await self._inputs()
        if not inputs:
            self.say("no input to go back to yet")
            return None
        if word.isdigit() and 1 <= int(word) <= len(inputs):
            return inputs[int(word) - 1]
        width = len(str(len(inputs)))
        lines = [f"  {n:>{width}}  {short(t.content, 70)}" for n, t in enumerate(inputs, 1)]
        self.say("\n".join(["inputs of this session:", *lines, usage]))
        return None

    async def do_rewind(self, argument: str) -> None:
        words = argument.split()
        usage = (
            "/rewind N goes back to before input N (the conversation; add code for the "
            "files, both for both; summarize keeps a summary of what is cut)"
        )
        turn = await self._pick(words[0] if words else "", usage)
        if turn is None:
            return
        options = set(words[1:])
        mode = "both" if "both" in options else "code" if "code" in options else "conversation"
        conversation = self.conversation
        reply = await conversation.host.client.request(
            RewindSession, session=conversation.session.session, to_seq=turn.seq, mode=mode,
            summarize="summarize" in options,
        )  # fmt: skip
        outcome = cast(Rewound, reply).outcome
        if mode != "code":
            conversation.prefill = outcome.text
            self.say(f"rewound; the input is back in the prompt to edit: {short(outcome.text, 60)}")

    async def do_fork(self, argument: str) -> None:
        conversation = self.conversation
        at: int | None = None
        text = ""
        if argument:
            turn = await self._pick(argument.split()[0], "/fork N forks up to before input N")
            if turn is None:
                return
            at, text = turn.seq, turn.content
        source = conversation.session.session
        reply = cast(
            Forked,
            await conversation.host.client.request(ForkSession, session=source, at_seq=at),
        )
        fork = reply.session.session_id
        await conversation.open_session(fork)
        conversation.prefill = text
        self.say(f"forked {source} into {fork} ({reply.turns} turns); /resume {source} goes back")

    async def do_diff(self, _: str) -> None:
        conversation = self.conversation
        renderer = conversation.session.renderer
        lines = None if conversation.remote else await _git_diff(conversation.workdir)
        if lines is None:
            lines = [
                line
                for fields, arguments in renderer.edits
                for line in (call_diff(fields, arguments) or [])
            ]
            source = "the session's edits in this conversation"
        else:
            source = f"git diff in {conversation.workdir}"
        if not lines:
            self.say(f"no changes ({source})")
            return
        self.say(f"{source}:")
        renderer.diff(lines, indent="  ")


async def _git_diff(workdir: object) -> list[DiffLine] | None:
    """The workspace's changes against HEAD, and its untracked files; None when
    the directory is not a git work tree (or git is missing)."""

    async def git(*args: str) -> tuple[int, str]:
        try:
            done = await trio.run_process(
                safe_git_argv(*args), cwd=str(workdir), env={**os.environ, **SAFE_GIT_ENV},
                capture_stdout=True, capture_stderr=True, check=False,
            )  # fmt: skip
        except OSError:
            return 127, ""
        return done.returncode, done.stdout.decode(errors="replace")

    code, inside = await git("rev-parse", "--is-inside-work-tree")
    if code != 0 or inside.strip() != "true":
        return None
    code, text = await git("diff", "--no-color", "HEAD")
    if code != 0:  # no commit yet: against the index
        _, text = await git("diff", "--no-color")
    lines = text_diff(text)
    _, untracked = await git("ls-files", "--others", "--exclude-standard")
    for path in untracked.splitlines():
        lines.append(("+", f"+++ {path} (new, untracked)"))
    return lines


__all__ = ["HELP", "SlashCommands", "is_command"]


def ledger_lines(spend: Spend, model: str) -> str:
    """``/cost`` from the session's ledger: dollars, then the tokens by kind."""
    price = dollars(spend.cost_usd)
    if spend.unpriced_calls:
        price += f" (+ {spend.unpriced_calls} calls of a model without a listed price)"
    return (
        f"cost: {price} · {spend.calls} model calls ({model}; subagents and compactions "
        f"included)\n  tokens: {spend.input_tokens:,} in · {spend.output_tokens:,} out · "
        f"{spend.cache_read_tokens:,} cache read · {spend.cache_write_tokens:,} cache write · "
        f"{spend.reasoning_tokens:,} reasoning"
    )
