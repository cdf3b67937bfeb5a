"""Blueprints whose nodes are ECS instances aitrain boots itself: cloud-init user data, a launch template, torchrun."""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Any

from blueprints.architectures.base import FABRIC_SUMMARY, Blueprint, Foundation
from blueprints.bootstrap import (
    LAUNCHER_PATH,
    TORCH_VENV,
    BootSpec,
    Fabric,
    GpuSoftware,
    boot_downloads,
    render_user_data,
)
from blueprints.core.layout import check_vswitch_room

if TYPE_CHECKING:  # components load with the Pulumi SDK, only when resources are built (see base.py)
    from blueprints.components.network import TrainingNetwork
    from blueprints.components.node import NodeSpec


class EcsBlueprint(Blueprint):
    """A blueprint whose GPU nodes boot from aitrain's cloud-init: driver, fabric, storage mount, scratch, launcher.

    A subclass builds its compute unit from the ``NodeSpec`` in ``build_compute``; ``aitrain launch`` starts
    ``aitrain-torchrun`` on its nodes.
    """

    def build_nodes(self, foundation: Foundation) -> dict[str, object]:
        """The login node, the node spec (image, user data, disks) and the compute unit built from it."""
        import pulumi

        from blueprints.components.node import NodeSpec

        network, storage, bucket = foundation
        p = self.profile
        image = self.image()
        login = self.build_login_node(network, image.image_id)
        # The nodes must fit their vSwitches, or `pulumi up` fails mid-way launching the last ones (the login node has its own).
        check_vswitch_room(p.network.vpc_cidr, self.most_nodes(), len(network.compute_zone_ids))
        scratch = p.compute.scratch(self.catalog)
        # A parked cluster (no nodes) boots nothing, so there is no user data to render.
        user_data = (
            pulumi.Output.from_input("")
            if self.expected_nodes() == 0
            else storage.mount_source.apply(
                lambda source: render_user_data(
                    BootSpec(
                        cluster=p.name,
                        region=p.region,
                        gpus_per_node=self.instance.gpu_count,
                        storage_kind=p.storage.kind,
                        mount_source=source,
                        mount_options=storage.mount_options,
                        nfs_package=image.nfs_package,
                        gpu=self.gpu_software(),
                        fabric=Fabric(self.fabric_link),  # type: ignore[arg-type]  # FABRIC_LINKS
                        scratch_gib=scratch.gib,
                        scratch_local_nvme=scratch.local_nvme,
                        bucket=p.bucket_name,
                        role_name=self.node_role_name,
                        registry_cidrs=tuple(network.compute_cidrs[zone] for zone in network.compute_zone_ids),
                    )
                )
            )
        )
        node = NodeSpec(
            instance_type=self.instance.instance_type,
            image_id=image.image_id,
            security_group_id=network.security_group_id,
            user_data=user_data,
            system_disk_gib=p.compute.system_disk_gib,
            system_disk_performance_level=p.compute.system_disk_performance_level,
            scratch_disk_gib=scratch.cloud_disk_gib,
            scratch_performance_level=scratch.performance_level,
            eri=self.fabric_link == "erdma",
            kms_key_id=p.security.kms_key_id,
            bucket_policy_name=bucket.policy_name,
            spot=p.cost.spot,
            tags=p.tags,
        )
        outputs: dict[str, object] = {"launcher": LAUNCHER_PATH}
        if login is not None:
            outputs.update(
                login_node_public_ip=login.public_ip,
                login_node_private_ip=login.private_ip,
                login_node_instance_id=login.instance_id,
            )
        outputs.update(self.build_compute(network, node))
        return outputs

    @abstractmethod
    def build_compute(self, network: TrainingNetwork, node: NodeSpec) -> dict[str, object]:
        """Create the compute unit; return its outputs (the launch targets: node IDs and IPs, or a scaling group)."""

    def gpu_software(self) -> GpuSoftware:
        """How this blueprint's nodes get their GPU stack: the catalog's row for the instance family."""
        software = self.catalog.software_for(self.instance)
        if software is None:
            return GpuSoftware("none", None, None, None, False)
        torch = self.profile.compute.install_pytorch
        return GpuSoftware(
            software.method,  # type: ignore[arg-type]  # GPU_SOFTWARE_METHODS, checked by the catalog loader
            software.driver_version,
            software.cuda_version,
            software.cudnn_version,
            software.needs_fabric_manager(self.instance),
            pytorch_version=software.pytorch_version if torch else None,
            pytorch_index_url=software.pytorch_index_url if torch else None,
            pytorch_sha256=software.pytorch_wheel_sha256 if torch else (),
            cuda_repo_key=software.cuda_repo_key_fingerprint,
        )

    def node_software_summary(self) -> dict[str, Any]:
        """How a node becomes ready to train: GPU software path, the inter-node link, and its scratch."""
        instance, catalog = self.instance, self.catalog
        software = catalog.software_for(instance)
        out: dict[str, Any] = {}
        if software is None:
            out["gpu_software"] = f"none: the catalog has no driver path for family {instance.family}"
        else:
            how = (
                "preinstalled in the image"
                if software.method == "driver_image"
                else "installed at first boot by Alibaba's auto-install script (then a reboot)"
            )
            out["gpu_software"] = (
                f"NVIDIA driver {software.driver_version}, CUDA {software.cuda_version}"
                + (f", cuDNN {software.cudnn_version}" if software.cudnn_version else "")
                + f", {how}"
                + (
                    "; NVIDIA Fabric Manager for the NVSwitch baseboard"
                    if software.needs_fabric_manager(instance)
                    else ""
                )
                + (
                    f"; PyTorch {software.pytorch_version} (torchrun, NCCL) in {TORCH_VENV}"
                    if self.profile.compute.install_pytorch and software.pytorch_version
                    else "; no PyTorch installed (compute.install_pytorch false, or none in the catalog): bring your own torchrun"
                )
            )
        out["fabric"] = FABRIC_SUMMARY[self.fabric_link]
        # What each node downloads at boot and how it is checked; the unverified ones say so (blueprints/bootstrap).
        out["boot_downloads"] = "; ".join(
            f"{what}: {check}"
            for what, check in boot_downloads(self.gpu_software(), Fabric(self.fabric_link))  # type: ignore[arg-type]
        )
        scratch = self.profile.compute.scratch(catalog)
        out["scratch_gib_per_node"] = scratch.gib
        out["scratch"] = (
            "none (compute.scratch_gib 0)"
            if scratch.gib == 0
            else f"{scratch.gib:,} GiB local NVMe at /mnt/scratch"
            if scratch.local_nvme
            else f"{scratch.gib:,} GiB encrypted ESSD {scratch.performance_level} data disk per node at /mnt/scratch"
        )
        return out
