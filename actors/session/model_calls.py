"""Asking the model, for the agentic loop (:mod:`actors.session.loop`).

One model call is: the request (system prompt, the history as messages, in
agentic mode the state block for this request only), the call itself with its
errors reported as events, and the answer recorded in the history and as
``assistant_text_end``. It also keeps the counts that come from answers: model
turns, and the tokens the context holds (for the context-window warning).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import msgspec

from actors.models.client.catalog import get_model_info, usage_cost
from actors.models.errors import (
    AccessDeniedError,
    AuthenticationError,
    ContextLengthError,
    ModelError,
)
from actors.models.fallback import FallbackModel
from actors.models.session import ModelSession
from actors.session.agentic_mode import with_state_block
from actors.session.context_view import ContextView
from actors.session.events import EventHub
from actors.session.history import history_chars
from actors.session.model_turn import ToolCallingMode, call_model
from actors.session.profiles import ProviderProfile
from actors.session.prompt import EnvironmentSnapshot, build_system_prompt
from actors.session.token_budget import tokens_spent
from actors.session.tool_images import takes_images, without_images
from actors.session.turns import TurnLog
from protocol.events import AssistantTextEndEvent, CalledTool, ErrorEvent, WarningEvent
from protocol.llm import Message, Request, Response, ToolChoice
from protocol.session import AssistantTurn, SessionConfig, Turn


class ModelFailure(msgspec.Struct, frozen=True):
    """No answer: ``error`` says why; ``fatal`` when no retry can fix it (the key
    or the access), so the session must close."""

    error: str
    fatal: bool = False
    context_length: bool = False
    """The provider refused the request as too long for its context window."""


class ModelCalls:
    """The model side of the loop: requests, calls, answers recorded."""

    def __init__(self, profile: ProviderProfile, hub: EventHub, history: TurnLog) -> None:
        self.profile = profile
        self.hub = hub
        self.history = history
        self.turns = sum(1 for turn in history.raw if isinstance(turn, AssistantTurn))
        """Model answers in the whole session (a resumed one's, and rewound ones, included)."""
        self.view = ContextView()
        """The history as the model sees it (compactions applied)."""
        self._history_chars = 0
        self._chars_counted = 0
        self._cuts = history.cuts
        self._context_tokens: int | None = None

    @staticmethod
    def model_name(profile: ProviderProfile, config: SessionConfig) -> str:
        return profile.model_for(config)

    def request(
        self,
        config: SessionConfig,
        snapshot: EnvironmentSnapshot,
        state_block: str | None,
        identity: str | None = None,
    ) -> Request:
        """The next request; in agentic mode ``state_block`` goes just before the
        latest user prompt, in this request only. ``identity``: the model the system
        prompt names when it is not the request's (a fallback route's own model)."""
        model = self.model_name(self.profile, config)
        system = build_system_prompt(
            self.profile, snapshot, config.user_instructions, identity or model
        )
        messages: Sequence[Message] = self.view.messages(self.history)
        if self.view.images and not takes_images(identity or model):
            messages = without_images(messages, identity or model)
        if state_block is not None:
            messages = with_state_block(messages, self.view.prompt_index(), state_block)
        return Request(
            model=model,
            messages=[Message.system(system), *messages],
            tools=self.profile.tools(),
            tool_choice=ToolChoice("auto"),
            reasoning_effort=config.reasoning_effort,
            provider_options=self.profile.provider_options(),
            wire_options=config.provider_options,
        )

    async def ask(
        self,
        model: ModelSession | FallbackModel,
        request: Request,
        tool_calling: ToolCallingMode,
    ) -> Response | ModelFailure:
        """The model's answer, or why there is none (reported as an event)."""
        try:
            return await call_model(
                model, request, self.hub, self.profile.supports_streaming, tool_calling
            )
        except (AuthenticationError, AccessDeniedError) as error:
            return self._report(error, fatal=True)
        except ContextLengthError as error:
            self.hub.emit(WarningEvent(str(error), "context_length"))
            return ModelFailure(str(error), context_length=True)
        except ModelError as error:
            return self._report(error)

    def _report(self, error: ModelError, fatal: bool = False) -> ModelFailure:
        self.hub.emit(
            ErrorEvent(
                error_type=type(error).__name__,
                message=str(error),
                retryable=bool(getattr(error, "retryable", False)),
            )
        )
        return ModelFailure(f"{type(error).__name__}: {error}", fatal)

    def record(self, response: Response, model_name: str) -> None:
        """The answer into the history and the event stream."""
        self.turns += 1
        usage = response.usage
        self._context_tokens = tokens_spent(usage, response.provider)
        self.history.append(
            AssistantTurn(
                content=response.text,
                tool_calls=response.tool_calls,
                reasoning=response.reasoning,
                usage=response.usage,
                response_id=response.id or None,
                timestamp=time.time(),
                message=response.message,
                seq=self.hub.last_seq + 1,  # its assistant_text_end, emitted next
            )
        )
        self.hub.emit(
            AssistantTextEndEvent(
                text=response.text,
                reasoning=response.reasoning,
                tool_calls=[CalledTool(c.id, c.name) for c in response.tool_calls],
                usage=response.usage,
                cost_usd=usage_cost(response.model, usage) or usage_cost(model_name, usage),
            )
        )

    def warn_about_context(self, config: SessionConfig) -> bool:
        """Warn once the history nears the context window: the model catalog's window
        for the model in use (else the profile's), and the tokens the provider counted
        on its last answer (else ~4 characters a token).

        The character count is kept up to date incrementally: recounting the whole
        history on every round would make each round slower than the last."""
        history: Sequence[Turn] = self.history
        if self._cuts != self.history.cuts:  # rewound: count again, the provider's too
            self._cuts, self._history_chars, self._chars_counted = self.history.cuts, 0, 0
            self._context_tokens = None
        self._history_chars += history_chars(history[self._chars_counted :])
        self._chars_counted = len(history)
        info = get_model_info(self.model_name(self.profile, config))
        window = info.context_window if info is not None else self.profile.context_window_size
        tokens = self._context_tokens or self._history_chars / 4
        if tokens <= window * config.context_warning_ratio:
            return False
        percent = round(tokens / window * 100)
        message = f"Context usage at ~{percent}% of context window"
        self.hub.emit(WarningEvent(message, "context_usage"))
        return True
