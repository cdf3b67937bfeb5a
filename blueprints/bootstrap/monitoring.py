"""The CloudMonitor agent a node installs at boot: which version, from where, and how the node checks it (pure).

Alibaba's manual install for an ECS instance on Linux (https://github.com/AlibabaCloudDocs/cms/blob/
9b440fcb72432e56ea1bf1b4e7a6e6d5488a591f/intl.en-US/Host%20monitoring/Cloud%20Monitor%20agent/Install%20and%20uninstall%20the%20Cloud%20Monitor%20agent.md,
retrieved 2026-12-01) is, for cn-shanghai:
``ARGUS_VERSION=3.4.7 /bin/bash -c "$(curl -s https://cms-agent-cn-shanghai.oss-cn-shanghai-internal.aliyuncs.com/Argus/agent_install_ecs-1.2.sh)"``.
The console shows the same command per region; that the bucket is ``cms-agent-<region>`` in every region is
UNVERIFIED beyond the documented cn-shanghai and the same pattern in public scripts for cn-hangzhou, cn-hongkong,
ap-southeast-1, us-east-1 and me-central-1. The ECS variant takes no AccessKey (the non-ECS one does), so the agent
identifies the instance by itself; whether it reads instance metadata with an IMDSv2 token (our nodes enforce
http_tokens=required) is UNVERIFIED: the node's status says whether the agent runs (``cloudmonitor=`` line).
"""

from __future__ import annotations

from dataclasses import dataclass

# The documented version and installer (see above); newer ones exist (public scripts use 3.5.x with
# agent_install_ecs-1.7.sh / agent_install-1.13.sh), but none is in a document we could cite.
CLOUDMONITOR_VERSION = "3.4.7"
CLOUDMONITOR_SCRIPT = "agent_install_ecs-1.2.sh"
# The agent's process and its log directory (CloudMonitor agent overview, "Installation path"):
# https://www.alibabacloud.com/help/en/cms/cloudmonitor-1-0/user-guide/cloudmonitor-agent/
CLOUDMONITOR_PROCESS = "argusagent"
CLOUDMONITOR_BINARY = "/usr/local/cloudmonitor/bin/argusagent"
CLOUDMONITOR_LOG = "/var/log/aitrain-cloudmonitor.log"


@dataclass(frozen=True)
class CloudMonitorAgent:
    """The CloudMonitor agent the node boot installs (its ``*Agent`` and ``gpu_*`` metrics feed alarms)."""

    version: str = CLOUDMONITOR_VERSION
    script: str = CLOUDMONITOR_SCRIPT

    def installer_url(self, region: str) -> str:
        """The region's VPC-internal installer (an OSS internal endpoint: no internet egress needed)."""
        return f"https://cms-agent-{region}.oss-{region}-internal.aliyuncs.com/Argus/{self.script}"


def node_metric_producers(cloudmonitor: CloudMonitorAgent | None) -> tuple[str, ...]:
    """What produces metrics for a node booted with this agent setting (``blueprints.catalog.metrics.PRODUCERS``):
    ECS basic monitoring always, the CloudMonitor agent only when the boot installs it."""
    return ("ecs", "cloudmonitor-agent") if cloudmonitor is not None else ("ecs",)
