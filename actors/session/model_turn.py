"""One model call: stream the answer, emitting text and reasoning events as they come.

The stream runs in the session's own task, so aborting the session cancels it and
closes the HTTP response at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from actors.models.errors import ModelError, StreamError
from actors.models.fallback import FallbackModel
from actors.models.session import ModelSession
from actors.session.events import EventHub
from protocol.events import (
    AssistantReasoningDeltaEvent,
    AssistantTextDeltaEvent,
    AssistantTextStartEvent,
    WarningEvent,
)
from protocol.llm import (
    Finish,
    ReasoningDelta,
    Request,
    Response,
    StreamFailed,
    TextDelta,
    TextStart,
)

if TYPE_CHECKING:
    from actors.session.text_calls.calling import ToolCalling, Translations


class ToolCallingMode:
    """How this session's calls carry tools; ``auto`` becomes ``text`` for good the
    first time a server rejects ``tools``.

    Text calling (:mod:`actors.session.text_calls`: its prompt, its stream watch and
    their patterns) is imported by the first call that uses it: most sessions'
    models call tools natively and never do (issue 36)."""

    def __init__(self, mode: ToolCalling) -> None:
        self.mode: ToolCalling = mode
        self._translations: Translations | None = None

    @property
    def translations(self) -> Translations:
        """The text form of the history's messages, kept across rounds."""
        if self._translations is None:
            from actors.session.text_calls.calling import Translations

            self._translations = Translations()
        return self._translations


async def call_model(
    model: ModelSession | FallbackModel,
    request: Request,
    hub: EventHub,
    stream: bool,
    calling: ToolCallingMode | None = None,
) -> Response:
    """The model's whole answer; raises a typed ModelError when the call fails.
    With text calling, the tools travel in the prompt and the calls in the text."""
    if calling is not None and calling.mode == "text" and request.tools:
        return await _call_with_text(model, request, hub, stream, calling.translations)
    try:
        return await _call_native(model, request, hub, stream)
    except ModelError as error:
        if calling is None or calling.mode != "auto":
            raise
        from actors.session.text_calls.calling import rejects_tools

        if not rejects_tools(error, request):
            raise
        calling.mode = "text"
        hub.emit(
            WarningEvent(
                f"the server refused native tool calls ({error}); "
                "tools are offered as text from now on",
                category="text_tool_calls",
            )
        )
        return await _call_with_text(model, request, hub, stream, calling.translations)


async def _call_with_text(
    model: ModelSession | FallbackModel,
    request: Request,
    hub: EventHub,
    stream: bool,
    translations: Translations,
) -> Response:
    """Stream until a complete call has arrived (early detection, R3.5), then stop
    generating: whatever the model writes after its call (a made-up observation)
    would only be thrown away."""
    from actors.session.text_calls.calling import text_request, text_response
    from actors.session.text_calls.stream import CallWatch

    plain = text_request(request, translations)
    if not stream:
        done = await _call_native(model, plain, hub, stream)
        return text_response(done.text, done.model, request.tools, done.usage, done.id)
    watch = CallWatch(tuple(tool.name for tool in request.tools))
    finished: Response | None = None
    started = False
    async with model.stream(plain) as events:
        async for event in events:
            match event:
                case TextStart():
                    if not started:
                        hub.emit(AssistantTextStartEvent())
                        started = True
                case TextDelta():
                    hub.emit(AssistantTextDeltaEvent(event.delta))
                    if watch.feed(event.delta):
                        break
                case ReasoningDelta():
                    hub.emit(AssistantReasoningDeltaEvent(event.delta))
                case Finish():
                    finished = event.response
                case StreamFailed():
                    raise _stream_error(event)
    if finished is not None:
        return text_response(
            finished.text, finished.model, request.tools, finished.usage, finished.id
        )
    if not watch.complete:
        raise StreamError(f"{request.model}: the stream ended without a finish event")
    return text_response(watch.text, request.model, request.tools)


async def _call_native(
    model: ModelSession | FallbackModel, request: Request, hub: EventHub, stream: bool
) -> Response:
    if not stream:
        response = await model.complete(request)
        if response.text:
            hub.emit(AssistantTextStartEvent())
        return response
    started = False
    response: Response | None = None
    async with model.stream(request) as events:
        # Read to the very end even after Finish: a response left half-read cannot go
        # back to the connection pool, and every round would open a new connection.
        async for event in events:
            match event:
                case TextStart():
                    if not started:
                        hub.emit(AssistantTextStartEvent())
                        started = True
                case TextDelta():
                    hub.emit(AssistantTextDeltaEvent(event.delta))
                case ReasoningDelta():
                    hub.emit(AssistantReasoningDeltaEvent(event.delta))
                case Finish():
                    response = event.response
                case StreamFailed():
                    raise _stream_error(event)
    if response is None:
        raise StreamError(f"{request.model}: the stream ended without a finish event")
    return response


def _stream_error(event: StreamFailed) -> ModelError:
    info = event.error
    return StreamError(f"{info.kind}: {info.message}", provider=info.provider)
