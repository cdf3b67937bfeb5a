"""Provider kinds: an explicit provider replaces every resource it manages when it is replaced (a region move)."""

from __future__ import annotations

from blueprints.kinds.model import Free, Kind, ReplacingInputs, Role, Terraform

SERVICES = ("providers",)
_FREE = Free("a provider is configuration, not a cloud resource")

KINDS = (
    Kind(
        token="pulumi:providers:alicloud",
        key_properties=("region",),
        pricing=_FREE,
        terraform=Terraform.PROVIDER,
        replacing_inputs=ReplacingInputs.PULUMI_PROVIDERS,
        roles=frozenset({Role.PROVIDER}),
    ),
    Kind(
        token="pulumi:providers:kubernetes",
        # Never the kubeconfig: in a user's stack it may be a plain credential, and the table goes into PR comments.
        key_properties=("context", "namespace", "deleteUnreachable"),
        pricing=_FREE,
        terraform=Terraform.KUBERNETES,
        replacing_inputs=ReplacingInputs.KUBERNETES_DIFF,
        roles=frozenset({Role.PROVIDER}),
    ),
)
