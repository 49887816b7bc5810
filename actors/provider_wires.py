"""Every provider wire, described once: what the rest of Troupe knows about a wire
it reads from its :class:`WireDescriptor` here, and nowhere compares a wire's name.

A descriptor says which adapter speaks the wire (as ``"module:attribute"``, imported
when an endpoint first uses it, so a run that speaks one wire does not import the
others), where the provider is by default, which environment variables configure it,
the names users type for it, the profile it serves, how the provider counts tokens,
how a structured answer is asked for, and where a model's context window comes from.

Adding a wire is its adapter plus its descriptor: appended to :data:`BUILTIN` in this
tree, or, from another package, offered under the ``troupe.wires`` entry-point group
(``[project.entry-points."troupe.wires"] my_wire = "my_pkg.wire:DESCRIPTOR"``); a
name not among the built-in wires is looked up there (see docs/extending.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Literal, TypeVar

T = TypeVar("T")
ENTRY_POINTS = "troupe.wires"
"""The entry-point group another package offers its wires under."""


class _Frozen:
    """A small frozen value class written by hand, not a dataclass: building two
    dataclasses at import was about 12 M instructions of every ``troupe`` command
    that reads the wires (issue 36). Its fields are its ``__slots__``; it compares,
    hashes and prints by them, and refuses assignment as a frozen dataclass does,
    with the same error, imported only then: ``dataclasses`` imports ``inspect``,
    about half of ``troupe --version``'s own time in a plain install."""

    __slots__ = ()

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"

    def __setattr__(self, name: str, value: object) -> None:
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _set(self, **values: object) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)


class TokenCounting(_Frozen):
    """The provider's own, free count of a request's input tokens: a POST of some of
    the request's fields to ``path`` (after the base URL; ``{model}`` is the model)."""

    __slots__ = ("path", "keys", "result", "wrap")  # noqa: RUF023 (field order)
    path: str
    keys: tuple[str, ...]
    """The fields of the request's body the count takes (it refuses the others)."""
    result: str
    """The answer's field that holds the count."""
    wrap: str | None
    """The fields go inside this object, beside ``"model": "models/<model>"`` (Gemini)."""

    def __init__(
        self, path: str, keys: tuple[str, ...], result: str, wrap: str | None = None
    ) -> None:
        self._set(path=path, keys=keys, result=result, wrap=wrap)


class WireDescriptor(_Frozen):
    """One provider wire format and everything Troupe knows about it (a frozen
    value class, not a msgspec Struct: building the command line's parser reads the
    descriptors, and ``troupe --help`` imports no msgspec; nor a dataclass, whose
    making at import cost more than the rest of this module)."""

    __slots__ = (  # noqa: RUF023 (the fields' order: repr and equality follow it)
        "name", "adapter", "default_base_url", "key_variables", "url_variable",
        "command_line", "spellings", "profile", "version_path", "endpoint_variables",
        "platforms", "token_counting", "structured_output", "provider",
        "cached_input_apart", "tools_may_be_refused", "context_window",
    )  # fmt: skip

    name: str
    """The model layer's name (``Endpoint.wire``): lower case, underscores."""
    adapter: str
    """``"module:attribute"`` of the adapter: a class or factory taking the Endpoint."""
    default_base_url: str
    key_variables: tuple[str, ...]
    """The environment variables that may hold the key, the first set one wins."""
    url_variable: str
    """The environment variable that moves the base URL (a local or proxy server)."""
    command_line: str | None
    """The name ``--wire`` and the config files show; None: the library's name only
    (still accepted wherever a wire is read, in any spelling)."""
    spellings: tuple[str, ...]
    """Further names users type (``openai`` for the Responses API)."""
    profile: str | None
    """The provider profile (tools and prompts) this wire serves when none is chosen."""
    version_path: str
    """Appended to a base URL that names no API version ("" for none)."""
    endpoint_variables: Mapping[str, str]
    """Further :class:`Endpoint` fields read from the environment (field -> variable)."""
    platforms: Mapping[str, str]
    """Hosted platforms that serve this wire: platform -> ``"module:attribute"`` of
    the adapter that speaks it there (see :mod:`actors.models.endpoints`)."""
    token_counting: TokenCounting | None
    """None: the provider has no count; Troupe estimates (a quarter of the body)."""
    structured_output: Literal["response_format", "output_tool"]
    """How an answer fitting a JSON Schema is asked for: the request's response
    format, or a forced call of an output tool whose input is the answer."""
    provider: str
    """The name the adapter gives its answers, usage and errors (``Response.provider``,
    ``ModelError.provider``), and the model catalog's provider; "" = :attr:`name`."""
    cached_input_apart: bool
    """The provider reports cached input tokens apart from ``input_tokens`` (Anthropic);
    the others count them inside it."""
    tools_may_be_refused: bool
    """Servers behind this wire may lack native tool calling and refuse a request
    that carries tools (OpenAI-compatible local servers): the session then writes
    the calls as text (:mod:`actors.session.text_calls`)."""
    context_window: Literal["catalog"]
    """Where a model's window comes from: the model catalog (then the profile's
    default); no wire reports it in its answers."""

    def __init__(
        self,
        name: str,
        adapter: str,
        default_base_url: str,
        key_variables: tuple[str, ...],
        url_variable: str,
        command_line: str | None = None,
        spellings: tuple[str, ...] = (),
        profile: str | None = None,
        version_path: str = "/v1",
        endpoint_variables: Mapping[str, str] | None = None,
        platforms: Mapping[str, str] | None = None,
        token_counting: TokenCounting | None = None,
        structured_output: Literal["response_format", "output_tool"] = "response_format",
        provider: str = "",
        cached_input_apart: bool = False,
        tools_may_be_refused: bool = False,
        context_window: Literal["catalog"] = "catalog",
    ) -> None:
        self._set(
            name=name, adapter=adapter, default_base_url=default_base_url,
            key_variables=key_variables, url_variable=url_variable,
            command_line=command_line, spellings=spellings, profile=profile,
            version_path=version_path,
            endpoint_variables=MappingProxyType({}) if endpoint_variables is None
            else endpoint_variables,
            platforms=MappingProxyType({}) if platforms is None else platforms,
            token_counting=token_counting, structured_output=structured_output,
            provider=provider, cached_input_apart=cached_input_apart,
            tools_may_be_refused=tools_may_be_refused, context_window=context_window,
        )  # fmt: skip

    def spelled(self) -> tuple[str, ...]:
        """Every name of this wire, normalised (lower case, underscores)."""
        names = (self.name, self.command_line or self.name, *self.spellings)
        return tuple(dict.fromkeys(normal(name) for name in names))

    @property
    def provider_name(self) -> str:
        return self.provider or self.name

    @property
    def shown(self) -> str:
        """The name a user is shown: the command line's, else the library's."""
        return self.command_line or self.name

    def adapter_on(self, platform: str = "direct") -> str | None:
        """``"module:attribute"`` of the adapter for an endpoint on ``platform``
        (None: the platform does not serve this wire)."""
        return self.adapter if platform == "direct" else self.platforms.get(platform)


