"""The Pulumi program: stack config in, blueprint out. ``infra/__main__.py`` runs it, and so does the offline plan."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.runtime.config import CONFIG, get_config_env, get_config_secret_keys_env, is_config_secret

from blueprints.core.errors import UserInputError
from blueprints.core.layout import LayoutError

if TYPE_CHECKING:
    from blueprints.catalog import Catalog


def current_config() -> dict[str, Any]:
    """Every config key the engine gave this program (``PULUMI_CONFIG`` and explicitly set ones)."""
    return {**(get_config_env() or {}), **CONFIG.get()}


def secret_config_keys(config: dict[str, Any]) -> set[str]:
    """The keys the engine marks secret (`pulumi up` decrypts them before the program sees them)."""
    return set(get_config_secret_keys_env()) | {key for key in config if is_config_secret(key)}


def run(catalog: "Catalog | None" = None, today: dt.date | None = None) -> None:
    """Read every ``aitrain:*`` key of the stack config, build the blueprint, export outputs.

    ``catalog`` defaults to ``load_catalog()`` (``AITRAIN_CATALOG_DIR`` or the packaged data) and ``today`` to
    the clock (``AITRAIN_TODAY`` or the system date); the offline plan passes both in.
    """
    from blueprints.architectures import profile_models, spec_for
    from blueprints.architectures.base.build import builder_for
    from blueprints.catalog import load_catalog
    from blueprints.core import clock
    from blueprints.profile.stackconfig import read_settings, resolve

    try:
        catalog = catalog or load_catalog()
        today = today or clock.today()
        config = current_config()
        settings = read_settings(config, source="(pulumi config)", secret_keys=secret_config_keys(config))
        _, profile = resolve(settings, profile_models(), catalog=catalog, today=today)
        outputs = builder_for(spec_for(profile, catalog, today)).build()
    except (UserInputError, LayoutError) as exc:
        # RunError prints the message without a Python traceback. A component's ResourceError is a RunError already,
        # naming its resource, so it passes through as it is.
        message = exc.render() if isinstance(exc, UserInputError) else f"error: {exc}"
        raise pulumi.RunError(message) from None
    for key, value in outputs.items():
        pulumi.export(key, value)
