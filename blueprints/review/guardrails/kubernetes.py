"""ACK rules: a private API server, audit logs, node pools that run as
the plan's own role and repair their nodes, volumes that keep their data.

Input names are the engine (camelCase) names of pulumi-alicloud 4.0.0 ``cs.ManagedKubernetes`` / ``cs.NodePool`` and
pulumi-kubernetes 4.34.2 ``core/v1`` / ``storage.k8s.io/v1`` (their Python names, camelCased by the bridge).
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from blueprints.review.guardrails.identity import beyond_ecs
from blueprints.review.guardrails.inputs import as_list, json_document, of_types, referenced, statements
from blueprints.review.guardrails.model import Rule
from blueprints.review.plan import Plan, PlannedResource

CLUSTER = "cs.ManagedKubernetes"
NODE_POOL = "cs.NodePool"
PERSISTENT_VOLUME = "kubernetes:core/v1:PersistentVolume"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
# An image reference pinned to its content: ``…@sha256:<64 hex>`` (OCI image spec, digests).
DIGEST_RE = re.compile(r"@sha256:[a-f0-9]{64}$")


def api_server_private(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT033: the API server has no public endpoint; ``network.admin_cidr`` does not excuse one (nothing applies it).

    ACK's documented control for a public endpoint is the access control of port 6443's listener on the CLB that ACK
    creates itself ("Configure access control policies for the API server"); pulumi-alicloud 4.0.0 cs.ManagedKubernetes
    has no argument for it and the listener is not this stack's to manage, so only a reasoned ``guardrails.skip`` (after
    setting that access control by hand) silences a public endpoint.
    """
    admin = plan.summary.get("admin_cidr")
    unapplied = (
        f"; network.admin_cidr {admin} is not applied to it: {UNRESTRICTABLE}"
        if isinstance(admin, str) and admin
        else ""
    )
    for r in of_types(plan, (CLUSTER,)):
        # slb_internet_enabled defaults to true ("Whether to create internet load balancer for API Server. Default to
        # true", ManagedKubernetes docstring, SDK 4.0.0): only an explicit false keeps the endpoint private.
        if r.inputs.get("slbInternetEnabled") is not False:
            yield (
                r.name,
                f"slbInternetEnabled={r.inputs.get('slbInternetEnabled')!r} (the API default is true) puts the API "
                f"server on the internet{unapplied}; set it false, or {SKIP_HOW}",
            )
        endpoints = (r.inputs.get("controlPlaneEndpointsConfig") or {}).get("loadBalancersConfigs")
        for index, endpoint in enumerate(as_list(endpoints)):
            if isinstance(endpoint, dict) and endpoint.get("endpointType") == "public":
                yield (
                    r.name,
                    f"controlPlaneEndpointsConfig.loadBalancersConfigs[{index}].endpointType is 'public': the API "
                    f"server is reachable from the internet{unapplied}; use 'private', or {SKIP_HOW}",
                )


# Why admin_cidr cannot restrict the endpoint, and what a reviewer may do instead (both in AIT033's message).
UNRESTRICTABLE = (
    "pulumi-alicloud 4.0.0 cs.ManagedKubernetes has no access-control argument, and the CLB listener (port 6443) whose"
    " access control would restrict it is created by ACK, not by this stack, so the whole internet reaches the endpoint"
)
SKIP_HOW = (
    "set that listener's access control to the admin range by hand (ACK console: Cluster Information, Set access "
    "control) and add guardrails.skip {rule: AIT033, reason: …}"
)


