"""Hosted platforms that serve a provider's wire behind their own URLs and auth:
Azure OpenAI, Google Vertex AI (Gemini and Claude), AWS Bedrock (Claude) and
OpenRouter. Bedrock serves two wires: Anthropic's Messages body through InvokeModel
(wire ``anthropic``) and AWS's own Converse API for any model (wire
``bedrock_converse``, also reached with ``platform="direct"``: a Bedrock API key as
``api_key``, or the AWS credential chain). Each is an adapter subclass that rewrites
the call (URL, body envelope, headers) and, where auth needs I/O or signing, does it
in ``prepare`` per attempt.

``platform_endpoints_from_env`` follows the conventions users already have: the
``openai`` SDK's for Azure, Claude Code's ``CLAUDE_CODE_USE_BEDROCK`` /
``CLAUDE_CODE_USE_VERTEX``, ``google-genai``'s ``GOOGLE_GENAI_USE_VERTEXAI``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from actors.models.adapter import Adapter
from actors.models.config import Endpoint
from actors.models.errors import ConfigurationError

PLATFORMS = ("azure", "vertex", "bedrock", "openrouter")

TRUE = ("1", "true", "yes")


def platform_adapter(endpoint: Endpoint) -> Adapter:
    """The adapter that speaks the endpoint's wire on its platform (the wire's
    descriptor names it: :attr:`WireDescriptor.platforms`)."""
    if endpoint.platform not in PLATFORMS:
        raise ConfigurationError(f"unknown platform {endpoint.platform!r}")
    from actors.models.registry import adapter_factory

    return adapter_factory(endpoint.wire, endpoint.platform)(endpoint)


def azure_endpoint(
    resource_url: str,
    api_key: str = "",
    *,
    wire: str = "openai_chat",
    api_version: str | None = None,
    deployment: str | None = None,
    azure_ad_token: str | None = None,
) -> Endpoint:
    """``resource_url``: ``https://<resource>.openai.azure.com`` (``/openai`` is added)."""
    base = resource_url.rstrip("/")
    if not base.endswith("/openai"):
        base += "/openai"
    options = {"api_version": api_version, "deployment": deployment}
    options["azure_ad_token"] = azure_ad_token
    clean = {k: v for k, v in options.items() if v}
    return Endpoint(wire, base, api_key, platform="azure", platform_options=clean)  # type: ignore[arg-type]


def vertex_endpoint(
    project: str,
    location: str,
    *,
    wire: str = "gemini",
    credentials_file: str | None = None,
    token_url: str | None = None,
    base_url: str | None = None,
) -> Endpoint:
    from actors.models.endpoints.vertex import vertex_base_url
    from actors.models.registry import adapter_factory

    publisher = adapter_factory(wire, "vertex").publisher
    url = base_url or vertex_base_url(project, location, publisher)
    options = {"project": project, "location": location}
    if credentials_file:
        options["credentials_file"] = credentials_file
    if token_url:
        options["token_url"] = token_url
    return Endpoint(wire, url.rstrip("/"), platform="vertex", platform_options=options)  # type: ignore[arg-type]


def bedrock_endpoint(
    region: str,
    *,
    base_url: str | None = None,
    access_key_id: str | None = None,
    secret_access_key: str | None = None,
    session_token: str | None = None,
    bearer_token: str | None = None,
    wire: str = "anthropic",
) -> Endpoint:
    """``wire``: ``anthropic`` (Claude through InvokeModel) or ``bedrock_converse``
    (any Bedrock model through Converse)."""
    from actors.models.endpoints.bedrock import bedrock_url

    options = {
        "region": region,
        "access_key_id": access_key_id,
        "secret_access_key": secret_access_key,
        "session_token": session_token,
        "bearer_token": bearer_token,
    }
    clean = {k: v for k, v in options.items() if v}
    url = (base_url or bedrock_url(region)).rstrip("/")
    return Endpoint(wire, url, platform="bedrock", platform_options=clean)  # type: ignore[arg-type]


def openrouter_endpoint(api_key: str, base_url: str | None = None) -> Endpoint:
    from actors.models.endpoints.openrouter import OPENROUTER_URL

    url = (base_url or OPENROUTER_URL).rstrip("/")
    return Endpoint("openai_chat", url, api_key, platform="openrouter")


def platform_endpoints_from_env(environ: Mapping[str, str] | None = None) -> dict[str, Endpoint]:
    """The platforms switched on in the environment, by provider name."""
    env = os.environ if environ is None else environ
    found: dict[str, Endpoint] = {}
    if env.get("AZURE_OPENAI_API_KEY") and env.get("AZURE_OPENAI_ENDPOINT"):
        found["azure"] = azure_endpoint(
            env["AZURE_OPENAI_ENDPOINT"],
            env["AZURE_OPENAI_API_KEY"],
            api_version=env.get("AZURE_OPENAI_API_VERSION") or env.get("OPENAI_API_VERSION"),
            deployment=env.get("AZURE_OPENAI_DEPLOYMENT"),
        )
    if env.get("OPENROUTER_API_KEY"):
        found["openrouter"] = openrouter_endpoint(
            env["OPENROUTER_API_KEY"], env.get("OPENROUTER_BASE_URL")
        )
    if env.get("CLAUDE_CODE_USE_BEDROCK", "").lower() in TRUE:
        found["bedrock"] = _bedrock_from_env(env, "anthropic", "ANTHROPIC_BEDROCK_BASE_URL")
    if env.get("TROUPE_USE_BEDROCK", "").lower() in TRUE:
        found["bedrock-converse"] = _bedrock_from_env(
            env, "bedrock_converse", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"
        )
    if env.get("CLAUDE_CODE_USE_VERTEX", "").lower() in TRUE:
        project = env.get("ANTHROPIC_VERTEX_PROJECT_ID") or env.get("GOOGLE_CLOUD_PROJECT", "")
        found["vertex-anthropic"] = vertex_endpoint(
            project,
            env.get("CLOUD_ML_REGION", "global"),
            wire="anthropic",
            base_url=env.get("ANTHROPIC_VERTEX_BASE_URL"),
        )
    if env.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in TRUE:
        found["vertex"] = vertex_endpoint(
            env.get("GOOGLE_CLOUD_PROJECT", ""), env.get("GOOGLE_CLOUD_LOCATION", "global")
        )
    return found


def _bedrock_from_env(env: Mapping[str, str], wire: str, url_variable: str) -> Endpoint:
    return bedrock_endpoint(
        env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
        base_url=env.get(url_variable),
        access_key_id=env.get("AWS_ACCESS_KEY_ID"),
        secret_access_key=env.get("AWS_SECRET_ACCESS_KEY"),
        session_token=env.get("AWS_SESSION_TOKEN"),
        bearer_token=env.get("AWS_BEARER_TOKEN_BEDROCK"),
        wire=wire,
    )
