"""The Pulumi program: stack config in, blueprint out. ``infra/__main__.py`` runs it, and so does the offline plan."""

from __future__ import annotations

import pulumi

from blueprints.errors import UserInputError
from blueprints.layout import LayoutError
from blueprints.stackconfig import NAMESPACE, resolve_profile


def run() -> None:
    """Read ``aitrain:preset`` / ``aitrain:profile`` from the stack config, build the blueprint, export outputs."""
    from blueprints.architectures import blueprint_for

    config = pulumi.Config(NAMESPACE)
    try:
        _, profile = resolve_profile(preset=config.get("preset"), stack_profile=config.get_object("profile"))
        outputs = blueprint_for(profile).build()
    except (UserInputError, LayoutError) as exc:
        # RunError prints the message without a Python traceback.
        message = exc.render() if isinstance(exc, UserInputError) else f"error: {exc}"
        raise pulumi.RunError(message) from None
    for key, value in outputs.items():
        pulumi.export(key, value)