class UnknownWire(LookupError):
    """No descriptor has this name (the model layer raises it as its
    ``ConfigurationError``; the config resolver as a ``ConfigError``)."""


def normal(name: str) -> str:
    """A wire's name as typed, normalised: ``OpenAI-Chat`` is ``openai_chat``."""
    return str(name).strip().lower().replace("-", "_")


_ANTHROPIC_KEYS = ("model", "messages", "system", "tools", "tool_choice", "thinking")
_RESPONSES_KEYS = (
    "model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
    "reasoning", "text", "previous_response_id", "truncation",
)  # fmt: skip
_GEMINI_KEYS = ("contents", "systemInstruction", "tools", "toolConfig", "generationConfig")
_OPENAI_ENDPOINT = MappingProxyType(
    {"organization": "OPENAI_ORG_ID", "project": "OPENAI_PROJECT_ID"}
)
_BEDROCK = "actors.models.endpoints.bedrock"

OPENAI_RESPONSES = WireDescriptor(
    "openai_responses",
    "actors.models.openai_responses:OpenAIResponsesAdapter",
    "https://api.openai.com/v1",
    ("OPENAI_API_KEY",),
    "OPENAI_BASE_URL",
    command_line="openai",
    spellings=("openai-responses",),
    profile="openai",
    provider="openai",
    endpoint_variables=_OPENAI_ENDPOINT,
    platforms=MappingProxyType({"azure": "actors.models.endpoints.azure:AzureResponsesAdapter"}),
    token_counting=TokenCounting("/responses/input_tokens", _RESPONSES_KEYS, "input_tokens"),
)
OPENAI_CHAT = WireDescriptor(
    "openai_chat",
    "actors.models.openai_chat:OpenAIChatAdapter",
    "https://api.openai.com/v1",
    ("OPENAI_API_KEY",),
    "OPENAI_BASE_URL",
    command_line="openai-chat",
    endpoint_variables=_OPENAI_ENDPOINT,
    tools_may_be_refused=True,
    platforms=MappingProxyType(
        {
            "azure": "actors.models.endpoints.azure:AzureChatAdapter",
            "openrouter": "actors.models.endpoints.openrouter:openrouter_adapter",
        }
    ),
)
ANTHROPIC = WireDescriptor(
    "anthropic",
    "actors.models.anthropic:AnthropicAdapter",
    "https://api.anthropic.com/v1",
    ("ANTHROPIC_API_KEY",),
    "ANTHROPIC_BASE_URL",
    command_line="anthropic",
    profile="anthropic",
    platforms=MappingProxyType(
        {
            "vertex": "actors.models.endpoints.vertex:VertexAnthropicAdapter",
            "bedrock": f"{_BEDROCK}:BedrockAnthropicAdapter",
        }
    ),
    token_counting=TokenCounting("/messages/count_tokens", _ANTHROPIC_KEYS, "input_tokens"),
    structured_output="output_tool",
    cached_input_apart=True,
)
GEMINI = WireDescriptor(
    "gemini",
    "actors.models.gemini:GeminiAdapter",
    "https://generativelanguage.googleapis.com/v1beta",
    ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "GEMINI_BASE_URL",
    command_line="gemini",
    profile="gemini",
    version_path="/v1beta",
    platforms=MappingProxyType({"vertex": "actors.models.endpoints.vertex:VertexGeminiAdapter"}),
    token_counting=TokenCounting(
        "/models/{model}:countTokens", _GEMINI_KEYS, "totalTokens", wrap="generateContentRequest"
    ),
)
BEDROCK_CONVERSE = WireDescriptor(
    "bedrock_converse",
    f"{_BEDROCK}:BedrockConverseAdapter",
    "https://bedrock-runtime.us-east-1.amazonaws.com",
    ("AWS_BEARER_TOKEN_BEDROCK",),
    "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
    version_path="",  # Bedrock's paths carry no version
    provider="bedrock",
    platforms=MappingProxyType({"bedrock": f"{_BEDROCK}:BedrockConverseAdapter"}),
)
"""AWS Bedrock's Converse API, any Bedrock model (SigV4 or an API key). Not on the
command line: a run there needs a region and AWS's credential chain, which
``troupe run`` does not configure (the library and the platforms do)."""

