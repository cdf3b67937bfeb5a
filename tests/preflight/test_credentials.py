"""find_credentials looks where the SDK's default chain looks, without calling anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blueprints.preflight.credentials import HOW_TO, CredentialsProblem, find_credentials, resolve_credentials


def test_nothing_configured(tmp_path: Path) -> None:
    assert find_credentials({}, tmp_path) is None
    assert (
        find_credentials({"ALIBABA_CLOUD_ACCESS_KEY_ID": "id"}, tmp_path) is None
    )  # a key without its secret is not enough


def test_environment_keys(tmp_path: Path) -> None:
    env = {"ALIBABA_CLOUD_ACCESS_KEY_ID": "id", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "secret"}
    assert find_credentials(env, tmp_path) == "environment (ALIBABA_CLOUD_ACCESS_KEY_ID)"


def test_oidc_needs_all_three(tmp_path: Path) -> None:
    env = {
        "ALIBABA_CLOUD_ROLE_ARN": "acs:ram::1:role/r",
        "ALIBABA_CLOUD_OIDC_PROVIDER_ARN": "acs:ram::1:oidc-provider/p",
    }
    assert find_credentials(env, tmp_path) is None
    assert (
        find_credentials({**env, "ALIBABA_CLOUD_OIDC_TOKEN_FILE": "/var/run/token"}, tmp_path)
        == "OIDC role (ALIBABA_CLOUD_ROLE_ARN)"
    )


def test_cli_profile_and_credentials_file(tmp_path: Path) -> None:
    (tmp_path / ".aliyun").mkdir()
    (tmp_path / ".aliyun" / "config.json").write_text("{}")
    assert find_credentials({}, tmp_path) == f"aliyun CLI profile ({tmp_path / '.aliyun' / 'config.json'})"
    assert find_credentials({"ALIBABA_CLOUD_CLI_PROFILE_DISABLED": "true"}, tmp_path) is None
    ini = tmp_path / "creds.ini"
    ini.write_text("[default]\n")
    assert (
        find_credentials(
            {"ALIBABA_CLOUD_CLI_PROFILE_DISABLED": "true", "ALIBABA_CLOUD_CREDENTIALS_FILE": str(ini)}, tmp_path
        )
        == f"credentials file ({ini})"
    )


def test_ecs_role_only_when_named(tmp_path: Path) -> None:
    assert find_credentials({"ALIBABA_CLOUD_ECS_METADATA": "trainer"}, tmp_path) == "ECS RAM role (trainer)"


def test_how_to_names_the_variables() -> None:
    for name in (
        "ALICLOUD_ACCESS_KEY",
        "ALICLOUD_SECRET_KEY",
        "ALICLOUD_PROFILE",
        "ALIBABA_CLOUD_ACCESS_KEY_ID",
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
        "aliyun configure",
        "ALIBABA_CLOUD_CREDENTIALS_FILE",
    ):
        assert name in HOW_TO


def test_pulumi_keys_are_found_first_as_the_provider_reads_them(tmp_path: Path) -> None:
    """pulumi-alicloud reads ALICLOUD_ACCESS_KEY before
    ALIBABA_CLOUD_ACCESS_KEY_ID (and so on): preflight uses the same key."""
    env = {
        "ALICLOUD_ACCESS_KEY": "p-id",
        "ALICLOUD_SECRET_KEY": "p-secret",
        "ALIBABA_CLOUD_ACCESS_KEY_ID": "s-id",
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "s-secret",
    }
    source = resolve_credentials(env, tmp_path)
    assert source is not None and (source.kind, source.access_key_id, source.access_key_secret) == (
        "access_key",
        "p-id",
        "p-secret",
    )
    assert find_credentials(env, tmp_path) == "environment (ALICLOUD_ACCESS_KEY)"
    sts = resolve_credentials(
        {"ALICLOUD_ACCESS_KEY": "p-id", "ALICLOUD_SECRET_KEY": "p-secret", "ALICLOUD_SECURITY_TOKEN": "tok"}, tmp_path
    )
    assert sts is not None and (sts.kind, sts.security_token) == ("sts", "tok")
    assert "p-secret" not in repr(source) and "tok" not in repr(sts)  # a source never prints its secrets
    assert find_credentials({"ALICLOUD_ACCESS_KEY": "p-id"}, tmp_path) is None


def test_pulumi_profile_names_a_profile_of_the_cli_config(tmp_path: Path) -> None:
    config = tmp_path / ".aliyun" / "config.json"
    with pytest.raises(CredentialsProblem, match=r"ALICLOUD_PROFILE=prod, but .*config.json does not exist"):
        resolve_credentials({"ALICLOUD_PROFILE": "prod"}, tmp_path)
    config.parent.mkdir()
    config.write_text(
        json.dumps({"current": "dev", "profiles": [{"name": "dev", "mode": "AK"}, {"name": "prod", "mode": "AK"}]})
    )
    source = resolve_credentials({"ALICLOUD_PROFILE": "prod"}, tmp_path)
    assert source is not None and (source.kind, source.profile, source.profile_file) == (
        "cli_profile",
        "prod",
        str(config),
    )
    assert (
        find_credentials({"ALICLOUD_PROFILE": "prod"}, tmp_path)
        == f"aliyun CLI profile 'prod' (ALICLOUD_PROFILE, {config})"
    )
    with pytest.raises(CredentialsProblem, match=r"has no profile of that name \(its profiles: dev, prod\)"):
        resolve_credentials({"ALICLOUD_PROFILE": "staging"}, tmp_path)
    keys = {"ALICLOUD_PROFILE": "staging", "ALICLOUD_ACCESS_KEY": "id", "ALICLOUD_SECRET_KEY": "secret"}
    assert (
        find_credentials(keys, tmp_path) == "environment (ALICLOUD_ACCESS_KEY)"
    )  # a key wins over a profile, as in the provider
    other = tmp_path / "shared.json"
    other.write_text(json.dumps({"profiles": [{"name": "ci", "mode": "StsToken"}]}))
    found = resolve_credentials({"ALICLOUD_PROFILE": "ci", "ALICLOUD_SHARED_CREDENTIALS_FILE": str(other)}, tmp_path)
    assert found is not None and found.profile_file == str(other)
    config.write_text("{not json")
    with pytest.raises(CredentialsProblem, match="cannot be read as JSON"):
        resolve_credentials({"ALICLOUD_PROFILE": "prod"}, tmp_path)
