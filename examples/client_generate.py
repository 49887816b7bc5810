import msgspec
import trio

from actors import Runtime
from actors.mockllm import Script, ToolCallSpec, Turn, serve_mock_llm
from actors.models.client import Tool, generate, open_client, usage_cost
from actors.models.config import endpoint

# A scripted provider stands in for Anthropic: it calls the tool, then answers.
SCRIPT = Script([Turn(tool_calls=[ToolCallSpec("add", {"a": 2, "b": 40})]), Turn(text="42")])


class Add(msgspec.Struct, frozen=True):
    """Add two integers."""

    a: int
    b: int


async def main() -> None:
    adder = Tool.from_struct("add", Add, lambda args: args.a + args.b)
    async with Runtime() as runtime, serve_mock_llm(SCRIPT) as provider:
        claude = endpoint("anthropic", provider.base_url, "sk-ant-...")
        providers = {"anthropic": claude}
        async with open_client(runtime, providers, default_provider="anthropic") as client:
            result = await generate("claude-sonnet-4-5", "2 + 40?", tools=[adder], client=client)
    print("answer:", result.text, "after", len(result.steps), "steps")
    print("cost known:", usage_cost("claude-sonnet-4-5", result.total_usage) is not None)


trio.run(main)
