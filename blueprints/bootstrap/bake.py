"""The image template ``aitrain bake`` builds the team's GPU image from (ECS Image Builder, pure text).

ECS Image Builder runs an image template's commands on a temporary instance of the family's type and saves the
result as a custom image (pulumi_alicloud 4.0.0 ``ecs.EcsImagePipeline``: "build_content: the content of the image
template. The content cannot be greater than 16 KB in size, and can contain up to 127 commands"; what an image
template is: https://www.alibabacloud.com/help/en/doc-detail/200427.html). The commands install the family's
catalog pins the way a node's first boot would (Alibaba's auto-install script, then the catalog's PyTorch), once, so
every node booted from the image skips the 10-20 minutes and the reboot.
"""

from __future__ import annotations

import shlex

from blueprints.bootstrap import METADATA_HOST, TORCH_VENV, GpuSoftware

# ecs.EcsImagePipeline build_content limits (SDK docstring above).
BUILD_CONTENT_LIMIT_BYTES = 16 * 1024
BUILD_CONTENT_MAX_COMMANDS = 127


def bake_build_content(gpu: GpuSoftware) -> str:
    """The image template's ``RUN`` commands for ``gpu`` (an install-script pin): driver, CUDA and cuDNN by Alibaba's
    auto-install script (the form of docs/sources/ready-to-train.md section 1b), then PyTorch into the nodes' venv.

    UNVERIFIED: how Image Builder treats the reboot the script ends with (the template has no documented reboot
    step); the node's own boot check (`aitrain-node ready`) still reports a missing driver as state=failed.
    """
    if gpu.method != "install_script" or not (gpu.driver_version and gpu.cuda_version and gpu.cudnn_version):
        raise ValueError("bake: only an install-script pin (driver, CUDA and cuDNN versions) can be baked")
    q = shlex.quote
    script = "auto_install_v4.0.sh"
    lines = [
        "RUN rm -rf /root/auto_install && mkdir -p /root/auto_install",
        f"RUN cd /root/auto_install && wget -t 10 --timeout=10 "
        f'"$(curl -fsS http://{METADATA_HOST}/latest/meta-data/source-address | head -n1)'
        f'/opsx/ecs/linux/binary/script/{script}"',
        f"RUN cd /root/auto_install && bash {script} {q(gpu.driver_version)} {q(gpu.cuda_version)} "
        f"{q(gpu.cudnn_version)} FALSE FALSE",
    ]
    if gpu.pytorch_version and gpu.pytorch_index_url:
        lines.append(
            f"RUN python3 -m venv {TORCH_VENV} && {TORCH_VENV}/bin/pip install -q "
            f"{q('torch==' + gpu.pytorch_version)} --index-url {q(gpu.pytorch_index_url)}"
        )
    text = "\n".join(lines) + "\n"
    if len(text.encode()) > BUILD_CONTENT_LIMIT_BYTES or len(lines) > BUILD_CONTENT_MAX_COMMANDS:
        raise ValueError("bake: the image template is over Image Builder's 16 KB / 127 commands")
    return text
