"""ImageBake: the team's own GPU image, built once by ECS Image Builder (an image pipeline and one execution of it)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_alicloud as alicloud

from blueprints.components.base import child, with_tags


@dataclass(frozen=True)
class ImageBakeArgs:
    """What the build instance boots and runs: the plain OS image, the family's type, a vSwitch, the template."""

    image_name: str
    base_image: pulumi.Input[str]
    instance_type: str
    vswitch_id: pulumi.Input[str]
    build_content: str
    system_disk_gib: int
    tags: dict[str, str]


class ImageBake(pulumi.ComponentResource):
    """``ecs.EcsImagePipeline`` (argument names from pulumi_alicloud 4.0.0 ``ecs/ecs_image_pipeline.py``) and one
    ``ecs.ImagePipelineExecution`` that runs it; the image it makes is named ``image_name`` plus a build suffix.

    The build instance gets no public IP (``internet_max_bandwidth_out`` 0): it downloads through the VPC's NAT like
    the nodes do. ``delete_instance_on_failure`` releases the build instance when a build fails, so a failed build
    leaves no GPU instance running.
    """

    def __init__(self, name: str, args: ImageBakeArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("aitrain:image:ImageBake", name, None, opts)
        self.pipeline = alicloud.ecs.EcsImagePipeline(
            f"{name}-pipeline",
            name=args.image_name,
            image_name=args.image_name,
            base_image_type="IMAGE",
            base_image=args.base_image,
            instance_type=args.instance_type,
            vswitch_id=args.vswitch_id,
            build_content=args.build_content,
            system_disk_size=args.system_disk_gib,
            internet_max_bandwidth_out=0,
            delete_instance_on_failure=True,
            description="aitrain bake: the family's GPU stack preinstalled",
            tags=with_tags(args.tags, "image-bake"),
            opts=child(self),
        )
        self.execution = alicloud.ecs.ImagePipelineExecution(
            f"{name}-execution", image_pipeline_id=self.pipeline.id, opts=child(self)
        )
        self.register_outputs({"pipeline_id": self.pipeline.id, "execution_id": self.execution.id})
