"""AccountTrail: an ActionTrail trail of every API call in every region, delivered to SLS or OSS."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import stateful


@dataclass(frozen=True)
class AccountTrailArgs:
    """Where the trail delivers: an SLS project ARN and/or an OSS bucket (each with an optional write role).

    ``trail_name`` None: the component's own name (``<profile name>-audit``), so two stacks never collide on one
    account-wide name (ActionTrail names are unique per account; trailName is ForceNew, replacing_inputs.csv).
    """

    trail_name: str | None
    sls_project_arn: str | None = None
    sls_write_role_arn: str | None = None
    oss_bucket: str | None = None
    oss_write_role_arn: str | None = None


class AccountTrail(pulumi.ComponentResource):
    """One trail with ``trail_region="All"`` and ``event_rw="All"`` (Checkov CKV_ALI_4/5; CIS 2.1).

    A trail is an account resource: it outlives any training stack that points at it, so it is created only when
    the profile asks (``security.actiontrail``) and otherwise the guardrails report its absence as info. It is
    ``protect`` + ``retain_on_delete`` like stored data: a plain ``pulumi destroy`` or dropping the setting must not
    stop the account's audit record (Pulumi refuses; after unprotecting, the trail stays in the account).
    """

    def __init__(self, name: str, args: AccountTrailArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:audit:AccountTrail", name, None, opts)
        self.trail = alicloud.actiontrail.Trail(
            f"{name}-trail",
            trail_name=args.trail_name or name,
            trail_region="All",
            event_rw="All",
            status="Enable",
            sls_project_arn=args.sls_project_arn,
            sls_write_role_arn=args.sls_write_role_arn,
            oss_bucket_name=args.oss_bucket,
            oss_write_role_arn=args.oss_write_role_arn,
            opts=stateful(self),
        )
        self.register_outputs({"trail_name": self.trail.trail_name})
