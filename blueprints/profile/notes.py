"""Plan notes on what a profile's storage safety settings leave to the reviewer (a manual step, or a known gap)."""

from __future__ import annotations

from blueprints.profile.model import ProfileBase


def storage_notes(profile: ProfileBase, *, host_registry: bool = True) -> list[str]:
    """Plan notes on what the storage's safety settings leave to the reviewer (a manual step, or a known gap).

    ``host_registry``: the nodes write aitrain's host registry to the share (ECS blueprints); otherwise the squash
    note speaks of what a job running as root may write.
    """
    storage = profile.storage
    notes = []
    if storage.kind == "extreme_nas":
        notes.append(
            f"Extreme NAS snapshots: the policy {profile.name}-storage-daily (every day at 02:00, kept "
            + (
                "until the snapshot limit"
                if storage.snapshot_retention_days == -1
                else f"{storage.snapshot_retention_days} days"
            )
            + ") is created, but pulumi-alicloud 4.0.0 has no resource "
            "that applies it to a file system; after `pulumi up` run once: "
            "aliyun nas ApplyAutoSnapshotPolicy --AutoSnapshotPolicyId $(pulumi stack output snapshot_policy_id) "
            "--FileSystemIds $(pulumi stack output file_system_id)"
        )
    if storage.kind == "cpfs":
        notes.append(
            "CPFS has no snapshot or recycle-bin API in pulumi-alicloud 4.0.0: a deleted file is gone; keep "
            "checkpoints in the versioned bucket as well."
        )
    if storage.kind != "cpfs" and storage.nfs_squash != "no_squash" and not host_registry:
        notes.append(
            f"storage.nfs_squash {storage.nfs_squash}: a job running as root "
            "in its pod is nobody on the share, so it writes only where "
            "others may; give the jobs' directories to the user the image runs as, or choose no_squash with "
            "guardrails.skip AIT024 and a reason."
        )
    elif storage.kind != "cpfs" and storage.nfs_squash != "no_squash":
        notes.append(
            f"storage.nfs_squash {storage.nfs_squash}: root on a node is "
            "nobody on the share, so the nodes write there (host registry, "
            "runs, the job) as the job user aitrain (uid 2000), which needs a "
            "share root it may write. Alibaba Cloud does not document the NAS "
            "root directory's default mode (UNVERIFIED); if aitrain-registry.service fails, the README's one-time step "
            '("The share under root_squash") gives /mnt/shared/.aitrain to uid 2000.'
        )
    if profile.security.egress is not None:
        notes.append(oss_egress_note(profile.region))
    return notes


def oss_egress_note(region: str) -> str:
    """What the egress allow-list's Alibaba Cloud service range leaves open: every tenant's OSS internal endpoint."""
    # vpc.GatewayEndpoint (pulumi-alicloud 4.0.0): service_name "com.aliyun.<region>.oss" (its docstring's example),
    # policy_document "required when the cloud service is oss". privatelink.VpcEndpoint takes a policy_document too,
    # but for Interface / Gateway Load Balancer endpoints of endpoint services, not OSS.
    return (
        "Egress allow-list: the accepted Alibaba Cloud service "
        "range 100.64.0.0/10 (metadata, DNS, mirrors) also reaches "
        f"every tenant's OSS internal endpoint (oss-{region}-internal.aliyuncs.com), so a node can copy data into any "
        "account's bucket. The control is a VPC endpoint policy: pulumi-alicloud 4.0.0 has vpc.GatewayEndpoint "
        f"(service_name com.aliyun.{region}.oss, policy_document "
        "naming only your buckets, route_tables the VPC's), which "
        "aitrain does not create; add one to the stack, and check in the OSS docs that the internal endpoint's traffic "
        "takes it (UNVERIFIED). A bucket policy's acs:SourceVpc condition (aitrain's bucket policy sets none) limits "
        "who reaches your bucket, not where the nodes send data."
    )
