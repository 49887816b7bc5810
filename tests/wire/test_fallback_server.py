"""``troupe serve --fallback anthropic``: a server's session whose OpenAI endpoint
answers 500 every time completes on the Anthropic one, the switch in its events."""

from __future__ import annotations

from protocol.wire import CreateSession, SessionCreated, SubmitInput
from tests.wire.conftest import StartStack, events_until, subscribe

SCRIPT = {
    "turns": [
        {
            "text": "Answered by the fallback.",
            "fault": {"status": 500, "message": "openai is down", "wires": ["openai_responses"]},
        }
    ]
}


async def test_a_server_session_falls_back_to_the_next_profile(start_stack: StartStack) -> None:
    async with start_stack(SCRIPT, fallbacks=("anthropic",)) as stack, stack.client() as client:
        created = await client.request(CreateSession)
        assert isinstance(created, SessionCreated)
        session = created.session.session_id
        await subscribe(client, session)
        await client.request(SubmitInput, session=session, text="hello")
        events = await events_until(client, "processing_end")
    switch = [e.data for e in events if e.kind == "model_fallback"]
    assert len(switch) == 1
    assert switch[0]["from_wire"] == "openai_responses" and switch[0]["to_wire"] == "anthropic"
    assert switch[0]["to_model"].startswith("claude")
    texts = [e.data["text"] for e in events if e.kind == "assistant_text_end"]
    assert texts == ["Answered by the fallback."]
    paths = [r.path for r in stack.mock.requests]
    assert paths[-1].endswith("/v1/messages")
    assert sum(p.endswith("/v1/responses") for p in paths) == 3  # 1 try + 2 retries


def test_the_fallback_option_reaches_the_server_settings() -> None:
    from actors.cli import build_parser
    from actors.commands.serve import config_from

    args = build_parser().parse_args(["serve", "--fallback", "anthropic", "--fallback", "gemini"])
    assert config_from(args).models.fallbacks == ("anthropic", "gemini")
    assert config_from(build_parser().parse_args(["serve"])).models.fallbacks == ()
