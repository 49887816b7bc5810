"""The built-in wires' descriptors hold together: every adapter they name (on the
provider's own API and on each platform) imports and is an adapter, no two wires
share a spelling or a profile, and the old tables read from them agree with them."""

from __future__ import annotations

import pytest

from actors.config.resolve import DEFAULT_WIRE, KEY_VARIABLES, URL_VARIABLES, WIRES
from actors.models.adapter import Adapter
from actors.models.config import DEFAULT_BASE_URLS, Endpoint, endpoint
from actors.models.endpoints import platform_adapter
from actors.models.errors import ConfigurationError
from actors.models.registry import adapter_factory, adapter_for
from actors.provider_wires import BUILTIN, WireDescriptor, descriptor, of_provider

ON = [(wire, platform) for wire in BUILTIN for platform in ("direct", *wire.platforms)]


@pytest.mark.parametrize(("wire", "platform"), ON, ids=[f"{w.name}@{p}" for w, p in ON])
def test_every_named_adapter_imports(wire: WireDescriptor, platform: str) -> None:
    made = adapter_factory(wire.name, platform)
    assert callable(made)
    if isinstance(made, type):
        assert issubclass(made, Adapter)


@pytest.mark.parametrize("wire", BUILTIN, ids=[w.name for w in BUILTIN])
def test_an_endpoint_on_the_providers_own_api_gets_its_adapter(wire: WireDescriptor) -> None:
    made = adapter_for(endpoint(wire.name, "http://127.0.0.1:9", "k"))
    assert isinstance(made, Adapter)
    assert made.provider == wire.provider_name
    assert of_provider(made.provider) is wire


def test_no_two_wires_share_a_spelling_or_a_profile() -> None:
    spellings = [name for wire in BUILTIN for name in wire.spelled()]
    assert len(spellings) == len(set(spellings))
    profiles = [wire.profile for wire in BUILTIN if wire.profile]
    assert len(profiles) == len(set(profiles))
    for wire in BUILTIN:
        for name in (wire.name, wire.shown, wire.shown.upper(), wire.name.replace("_", "-")):
            assert descriptor(name) is wire


def test_the_tables_read_from_the_descriptors() -> None:
    assert dict(WIRES) == {"openai": "openai_responses", "openai-chat": "openai_chat",
                           "anthropic": "anthropic", "gemini": "gemini"}  # fmt: skip
    assert dict(DEFAULT_WIRE) == {"openai": "openai", "anthropic": "anthropic", "gemini": "gemini"}
    for wire in BUILTIN:
        assert KEY_VARIABLES[wire.name] == KEY_VARIABLES[wire.shown] == wire.key_variables
        assert URL_VARIABLES[wire.name] == wire.url_variable
        assert DEFAULT_BASE_URLS[wire.name] == wire.default_base_url
    assert KEY_VARIABLES["gemini"] == ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    assert "nonesuch" not in KEY_VARIABLES


def test_a_platform_that_does_not_serve_the_wire_is_a_clear_error() -> None:
    """Azure serves OpenAI's wires, Vertex Gemini's and Anthropic's: an endpoint
    asking Azure for Anthropic's gets a ConfigurationError naming where the wire is
    served, not another wire's adapter."""
    asked = Endpoint("anthropic", "https://x.openai.azure.com/openai", "k", platform="azure")
    with pytest.raises(ConfigurationError, match=r"'anthropic' is not served on platform 'azure'"):
        adapter_for(asked)
    with pytest.raises(ConfigurationError, match="served on: bedrock, vertex"):
        platform_adapter(asked)
    unknown = Endpoint("openai_chat", "http://h", platform="moon")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="unknown platform 'moon'"):
        platform_adapter(unknown)


def test_a_descriptor_is_a_frozen_value() -> None:
    """A hand-written value class (issue 36), kept as the dataclass was: built by
    position or keyword with the same defaults, equal by its fields, frozen."""
    import dataclasses

    import pytest

    from actors.provider_wires import TokenCounting, WireDescriptor

    counting = TokenCounting("/count", ("model",), "tokens")
    made = WireDescriptor("toy", "pkg.mod:Adapter", "http://x", ("TOY_KEY",), "TOY_URL",
                          token_counting=counting)  # fmt: skip
    again = WireDescriptor(name="toy", adapter="pkg.mod:Adapter", default_base_url="http://x",
                           key_variables=("TOY_KEY",), url_variable="TOY_URL",
                           token_counting=TokenCounting("/count", ("model",), "tokens"),
                           )  # fmt: skip
    assert made == again
    assert made != WireDescriptor("toy", "pkg.mod:Other", "http://x", ("TOY_KEY",), "TOY_URL")
    assert (made.version_path, made.spellings, dict(made.platforms)) == ("/v1", (), {})
    assert counting.wrap is None and hash(counting) == hash(
        TokenCounting("/count", ("model",), "tokens")
    )
    assert "adapter='pkg.mod:Adapter'" in repr(made)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.name = "other"  # type: ignore[misc]