BUILTIN: tuple[WireDescriptor, ...] = (
    OPENAI_RESPONSES,
    OPENAI_CHAT,
    ANTHROPIC,
    GEMINI,
    BEDROCK_CONVERSE,
)
"""The wires Troupe ships, in the order they are listed to users."""


def installed() -> tuple[WireDescriptor, ...]:
    """The wires other installed packages offer (``troupe.wires`` entry points).
    Read only when a name is not built in: a run on the built-in wires never scans
    the installed packages."""
    from importlib.metadata import entry_points

    found: list[WireDescriptor] = []
    for point in entry_points(group=ENTRY_POINTS):
        value = point.load()
        if not isinstance(value, WireDescriptor):
            raise TypeError(
                f"entry point {point.name!r} ({point.value}) of {ENTRY_POINTS} "
                "is not a WireDescriptor"
            )
        found.append(value)
    return tuple(found)


def _find(name: str, descriptors: tuple[WireDescriptor, ...]) -> WireDescriptor | None:
    wanted = normal(name)
    return next((d for d in descriptors if wanted in d.spelled()), None)


def find(name: str) -> WireDescriptor | None:
    """The wire ``name`` names in any of its spellings, or None."""
    return _find(name, BUILTIN) or _find(name, installed())


def descriptor(name: str) -> WireDescriptor:
    """The wire ``name`` names; an unknown one is :class:`UnknownWire`, which
    lists the known ones."""
    found = find(name)
    if found is None:
        known = ", ".join(known_names())
        raise UnknownWire(f"unknown wire {name!r}; known: {known}")
    return found


def of_provider(provider: str | None) -> WireDescriptor | None:
    """The built-in wire whose adapter answers as ``provider`` (None: no such wire,
    e.g. a platform's adapter such as ``openrouter``). Built-in only: it is asked
    once per model call, which must not scan the installed packages."""
    return next((w for w in BUILTIN if w.provider_name == provider), None)


def known_names() -> list[str]:
    """The wires as users are shown them: ``openai (= openai-responses), ...``."""
    shown = []
    for wire in (*BUILTIN, *installed()):
        others = [n for n in (wire.name, *wire.spellings) if normal(n) != normal(wire.shown)]
        alias = f" (= {others[0].replace('_', '-')})" if others else ""
        shown.append(wire.shown.replace("_", "-") + alias)
    return shown


def command_line_names() -> tuple[str, ...]:
    """The names ``--wire`` offers (built-in wires; an installed one is accepted too)."""
    return tuple(w.command_line for w in BUILTIN if w.command_line)


def metavar() -> str:
    """``--wire``'s placeholder in the help: ``{openai,openai-chat,anthropic,gemini}``."""
    return "{" + ",".join(command_line_names()) + "}"


def profiles() -> tuple[str, ...]:
    """The provider profiles a built-in wire serves by default, in order."""
    return tuple(w.profile for w in BUILTIN if w.profile)


def of_profile(profile: str) -> WireDescriptor:
    """The wire that serves ``profile`` when no other is chosen."""
    found = next((w for w in BUILTIN if w.profile == profile), None)
    found = found or next((w for w in installed() if w.profile == profile), None)
    if found is None:
        raise UnknownWire(f"no wire serves profile {profile!r}")
    return found


class FactTable(Mapping[str, T]):
    """One fact of every wire, read-only and by the wire's name in any spelling
    (an installed wire's too): the tables older modules import
    (``KEY_VARIABLES[wire]``) read the descriptors through this."""

    def __init__(self, fact: Callable[[WireDescriptor], T]) -> None:
        self._fact = fact

    def __getitem__(self, name: str) -> T:
        found = find(name)
        if found is None:
            raise KeyError(name)
        return self._fact(found)

    def __iter__(self) -> Iterator[str]:
        return (wire.name for wire in BUILTIN)

    def __len__(self) -> int:
        return len(BUILTIN)
