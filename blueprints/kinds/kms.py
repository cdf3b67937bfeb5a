"""KMS kinds: a customer-managed key a user's stack creates
(aitrain's own stacks only name one: security.kms_key_id)."""

from __future__ import annotations

from blueprints.kinds.model import Kind, ReplacingInputs, Role, Terraform, Unpriced

SERVICES = ("kms",)

KINDS = (
    Kind(
        token="alicloud:kms/key:Key",
        key_properties=(
            "keySpec",
            "automaticRotation",
            "rotationInterval",
            "deletionProtection",
            "pendingWindowInDays",
        ),
        pricing=Unpriced(
            "a key's version fee and the KMS instance it lives in are priced only when a resource names the key"
            " (blueprints.review.costing_audit: the KMS instance line)"
        ),
        terraform=Terraform.MAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
        # A deleted key makes every disk and object it encrypts unreadable: guarded like the data itself.
        roles=frozenset({Role.STATEFUL}),
    ),
)
