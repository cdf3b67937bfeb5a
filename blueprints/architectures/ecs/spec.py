"""What the blueprints whose nodes aitrain boots itself (cloud-init, torchrun) mean: GPU software, fabric, scratch."""

from __future__ import annotations

from typing import Any, ClassVar, Generic, Literal

from blueprints.architectures.base.spec import FABRIC_SUMMARY, BlueprintSpec, P
from blueprints.bootstrap import BOOT_MINUTES, TORCH_VENV, Fabric, GpuSoftware, boot_downloads
from blueprints.bootstrap.fabric import MtuChoice, erdma_mtu
from blueprints.bootstrap.monitoring import CloudMonitorAgent
from blueprints.catalog import Image

# The catalog's link names (``FABRIC_LINKS``) as the boot's Literal: a name outside it is a KeyError, never a cast.
_FABRIC_LINKS: dict[str, Literal["erdma", "roce", "tcp"]] = {"erdma": "erdma", "roce": "roce", "tcp": "tcp"}
# The catalog's install methods (``GPU_SOFTWARE_METHODS``, checked by its loader) as the boot's Literal.
_GPU_METHODS: dict[str, Literal["driver_image", "install_script"]] = {
    "driver_image": "driver_image",
    "install_script": "install_script",
}


class EcsSpec(BlueprintSpec[P], Generic[P]):
    """A blueprint whose GPU nodes boot from aitrain's cloud-init: driver, fabric, storage mount, scratch, launcher.

    ``aitrain launch`` starts ``aitrain-torchrun`` on its nodes; its builder subclasses ``EcsBuilder``
    (``blueprints.architectures.ecs.build``), which renders the boot and writes only the compute unit.
    """

    # Why this blueprint's eRDMA nodes cannot turn jumbo frames on (None: they are ecs.Instance, which can; the
    # builder then sets enable_jumbo_frame as ``fabric()`` says). Default: they cannot.
    jumbo_frame_blocker: ClassVar[str | None] = (
        "these nodes are not ecs.Instance, the only resource with a jumbo-frame argument (enable_jumbo_frame) in "
        "pulumi-alicloud 4.0.0"
    )

    def fabric(self) -> Fabric:
        """The boot's view of the link NCCL uses between this blueprint's nodes (eRDMA: with its MTU and why)."""
        link = _FABRIC_LINKS[self.fabric_link]
        if link != "erdma":
            return Fabric(link)
        choice = self.mtu_choice()
        return Fabric(link, jumbo_frames=choice.jumbo_frames, mtu_reason=choice.reason)

    def mtu_choice(self) -> MtuChoice:
        """Jumbo frames (MTU 8500) where the family documents them and the nodes can turn them on, else 1400."""
        return erdma_mtu(self.instance.family, self.jumbo_frame_blocker)

    # Where the plan's metric_producers output lists this blueprint's metrics: CloudMonitor's host namespace (an ESS
    # pool adds its scaling alarms' system metrics).
    metric_namespaces: tuple[str, ...] = ("acs_ecs_dashboard",)

    def security_notes(self) -> list[str]:
        """The base notes, and where the nodes' GPU metrics come from (and which GPU faults no alarm can watch)."""
        notes = super().security_notes()
        if self.cloudmonitor_agent() is not None:
            notes.append(
                "GPU metrics: every node installs the CloudMonitor agent at boot (its *Agent and gpu_* metrics; the "
                "metric_producers output lists them with what reads them); a failed install shows as "
                "cloudmonitor=failed in /etc/aitrain/status. No CloudMonitor metric or ECS system event for NVIDIA "
                "XID errors or a GPU fallen off the bus was found in Alibaba's documentation, so no alarm watches "
                "them: the nodes' own checks must (UNVERIFIED that none exists)."
            )
        return notes

    def cloudmonitor_agent(self) -> CloudMonitorAgent | None:
        """The CloudMonitor agent every node installs at boot: the ESS alarms' *Agent metrics exist only with it."""
        return CloudMonitorAgent()

    def preinstalled_image(self) -> Image | None:
        """The catalog's image with the NVIDIA stack that the nodes boot: the one for this family and region when the
        profile pins no image, or the catalog's row of the GPU image it pins (None: neither)."""
        if not self.instance.is_gpu:
            return None
        pinned = self.profile.compute.image_id
        if pinned:
            found = self.catalog.image_regions(pinned)
            return found[1] if found and found[1].has_gpu_stack else None
        return self.catalog.gpu_image_for(self.profile.region, self.instance.family)

    def boot_path(self) -> Literal["preinstalled", "baked", "install_script", "none"]:
        """How a node gets its GPU stack: Alibaba's image that ships it, the team's own image (``aitrain bake``, or
        a pinned image said to ship it), Alibaba's install script at first boot (then a reboot), or none (CPU)."""
        if self.catalog.software_for(self.instance) is None:
            return "none"
        compute = self.profile.compute
        if compute.image_id:
            pinned = self.catalog.image_regions(compute.image_id)
            ships = compute.gpu_stack_in_image
            if ships is None:
                ships = pinned is not None and pinned[1].has_gpu_stack
            return "baked" if ships and pinned is None else "preinstalled" if ships else "install_script"
        return "preinstalled" if self.preinstalled_image() is not None else "install_script"

    def gpu_software(self) -> GpuSoftware:
        """How this blueprint's nodes get their GPU stack: the catalog's row for the instance family, booted from an
        image that ships it where there is one (no install script, no reboot)."""
        software = self.catalog.software_for(self.instance)
        if software is None:
            return GpuSoftware("none", None, None, None, False)
        torch = self.profile.compute.install_pytorch
        return GpuSoftware(
            "driver_image" if self.boot_path() in ("preinstalled", "baked") else _GPU_METHODS[software.method],
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
            out.update(self._gpu_software_lines(software))
        fabric = self.fabric()
        out["fabric"] = FABRIC_SUMMARY[fabric.link] + (f"; {fabric.mtu_reason}" if fabric.mtu_reason else "")
        # What each node downloads at boot and how it is checked; the unverified ones say so (blueprints/bootstrap).
        out["boot_downloads"] = "; ".join(
            f"{what}: {check}" for what, check in boot_downloads(self.gpu_software(), self.fabric())
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

    def _gpu_software_lines(self, software: Any) -> dict[str, Any]:
        """The plan's GPU software rows: the family's pins and their source, the boot path, its boot-to-ready time."""
        instance, path = self.instance, self.boot_path()
        image = self.preinstalled_image() if path == "preinstalled" else None
        if image is not None:
            # Alibaba's image brings its own driver and CUDA; the family's pin is what the install path would use.
            stack = (
                f"NVIDIA driver {image.driver_version}, CUDA {image.cuda_version}, preinstalled in Alibaba's GPU image"
            )
            stack += f" (pattern {image.name_regex}; this offline plan shows {image.image_id})"
            fm_version = f"{image.driver_version} (the image's driver)"
        else:
            stack = f"NVIDIA driver {software.driver_version}, CUDA {software.cuda_version}"
            stack += f", cuDNN {software.cudnn_version}" if software.cudnn_version else ""
            stack += (
                f", preinstalled in the team's own image {self.profile.compute.image_id} (`aitrain bake`)"
                if path == "baked"
                else ", preinstalled in the pinned image"
                if path == "preinstalled"
                else ", installed at first boot by Alibaba's auto-install script (then a reboot)"
            )
            fm_version = str(software.fabric_manager_version)
        out: dict[str, Any] = {
            "gpu_software": (
                stack
                + (
                    f"; NVIDIA Fabric Manager {fm_version} for the NVSwitch baseboard"
                    if software.needs_fabric_manager(instance)
                    else ""
                )
                + (
                    f"; PyTorch {software.pytorch_version} (torchrun, NCCL {software.nccl_version}) in {TORCH_VENV}"
                    if self.profile.compute.install_pytorch and software.pytorch_version
                    else (
                        "; no PyTorch installed (compute.install_pytorch false, "
                        "or none in the catalog): bring your own torchrun"
                    )
                )
            ),
            "gpu_software_pin": (
                f"family {instance.family}: gpu_software.csv ({software.source_date}): {software.source}"
                + (f"; image: images.csv ({image.source_date}): {image.source}" if image else "")
            ),
        }
        method = "driver_image" if path in ("preinstalled", "baked") else "install_script"
        low, high, source = BOOT_MINUTES[method]
        out["boot_to_ready"] = (
            ("unknown per node" if low is None or high is None else f"{low}-{high} min per node")
            + (", then a reboot" if method == "install_script" else ", no install and no reboot")
            + f" (source: {source})"
        )
        if path == "install_script":
            out["boot_faster"] = (
                f"the catalog names no image with the GPU stack for {instance.family} in {self.profile.region}: "
                "`aitrain bake` builds the team's own image once (ecs.ImagePipeline), then set compute.image_id to it "
                "and compute.gpu_stack_in_image true, and every later node skips the install and the reboot"
            )
        return out
