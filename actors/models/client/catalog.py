"""The model catalog (unified-llm-spec §2.9): context windows, capabilities and prices.

Advisory, never restrictive: an unknown model string still goes to its provider, it
just has no known window or price. The data is a JSON file shipped with the package
(``catalog.json``), so it can be updated without touching code; a deployment may
point ``TROUPE_MODEL_CATALOG`` at its own file. Within a provider the file lists the
preferred (newest, best) model first, which is what :meth:`Catalog.latest` returns.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import msgspec

from actors.models.errors import ConfigurationError
from actors.provider_wires import of_provider
from protocol.llm import Usage

CATALOG_FILE = Path(__file__).with_name("catalog.json")
CATALOG_ENV = "TROUPE_MODEL_CATALOG"

Capability = str
"""One of "tools", "vision", "reasoning"."""


class ModelInfo(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    id: str
    provider: str
    display_name: str
    context_window: int
    max_output: int | None = None
    supports_tools: bool = True
    supports_vision: bool = False
    supports_reasoning: bool = False
    input_cost_per_million: float | None = None
    output_cost_per_million: float | None = None
    cache_read_cost_per_million: float | None = None
    cache_write_cost_per_million: float | None = None
    aliases: list[str] = []

    def supports(self, capability: Capability) -> bool:
        flags = {
            "tools": self.supports_tools,
            "vision": self.supports_vision,
            "reasoning": self.supports_reasoning,
        }
        if capability not in flags:
            raise ConfigurationError(f"unknown capability {capability!r}: one of {list(flags)}")
        return flags[capability]

    def cost(self, usage: Usage) -> float | None:
        """USD for ``usage`` at list price, or None when the price is not known.

        Anthropic counts cached tokens apart from ``input_tokens``; OpenAI and Gemini
        count them inside it, so they are taken out before the full input price."""
        if self.input_cost_per_million is None or self.output_cost_per_million is None:
            return None
        read = usage.cache_read_tokens or 0
        write = usage.cache_write_tokens or 0
        wire = of_provider(self.provider)
        fresh = usage.input_tokens - (0 if wire and wire.cached_input_apart else read)
        read_price = self.cache_read_cost_per_million
        write_price = self.cache_write_cost_per_million
        total = (
            max(fresh, 0) * self.input_cost_per_million
            + read * (self.input_cost_per_million if read_price is None else read_price)
            + write * (self.input_cost_per_million if write_price is None else write_price)
            + usage.output_tokens * self.output_cost_per_million
        )
        return total / 1_000_000


class _CatalogFile(msgspec.Struct, frozen=True):
    models: list[ModelInfo]
    about: str = ""


class Catalog:
    """Lookups over a list of :class:`ModelInfo` (ids and aliases)."""

    def __init__(self, models: list[ModelInfo]) -> None:
        self.models = list(models)
        self._by_name: dict[str, ModelInfo] = {}
        for info in self.models:
            for name in (info.id, *info.aliases):
                self._by_name.setdefault(name, info)

    @classmethod
    def load(cls, path: str | Path) -> Catalog:
        """A catalog from a JSON file; a bad file is a :class:`ConfigurationError`."""
        try:
            data = msgspec.json.decode(Path(path).read_bytes(), type=_CatalogFile)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError) as error:
            raise ConfigurationError(f"model catalog {path}: {error}") from None
        return cls(data.models)

    def get(self, model: str) -> ModelInfo | None:
        """The entry for a model id or alias. A provider prefix ("openai/gpt-5") and a
        dated suffix the catalog does not list ("claude-haiku-4-5-20991231") are tried."""
        found = self._by_name.get(model)
        if found is None and "/" in model:
            found = self._by_name.get(model.rsplit("/", 1)[1])
        if found is None:
            base, _, tail = model.rpartition("-")
            if base and tail.isdigit() and len(tail) == 8:
                found = self._by_name.get(base)
        return found

    def list(self, provider: str | None = None) -> list[ModelInfo]:
        return [m for m in self.models if provider is None or m.provider == provider]

    def latest(self, provider: str, capability: Capability | None = None) -> ModelInfo | None:
        for info in self.list(provider):
            if capability is None or info.supports(capability):
                return info
        return None


@cache
def _load(path: str) -> Catalog:
    return Catalog.load(path)


def default_catalog() -> Catalog:
    """The shipped catalog, or the file named by ``TROUPE_MODEL_CATALOG`` (read once)."""
    return _load(os.environ.get(CATALOG_ENV) or str(CATALOG_FILE))


def get_model_info(model_id: str) -> ModelInfo | None:
    return default_catalog().get(model_id)


def list_models(provider: str | None = None) -> list[ModelInfo]:
    return default_catalog().list(provider)


def get_latest_model(provider: str, capability: Capability | None = None) -> ModelInfo | None:
    return default_catalog().latest(provider, capability)


def usage_cost(model: str, usage: Usage) -> float | None:
    """USD for ``usage`` on ``model`` at list price; None for an unknown model or price."""
    info = get_model_info(model)
    return None if info is None else info.cost(usage)
