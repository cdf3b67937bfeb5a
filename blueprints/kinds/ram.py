"""RAM kinds: the node roles and their policies, and the long-lived identities the guardrails keep out (AIT020)."""

from __future__ import annotations

from blueprints.kinds.model import Free, Kind, ReplacingInputs, Terraform

SERVICES = ("ram",)
_FREE = Free("RAM is free")


def _identity(token: str, key_properties: tuple[str, ...]) -> Kind:
    """A RAM user, its keys or a user/group attachment: known so AIT020 can name it, never written by aitrain."""
    return Kind(
        token=token,
        key_properties=key_properties,
        pricing=_FREE,
        terraform=Terraform.UNMAPPED,
        replacing_inputs=ReplacingInputs.UNKNOWN,
    )


KINDS = (
    Kind(
        token="alicloud:ram/role:Role",
        key_properties=("roleName",),
        pricing=_FREE,
        terraform=Terraform.MAPPED,
        replacing_inputs=ReplacingInputs.TERRAFORM_DOCS,
        computed_outputs=("arn",),
    ),
    Kind(
        token="alicloud:ram/policy:Policy",
        key_properties=("policyName",),
        pricing=_FREE,
        terraform=Terraform.MAPPED,
        replacing_inputs=ReplacingInputs.TERRAFORM_DOCS,
    ),
    Kind(
        token="alicloud:ram/rolePolicyAttachment:RolePolicyAttachment",
        key_properties=("policyName", "policyType"),
        pricing=_FREE,
        terraform=Terraform.MAPPED,
        replacing_inputs=ReplacingInputs.TERRAFORM_DOCS,
    ),
    _identity("alicloud:ram/user:User", ("name",)),
    _identity("alicloud:ram/accessKey:AccessKey", ("userName", "status")),
    _identity("alicloud:ram/userPolicyAttachment:UserPolicyAttachment", ("userName", "policyName", "policyType")),
    _identity("alicloud:ram/groupPolicyAttachment:GroupPolicyAttachment", ("groupName", "policyName", "policyType")),
)
