"""OAuth access tokens from a Google application-default-credentials (ADC) file.

Two kinds of file are understood: ``service_account`` (a signed JWT, RS256 with the
account's key, exchanged at its ``token_uri`` with the jwt-bearer grant) and
``authorized_user`` (what ``gcloud auth application-default login`` writes: a
refresh token exchanged at Google's token URL). Tokens are cached and renewed five
minutes before they expire; one renewal at a time, however many callers wait. The
token URL can be pointed elsewhere (a test's local server).
"""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path
from typing import Any

import httpx
import trio

from actors.models.errors import AuthenticationError, ConfigurationError
from actors.models.transport import transport_error

GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token"
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
RENEW_BEFORE = 300.0


def adc_path(environ: Any = None) -> Path:
    """``GOOGLE_APPLICATION_CREDENTIALS``, else gcloud's well-known file."""
    env = os.environ if environ is None else environ
    named = env.get("GOOGLE_APPLICATION_CREDENTIALS")
    if named:
        return Path(named)
    config = env.get("CLOUDSDK_CONFIG") or str(Path.home() / ".config" / "gcloud")
    return Path(config) / "application_default_credentials.json"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def signed_jwt(info: dict[str, Any], audience: str, now: float) -> str:
    """The service account's RS256 assertion for the token exchange."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    header = {"alg": "RS256", "typ": "JWT"}
    if info.get("private_key_id"):
        header["kid"] = info["private_key_id"]
    claims = {
        "iss": info["client_email"],
        "scope": CLOUD_PLATFORM,
        "aud": audience,
        "iat": int(now),
        "exp": int(now) + 3600,
    }
    signing_input = ".".join(
        _b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)
    ).encode()
    key = serialization.load_pem_private_key(info["private_key"].encode(), password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ConfigurationError("service account key is not an RSA key")
    signature = key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    return signing_input.decode() + "." + _b64url(signature)


class GoogleCredentials:
    """Bearer tokens for one ADC file; share one per endpoint (the gateway's adapter)."""

    def __init__(self, path: Path, token_url: str | None = None) -> None:
        self.path = path
        self.token_url_override = token_url
        self.info: dict[str, Any] | None = None
        self._token = ""
        self._expires = 0.0
        self._lock = trio.Lock()

    async def _load(self) -> dict[str, Any]:
        if self.info is None:
            try:
                text = await trio.Path(self.path).read_text()
                info = json.loads(text)
            except (OSError, ValueError) as error:
                raise ConfigurationError(f"Google credentials {self.path}: {error}") from None
            kind = info.get("type") if isinstance(info, dict) else None
            needs = {
                "service_account": ("client_email", "private_key"),
                "authorized_user": ("client_id", "client_secret", "refresh_token"),
            }.get(str(kind))
            if needs is None:
                raise ConfigurationError(
                    f"Google credentials {self.path}: type {kind!r} is not supported "
                    "(service_account or authorized_user)"
                )
            missing = [key for key in needs if not info.get(key)]
            if missing:
                raise ConfigurationError(f"Google credentials {self.path}: missing {missing}")
            self.info = info
            return info
        return self.info

    async def token(self, client: httpx.AsyncClient) -> str:
        if self._token and trio.current_time() < self._expires - RENEW_BEFORE:
            return self._token
        async with self._lock:
            if not self._token or trio.current_time() >= self._expires - RENEW_BEFORE:
                await self._renew(client)
        return self._token

    async def _renew(self, client: httpx.AsyncClient) -> None:
        info = await self._load()
        url = self.token_url_override or info.get("token_uri") or GOOGLE_TOKEN_URL
        if info["type"] == "service_account":
            form = {"grant_type": JWT_BEARER, "assertion": signed_jwt(info, url, time.time())}
        else:
            form = {
                "grant_type": "refresh_token",
                "client_id": info["client_id"],
                "client_secret": info["client_secret"],
                "refresh_token": info["refresh_token"],
            }
        try:
            response = await client.post(url, data=form)
        except httpx.HTTPError as error:
            raise transport_error("google-oauth", error) from error
        try:
            data = response.json()
        except ValueError:
            data = {}
        token = data.get("access_token") if isinstance(data, dict) else None
        if response.status_code >= 400 or not token:
            detail = data.get("error_description") or data.get("error") or response.text[:200]
            raise AuthenticationError(
                f"Google token exchange failed ({response.status_code}): {detail}",
                provider="google-oauth",
                status_code=response.status_code,
            )
        self._token = token
        self._expires = trio.current_time() + float(data.get("expires_in") or 3600)
