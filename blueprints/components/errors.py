"""The error a component (or a blueprint's builder) raises for arguments it cannot build: it names the resource.

Node's SDK has ``pulumi.ResourceError(message, resource)`` (pulumi-eks raises it with the cluster as the resource);
Python's (3.272) has none, only ``pulumi.RunError``, which the engine's Python host prints as one ``error:`` line
without a traceback. So this is a RunError that carries the resource and starts its text with the resource's type
and name — the parts of its URN that are the resource's own, as the Pulumi CLI names a resource
(``aitrain:network:TrainingNetwork (med-network): …``). ``message`` is the bare message: the offline plan shows it
as the profile problem it is, the same text as before any resource existed.

Mistakes found before any resource exists stay ``UserInputError`` (the profile) and ``LayoutError`` (the layout).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import pulumi


class ResourceError(pulumi.RunError):
    """``message`` about ``resource``: a clean `pulumi up` failure that names the resource (type and logical name)."""

    def __init__(self, message: str, resource: pulumi.Resource):
        self.message = message
        self.resource = resource
        super().__init__(f"{resource_label(resource)}: {message}")


def resource_label(resource: pulumi.Resource) -> str:
    """How the Pulumi CLI names a resource in its diagnostics: ``<type> (<logical name>)``."""
    return f"{resource.pulumi_resource_type} ({resource.pulumi_resource_name})"


@contextmanager
def names_resource(resource: pulumi.Resource) -> Iterator[None]:
    """Turn a ValueError from a pure check (a layout, a bucket name) into a ResourceError naming ``resource``."""
    try:
        yield
    except ValueError as exc:
        raise ResourceError(str(exc), resource) from None
