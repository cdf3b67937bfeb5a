"""Find the Alibaba Cloud credentials preflight will use — the ones `pulumi up` uses first — without calling anything.

Two vocabularies meet here. `pulumi up` (pulumi-alicloud, i.e. terraform-provider-alicloud's configuration) reads
``ALICLOUD_ACCESS_KEY`` / ``ALICLOUD_SECRET_KEY`` / ``ALICLOUD_SECURITY_TOKEN``, falling back to the SDK's
``ALIBABA_CLOUD_*`` names, and a named profile of ``~/.aliyun/config.json`` from ``ALICLOUD_PROFILE`` when no key is
given (``access_key``, ``secret_key``, ``security_token`` and ``profile`` in
https://github.com/aliyun/terraform-provider-alicloud/blob/master/alicloud/provider.go). The Python SDK's default chain
(``alibabacloud_credentials.provider.default.DefaultCredentialsProvider``) knows only the ``ALIBABA_CLOUD_*`` names,
so preflight resolves the provider's sources itself, in the provider's order, and hands the SDK an explicit static
key, STS token or CLI profile (``aliyun.credential_client``). Anything else is left to the SDK's default chain (OIDC
role, the CLI's current profile, ``~/.alibabacloud/credentials.ini``, an ECS RAM role, a credentials URI), which is
only looked at here: the chain itself would probe the instance metadata service, and preflight must say "no
credentials" before any network call.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

ACCESS_KEY_ID = "ALIBABA_CLOUD_ACCESS_KEY_ID"
ACCESS_KEY_SECRET = "ALIBABA_CLOUD_ACCESS_KEY_SECRET"
SECURITY_TOKEN = "ALIBABA_CLOUD_SECURITY_TOKEN"
OIDC_VARIABLES = ("ALIBABA_CLOUD_ROLE_ARN", "ALIBABA_CLOUD_OIDC_PROVIDER_ARN", "ALIBABA_CLOUD_OIDC_TOKEN_FILE")
CREDENTIALS_FILE = "ALIBABA_CLOUD_CREDENTIALS_FILE"
ECS_ROLE = "ALIBABA_CLOUD_ECS_METADATA"
CREDENTIALS_URI = "ALIBABA_CLOUD_CREDENTIALS_URI"
CLI_PROFILE_DISABLED = "ALIBABA_CLOUD_CLI_PROFILE_DISABLED"
# pulumi-alicloud's names, each tried before the SDK's name for
# the same value (the provider's MultiEnvDefaultFunc order).
PULUMI_ACCESS_KEY = "ALICLOUD_ACCESS_KEY"
PULUMI_SECRET_KEY = "ALICLOUD_SECRET_KEY"
PULUMI_SECURITY_TOKEN = "ALICLOUD_SECURITY_TOKEN"
PULUMI_PROFILE = "ALICLOUD_PROFILE"
PULUMI_PROFILE_FILE = "ALICLOUD_SHARED_CREDENTIALS_FILE"

HOW_TO = (
    f"set {PULUMI_ACCESS_KEY} and {PULUMI_SECRET_KEY} (plus {PULUMI_SECURITY_TOKEN} for STS) as for `pulumi up`, "
    f"or {ACCESS_KEY_ID} and {ACCESS_KEY_SECRET} (plus {SECURITY_TOKEN}), "
    f"or {PULUMI_PROFILE} to a profile of ~/.aliyun/config.json (`aliyun configure --profile NAME`), "
    f"or {', '.join(OIDC_VARIABLES)} for an OIDC role, "
    f"or write ~/.alibabacloud/credentials.ini (or point {CREDENTIALS_FILE} at one), "
    f"or on ECS set {ECS_ROLE} to the instance's RAM role name"
)


class CredentialsProblem(Exception):
    """Credentials are configured but cannot work (e.g. ALICLOUD_PROFILE names a profile the file lacks)."""


@dataclass(frozen=True)
class CredentialSource:
    """Where credentials come from: ``kind`` access_key | sts | cli_profile | default_chain, and what the SDK needs.

    The secret values are excluded from ``repr`` so a source never prints them.
    """

    description: str
    kind: str
    access_key_id: str = field(default="", repr=False)
    access_key_secret: str = field(default="", repr=False)
    security_token: str = field(default="", repr=False)
    profile: str = ""
    profile_file: str = ""


def resolve_credentials(env: Mapping[str, str] | None = None, home: Path | None = None) -> CredentialSource | None:
    """The source preflight will use, in pulumi-alicloud's order, or None when nothing is configured.

    Raises CredentialsProblem when ``ALICLOUD_PROFILE`` names a profile that ``~/.aliyun/config.json`` lacks.
    """
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home()) if home is None else home
    key_name = PULUMI_ACCESS_KEY if env.get(PULUMI_ACCESS_KEY) else ACCESS_KEY_ID
    key = env.get(PULUMI_ACCESS_KEY) or env.get(ACCESS_KEY_ID) or ""
    secret = env.get(PULUMI_SECRET_KEY) or env.get(ACCESS_KEY_SECRET) or ""
    token = env.get(PULUMI_SECURITY_TOKEN) or env.get(SECURITY_TOKEN) or ""
    if key and secret:
        kind = "sts" if token else "access_key"
        return CredentialSource(f"environment ({key_name})", kind, key, secret, token)
    if env.get(PULUMI_PROFILE):
        return _named_profile(
            env[PULUMI_PROFILE], Path(env.get(PULUMI_PROFILE_FILE) or home / ".aliyun" / "config.json")
        )
    found = _default_chain(env, home)
    return None if found is None else CredentialSource(found, "default_chain")


def find_credentials(env: Mapping[str, str] | None = None, home: Path | None = None) -> str | None:
    """Where preflight would take credentials from (a short description), or None when nothing is configured."""
    source = resolve_credentials(env, home)
    return None if source is None else source.description


def _named_profile(name: str, path: Path) -> CredentialSource:
    """ALICLOUD_PROFILE: the named profile of the aliyun CLI's
    config.json, which the SDK's CLI-profile provider reads."""
    where = f"{PULUMI_PROFILE}={name}"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CredentialsProblem(
            f"{where}, but {path} does not exist; create the profile with `aliyun configure --profile {name}`"
        ) from None
    except (OSError, ValueError) as exc:
        raise CredentialsProblem(f"{where}, but {path} cannot be read as JSON ({exc})") from None
    profiles = config.get("profiles") if isinstance(config, dict) else None
    names = [str(p.get("name")) for p in profiles if isinstance(p, dict)] if isinstance(profiles, list) else []
    if name not in names:
        listed = ", ".join(names) or "none"
        raise CredentialsProblem(f"{where}, but {path} has no profile of that name (its profiles: {listed})")
    return CredentialSource(
        f"aliyun CLI profile '{name}' ({PULUMI_PROFILE}, {path})", "cli_profile", profile=name, profile_file=str(path)
    )


def _default_chain(env: Mapping[str, str], home: Path) -> str | None:
    """Mirrors the SDK's DefaultCredentialsProvider order by looking at files and variables only."""
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
