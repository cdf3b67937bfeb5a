"""Builds the nodes aitrain boots itself: the login node, the node spec (image, cloud-init, disks), the compute unit."""

from __future__ import annotations

import dataclasses
from abc import abstractmethod
from typing import Any, Sequence, TypeVar

import pulumi

from blueprints.architectures.base.build import BlueprintBuilder, Foundation, login_node_outputs
from blueprints.architectures.ecs.preprocess import build_preprocess_group
from blueprints.architectures.ecs.spec import EcsSpec
from blueprints.bootstrap import LAUNCHER_PATH, BootSpec, render_user_data
from blueprints.bootstrap.bake import bake_build_content
from blueprints.bootstrap.monitoring import node_metric_producers
from blueprints.catalog.metrics import load_metrics, metric_producers
from blueprints.components.bake import ImageBake, ImageBakeArgs
from blueprints.components.errors import ResourceError, names_resource
from blueprints.components.network import TrainingNetwork
from blueprints.components.node import NodeSpec
from blueprints.core.layout import check_vswitch_room
from blueprints.profile.model import ProfileBase

# The ECS spec this builder builds (``FixedClusterBuilder(EcsBuilder[FixedClusterSpec])``).
E = TypeVar("E", bound=EcsSpec[Any])


class EcsBuilder(BlueprintBuilder[E]):
    """Renders the node boot once and hands the ``NodeSpec`` to the subclass's ``build_compute``."""

    def build_nodes(self, foundation: Foundation) -> dict[str, object]:
        """The login node, the node spec (image, user data, disks) and the compute unit built from it."""
        network, storage, bucket = foundation
        spec = self.spec
        p: ProfileBase = spec.profile
        # Alibaba's image with the GPU stack where the catalog has one for the family and region (the nodes skip the
        # install script and its reboot); the login node, which has no GPU and a small disk, boots the plain OS image.
        gpu_image = spec.preinstalled_image()
        image = self.image(None if p.compute.image_id else gpu_image)
        login = self.build_login_node(network, (self.image(pinned_ok=False) if gpu_image else image).image_id)
        # The nodes must fit their vSwitches, or `pulumi up` fails mid-way launching the last ones (the login node has
        # its own); a network too small for them is the network's error.
        with names_resource(network):
            check_vswitch_room(p.network.vpc_cidr, spec.most_nodes(), len(network.compute_zone_ids))
        scratch = p.compute.scratch(self.catalog)
        boot = BootSpec(
            cluster=p.name,
            region=p.region,
            gpus_per_node=self.instance.gpu_count,
            storage_kind=p.storage.kind,
            mount_source="",  # the file system's, known once it exists (below)
            mount_options=storage.mount_options,
            nfs_package=image.nfs_package,
            gpu=spec.gpu_software(),
            fabric=spec.fabric(),
            scratch_gib=scratch.gib,
            scratch_local_nvme=scratch.local_nvme,
            bucket=p.bucket_name,
            role_name=spec.node_role_name,
            registry_cidrs=tuple(network.compute_cidrs[zone] for zone in network.compute_zone_ids),
            cloudmonitor=spec.cloudmonitor_agent(),
        )
        # A parked cluster (no nodes) boots nothing, so there is no user data to render.
        user_data = (
            pulumi.Output.from_input("")
            if spec.expected_nodes() == 0
            else storage.mount_source.apply(
                lambda source: render_user_data(dataclasses.replace(boot, mount_source=source))
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
            eri=spec.fabric_link == "erdma",
            jumbo_frames=boot.fabric.jumbo_frames,
            kms_key_id=p.security.kms_key_id,
            bucket_policy_name=bucket.policy_name,
            spot=p.cost.spot,
            tags=p.tags,
        )
        outputs: dict[str, object] = {"launcher": LAUNCHER_PATH, "node_image": image.output()}
        if p.compute.bake_image:
            outputs["image_bake"] = self.build_image_bake(network, image.image_id if p.compute.image_id else None)
        outputs.update(login_node_outputs(login))
        # What reads a metric (filled by build_compute: the pool's alarms) and what the boot above makes produce it.
        self.metric_readers: dict[tuple[str, str], Sequence[str]] = {}
        outputs.update(self.build_compute(network, node))
        outputs.update(build_preprocess_group(spec, foundation, image.image_id, image.nfs_package, self.opts))
        outputs["metric_producers"] = metric_producers(
            node_metric_producers(boot.cloudmonitor), self.metric_readers, load_metrics(), spec.metric_namespaces
        )
        return outputs

    def build_image_bake(self, network: TrainingNetwork, base_image: str | None) -> dict[str, object]:
        """`aitrain bake`: one Image Builder run that installs this family's pins on the plain OS image."""
        spec, p = self.spec, self.spec.profile
        software = self.catalog.software_for(self.instance)
        if software is None:
            raise ResourceError(f"{self.instance.instance_type} has no GPU: there is no GPU stack to bake", network)
        pins = dataclasses.replace(spec.gpu_software(), method="install_script")
        name = f"{p.name}-{self.instance.family}-{software.driver_version.replace('.', '-')}"
        bake = ImageBake(
            f"{p.name}-bake",
            ImageBakeArgs(
                image_name=name,
                base_image=base_image or self.image(pinned_ok=False).image_id,
                instance_type=self.instance.instance_type,
                vswitch_id=network.vswitch_id(network.compute_zone_ids[0]),
                build_content=bake_build_content(pins),
                system_disk_gib=p.compute.system_disk_gib,
                tags=p.tags,
            ),
            opts=self.opts,
        )
        return {
            "image_name": name,
            "pipeline_id": bake.pipeline.id,
            "next": "when the execution finishes, pin the image it made (ECS console: Images, or `aliyun ecs "
            f"DescribeImages --ImageName {name}*`) with `aitrain image pin --image-id m-... --write`, set "
            "compute.gpu_stack_in_image true and compute.bake_image false",
        }

    @abstractmethod
    def build_compute(self, network: TrainingNetwork, node: NodeSpec) -> dict[str, object]:
        """Create the compute unit; return its outputs (the launch targets: node IDs and IPs, or a scaling group)."""