def audit_log(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT034: API-server audit logging is on (``auditLogConfig.enabled``)."""
    for r in of_types(plan, (CLUSTER,)):
        config = r.inputs.get("auditLogConfig") or {}
        if not isinstance(config, dict) or config.get("enabled") is not True:
            yield (
                r.name,
                "auditLogConfig.enabled is not true: nobody can say who created, read or deleted what in the cluster; "
                "set auditLogConfig {enabled: true}",
            )


def node_pool_role(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT035: every node pool runs as a RAM role of the plan
    that trusts only ECS and holds only the plan's policies."""
    roles = {_role_name(r): r for r in of_types(plan, ("ram.Role",)) if _role_name(r)}
    own_policies = {str(r.inputs.get("policyName") or r.inputs.get("name")) for r in of_types(plan, ("ram.Policy",))}
    attached: dict[str, list[PlannedResource]] = {}
    for a in of_types(plan, ("ram.RolePolicyAttachment",)):
        attached.setdefault(str(a.inputs.get("roleName")), []).append(a)
    for pool in of_types(plan, (NODE_POOL,)):
        name = pool.inputs.get("ramRoleName")
        if not name:
            yield (
                pool.name,
                "ramRoleName is not set: ACK gives the nodes its shared worker role (KubernetesWorkerRole-*), whose "
                "policies the plan does not control; create a ram.Role for the pool",
            )
            continue
        role = roles.get(str(name))
        if role is None:
            yield (
                pool.name,
                f"ramRoleName {name!r} is not a ram.Role created in "
                "this plan: its trust and policies cannot be checked",
            )
            continue
        for problem in _trust_problems(role):
            yield pool.name, f"node role {name!r}: {problem}"
        for a in attached.get(str(name), []):
            policy, kind = a.inputs.get("policyName"), a.inputs.get("policyType")
            if kind != "Custom" or str(policy) not in own_policies:
                yield (
                    pool.name,
                    f"node role {name!r} holds {kind} policy {policy!r} ({a.name}), not one of the plan's own policies "
                    f"({', '.join(sorted(own_policies)) or 'none'})",
                )


def _role_name(role: PlannedResource) -> str:
    return str(role.inputs.get("roleName") or role.inputs.get("name") or "")


def _trust_problems(role: PlannedResource) -> list[str]:
    """What is wrong with a role's trust policy for a node role (empty: only the ECS service may assume it)."""
    document = json_document(role.inputs.get("assumeRolePolicyDocument"))
    if document is None:
        return ["trust policy is not JSON"]
    problems = [f"trust policy admits {principal}, not only the ECS service" for principal in beyond_ecs(document)]
    return problems or ([] if statements(document) else ["trust policy has no statement"])


def volumes_retained(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT036: PersistentVolumes (and the StorageClasses that make them) keep the data when the claim goes."""
    for r in of_types(plan, (PERSISTENT_VOLUME,)):
        policy = (r.inputs.get("spec") or {}).get("persistentVolumeReclaimPolicy")
        if policy != "Retain":
            yield (
                r.name,
                f"spec.persistentVolumeReclaimPolicy is {policy!r}, not 'Retain': deleting the claim may delete the "
                "NAS/OSS data behind it; set it 'Retain' explicitly",
            )
    # A StorageClass's reclaimPolicy defaults to Delete (Kubernetes API,
    # StorageClass.reclaimPolicy): its volumes go with their claims.
    for r in of_types(plan, (STORAGE_CLASS,)):
        if r.inputs.get("reclaimPolicy") != "Retain":
            yield (
                r.name,
                f"reclaimPolicy is {r.inputs.get('reclaimPolicy')!r} (default Delete), not 'Retain': the volumes it "
                "provisions are deleted with their claims",
            )


# ACK's auto repair acts on what these add-ons detect and run
# (NodePoolManagementArgs.auto_repair, pulumi-alicloud 4.0.0).
REPAIR_ADDONS = ("ack-node-problem-detector", "node-lifecycle-controller")


def node_pool_repair(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT037: every node pool is a managed pool with auto repair,
    on a cluster that installs the add-ons repair needs."""
    clusters = {r.name: r for r in of_types(plan, (CLUSTER,))}
    installed: dict[str, set[str]] = {
        name: {str(a.get("name")) for a in as_list(r.inputs.get("addons")) if isinstance(a, dict)}
        for name, r in clusters.items()
    }
    for addon in of_types(plan, ("cs.KubernetesAddon",)):
        installed.setdefault(str(referenced(addon.inputs.get("clusterId"))), set()).add(str(addon.inputs.get("name")))
    for pool in of_types(plan, (NODE_POOL,)):
        management = pool.inputs.get("management") or {}
        if (
            not isinstance(management, dict)
            or management.get("enable") is not True
            or management.get("autoRepair") is not True
        ):
            yield (
                pool.name,
                (
                    f"management is {_management_shown(management)}: a node whose "
                    "kubelet, runtime or GPU fails stays in the pool and stalls the job;"
                    " set management {enable: true, autoRepair: true}"
                ),
            )
            continue
        cluster = referenced(pool.inputs.get("clusterId"))
        if cluster in clusters:
            missing = [a for a in REPAIR_ADDONS if a not in installed.get(cluster, set())]
            if missing:
                yield (
                    pool.name,
                    f"auto repair is on but cluster {cluster} does not install "
                    f"{', '.join(missing)}, which repair needs: add them to its addons",
                )


def _management_shown(management: Any) -> str:
    if not isinstance(management, dict) or not management:
        return "not set"
    return ", ".join(f"{key}={management.get(key)!r}" for key in ("enable", "autoRepair"))


def images_pinned(plan: Plan) -> Iterator[tuple[str, str]]:
    """AIT038: every Deployment's container images are pinned by digest (a tag can be moved to other content)."""
    for r in of_types(plan, (DEPLOYMENT,)):
        containers = _get(r.inputs, "spec", "template", "spec", "containers")
        for container in as_list(containers):
            image = container.get("image") if isinstance(container, dict) else None
            if isinstance(image, str) and not DIGEST_RE.search(image):
                yield (
                    r.name,
                    (
                        f"container {container.get('name')!r} runs image {image!r}, a mutable tag: whoever controls "
                        "the registry can change what the cluster runs;"
                        " pin it as <image>@sha256:<64 hex> (kubernetes.images.kueue, .trainer or .jobset; "
                        "kubernetes.operator_image on the legacy engine), "
                        "from a registry the cluster reaches (ACR)"
                    ),
                )


def node_pool_public_ip(pool: PlannedResource) -> Iterator[str]:
    """AIT001 for a node pool: a bound EIP is a public address too (``scalingConfig.isBondEip``)."""
    if _get(pool.inputs, "scalingConfig", "isBondEip") is True:
        yield "scalingConfig.isBondEip=true binds an EIP to every node; keep it false and use the NAT gateway"


def _get(inputs: dict[str, Any], *path: str) -> Any:
    value: Any = inputs
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


RULES: tuple[Rule, ...] = (
    Rule(
        "AIT033",
        "error",
        "the ACK API server is private (a public one needs a reasoned skip)",
        api_server_private,
        rationale=(
            "an API server on the internet is one leaked kubeconfig from "
            "the whole cluster; slb_internet_enabled defaults to true"
            " (pulumi-alicloud 4.0.0 cs.ManagedKubernetes docstring), and "
            "the only restriction ACK documents is the access control of the"
            " 6443 listener on the CLB it creates "
            "(https://www.alibabacloud.com/help/en/ack/cluster-access-control), which no"
            " pulumi-alicloud 4.0.0 argument sets; docs/sources/security-and-data-safety.md §7 rule 8 (no internet "
            "ingress) applied to the control plane"
        ),
        fix=(
            "set slbInternetEnabled false (and endpointType private) "
            "and reach the API server from the VPC or the login node;"
            " network.admin_cidr does not restrict it (the API cannot): "
            "a public endpoint needs its CLB listener's access control"
            " set by hand and guardrails.skip {rule: AIT033, reason: …}"
        ),
        references=(8,),
    ),
    Rule(
        "AIT034",
        "error",
        "ACK API-server audit logging is on",
        audit_log,
        rationale=(
            "without audit logs nobody can say who read a Secret or deleted a volume; "
            "cs.ManagedKubernetes audit_log_config (SDK 4.0.0); docs/sources/security-and-data-safety.md "
            "§7 rule 27 (an audit record of changes) applied to the cluster"
        ),
        fix="set auditLogConfig {enabled: true} (optionally slsProjectName) on the cluster",
        references=(27,),
    ),
    Rule(
        "AIT035",
        "error",
        "ACK node pools run as the plan's own ECS-only role with the plan's own policies",
        node_pool_role,
        rationale=(
            "without ramRoleName the nodes use ACK's shared worker "
            "role, whose policies nobody reviews; a node role another"
            " principal can assume or that holds system policies "
            "widens what one compromised pod can reach; CIS 1.15/1.16"
        ),
        fix=(
            "create a ram.Role trusting only ecs.aliyuncs.com, attach only the "
            "plan's Custom policies, and set ramRoleName on every cs.NodePool"
        ),
        references=(14,),
    ),
    Rule(
        "AIT036",
        "error",
        "Kubernetes volumes retain their data",
        volumes_retained,
        rationale=(
            "a Delete reclaim policy removes the data behind a volume when its claim is deleted (Kubernetes persistent "
            "volumes, Reclaiming); the default for provisioned volumes is Delete"
        ),
        fix=(
            "set spec.persistentVolumeReclaimPolicy Retain on every "
            "PersistentVolume and reclaimPolicy Retain on StorageClasses"
        ),
        references=(1,),
    ),
    Rule(
        "AIT037",
        "warning",
        "ACK node pools repair their nodes (managed node pool, auto repair)",
        node_pool_repair,
        rationale=(
            "without auto repair a NotReady or GPU-faulty node stays "
            "in the pool and a multi-node job waits on it; CKV_ALI_31;"
            " ACK auto repair needs ack-node-problem-detector and "
            "node-lifecycle-controller (cs.NodePool management, SDK 4.0.0)"
        ),
        fix=(
            "set management {enable: true, autoRepair: true} on every "
            "cs.NodePool and install both add-ons on the cluster"
        ),
    ),
    Rule(
        "AIT038",
        "warning",
        "cluster workloads run images pinned by digest",
        images_pinned,
        rationale=(
            "a tag is a pointer the registry owner can move: the job engine and Kueue run cluster-wide with RBAC "
            "over pods and jobs, so what they run should be fixed by content (image digest, OCI image spec); Kueue "
            "v0.19.2, Kubeflow Trainer v2.3.0, JobSet v0.12.0 and the training operator v1.9.0 are published by tag "
            "in their release manifests, so aitrain cannot ship a digest it has not seen"
        ),
        fix=(
            "copy each controller image to your registry (ACR), read its digest, and set kubernetes.images.kueue, "
            ".trainer and .jobset (kubernetes.operator_image on the legacy engine) to <registry>/<repo>@sha256:<digest>"
        ),
    ),
)
