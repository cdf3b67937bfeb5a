"""Find Alibaba Cloud credentials the way the SDK's default chain does, without calling anything.

Mirrors ``alibabacloud_credentials.provider.default.DefaultCredentialsProvider`` (environment variables, OIDC role,
the aliyun CLI profile, the credentials file, an ECS RAM role, a credentials URI), but only looks: the chain itself
would probe the instance metadata service, and preflight must say "no credentials" before any network call.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

ACCESS_KEY_ID = "ALIBABA_CLOUD_ACCESS_KEY_ID"
ACCESS_KEY_SECRET = "ALIBABA_CLOUD_ACCESS_KEY_SECRET"
OIDC_VARIABLES = ("ALIBABA_CLOUD_ROLE_ARN", "ALIBABA_CLOUD_OIDC_PROVIDER_ARN", "ALIBABA_CLOUD_OIDC_TOKEN_FILE")
CREDENTIALS_FILE = "ALIBABA_CLOUD_CREDENTIALS_FILE"
ECS_ROLE = "ALIBABA_CLOUD_ECS_METADATA"
CREDENTIALS_URI = "ALIBABA_CLOUD_CREDENTIALS_URI"
CLI_PROFILE_DISABLED = "ALIBABA_CLOUD_CLI_PROFILE_DISABLED"

HOW_TO = (
    f"set {ACCESS_KEY_ID} and {ACCESS_KEY_SECRET} (plus ALIBABA_CLOUD_SECURITY_TOKEN for STS), "
    f"or {', '.join(OIDC_VARIABLES)} for an OIDC role, or run `aliyun configure` (~/.aliyun/config.json), "
    f"or write ~/.alibabacloud/credentials.ini (or point {CREDENTIALS_FILE} at one), "
    f"or on ECS set {ECS_ROLE} to the instance's RAM role name"
)


def find_credentials(env: Mapping[str, str] | None = None, home: Path | None = None) -> str | None:
    """Where the SDK would take credentials from (a short description), or None when nothing is configured."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home()) if home is None else home
    if env.get(ACCESS_KEY_ID) and env.get(ACCESS_KEY_SECRET):
        return f"environment ({ACCESS_KEY_ID})"
    if all(env.get(v) for v in OIDC_VARIABLES):
        return "OIDC role (ALIBABA_CLOUD_ROLE_ARN)"
    cli = home / ".aliyun" / "config.json"
    if env.get(CLI_PROFILE_DISABLED, "false").lower() != "true" and cli.is_file():
        return f"aliyun CLI profile ({cli})"
    file = Path(env[CREDENTIALS_FILE]) if env.get(CREDENTIALS_FILE) else home / ".alibabacloud" / "credentials.ini"
    if file.is_file():
        return f"credentials file ({file})"
    if env.get(ECS_ROLE):
        return f"ECS RAM role ({env[ECS_ROLE]})"
    if env.get(CREDENTIALS_URI):
        return f"credentials URI ({CREDENTIALS_URI})"
    return None
