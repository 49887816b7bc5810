"""One model call: stream the answer, emitting text and reasoning events as they come.

The stream runs in the session's own task, so aborting the session cancels it and
closes the HTTP response at once.
"""

from __future__ import annotations

from actors.models.errors import ModelError, StreamError
from actors.models.fallback import FallbackModel
from actors.models.session import ModelSession
from actors.session.events import EventHub
from protocol.events import (
    AssistantReasoningDeltaEvent,
    AssistantTextDeltaEvent,
    AssistantTextStartEvent,
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


async def call_model(
    model: ModelSession | FallbackModel, request: Request, hub: EventHub, stream: bool
) -> Response:
    """The model's whole answer; raises a typed ModelError when the call fails."""
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
