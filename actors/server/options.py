"""The choices a client offers when it starts a session (``get_server_options``).

The web page's new-session form is built from this reply rather than from lists
of its own, so a profile, a policy preset or a catalog model added to the server
shows up in every client at once.
"""

from __future__ import annotations

from actors.models.client.catalog import list_models
from actors.policy.presets import POLICY_PRESETS
from actors.server.models import ModelSettings
from actors.session.profiles import PROFILES
from protocol.wire import ModelChoice, RequestId, ServerOptions

REASONING_EFFORTS = ["low", "medium", "high"]
"""The portable efforts every profile maps (see the model adapters)."""


def server_options(request_id: RequestId, settings: ModelSettings) -> ServerOptions:
    """The profiles (each with its default model), presets, models and efforts."""
    models = [
        ModelChoice(
            info.id,
            info.provider,
            info.display_name,
            info.input_cost_per_million,
            info.output_cost_per_million,
        )
        for info in list_models()
    ]
    return ServerOptions(
        request_id,
        profiles=sorted(PROFILES),
        default_profile=settings.profile,
        profile_models={
            name: settings.model_for(name) or factory().model for name, factory in PROFILES.items()
        },
        policies=list(POLICY_PRESETS),
        default_policy=settings.defaults.policy,
        models=models,
        reasoning_efforts=REASONING_EFFORTS,
    )
