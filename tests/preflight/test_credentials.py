"""find_credentials looks where the SDK's default chain looks, without calling anything."""

from __future__ import annotations

from pathlib import Path

from blueprints.preflight.credentials import HOW_TO, find_credentials


def test_nothing_configured(tmp_path: Path) -> None:
    assert find_credentials({}, tmp_path) is None
    assert find_credentials({"ALIBABA_CLOUD_ACCESS_KEY_ID": "id"}, tmp_path) is None  # a key without its secret is not enough


def test_environment_keys(tmp_path: Path) -> None:
    env = {"ALIBABA_CLOUD_ACCESS_KEY_ID": "id", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "secret"}
    assert find_credentials(env, tmp_path) == "environment (ALIBABA_CLOUD_ACCESS_KEY_ID)"


def test_oidc_needs_all_three(tmp_path: Path) -> None:
    env = {"ALIBABA_CLOUD_ROLE_ARN": "acs:ram::1:role/r", "ALIBABA_CLOUD_OIDC_PROVIDER_ARN": "acs:ram::1:oidc-provider/p"}
    assert find_credentials(env, tmp_path) is None
    assert find_credentials({**env, "ALIBABA_CLOUD_OIDC_TOKEN_FILE": "/var/run/token"}, tmp_path) == "OIDC role (ALIBABA_CLOUD_ROLE_ARN)"


def test_cli_profile_and_credentials_file(tmp_path: Path) -> None:
    (tmp_path / ".aliyun").mkdir()
    (tmp_path / ".aliyun" / "config.json").write_text("{}")
    assert find_credentials({}, tmp_path) == f"aliyun CLI profile ({tmp_path / '.aliyun' / 'config.json'})"
    assert find_credentials({"ALIBABA_CLOUD_CLI_PROFILE_DISABLED": "true"}, tmp_path) is None
    ini = tmp_path / "creds.ini"
    ini.write_text("[default]\n")
    assert find_credentials({"ALIBABA_CLOUD_CLI_PROFILE_DISABLED": "true", "ALIBABA_CLOUD_CREDENTIALS_FILE": str(ini)}, tmp_path) == f"credentials file ({ini})"


def test_ecs_role_only_when_named(tmp_path: Path) -> None:
    assert find_credentials({"ALIBABA_CLOUD_ECS_METADATA": "trainer"}, tmp_path) == "ECS RAM role (trainer)"


def test_how_to_names_the_variables() -> None:
    for name in ("ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "aliyun configure", "ALIBABA_CLOUD_CREDENTIALS_FILE"):
        assert name in HOW_TO
