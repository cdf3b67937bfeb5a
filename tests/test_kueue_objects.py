"""The Kueue objects of the kubernetes-pool queues: every one valid against its vendored v1beta2 CRD (strictly), the
quotas adding up to exactly the pool, the manager configuration set as chosen, and the plan's summary."""

from __future__ import annotations

import datetime as dt
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from blueprints import architectures
from blueprints.architectures.kubernetes_pool import kueue as kq
from blueprints.architectures.kubernetes_pool.queues import QueueSettings
from blueprints.catalog import load_catalog
from blueprints.components.kubernetes_cluster import GPU_POOL_LABEL, GPU_TAINT
from blueprints.profile.stackconfig import load_preset, merge
from tests.crdschema import crd_validator

BUNDLE = Path(kq.__file__).parents[2] / "data" / "kueue" / "kueue-v0.19.2" / "kueue.yaml"
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DOCS = [d for d in yaml.load_all(BUNDLE.read_text(encoding="utf-8"), Loader=LOADER) if d]
CATALOG = load_catalog()
# The preset without its own queues section: each test gives the section it is about (None: none at all).
PRESET = {k: v for k, v in load_preset("kubernetes-training").items() if k != "queues"}

TWO_TEAMS = {
    "teams": [{"name": "vision", "gpus": 24, "borrow_gpus": 8, "priority": "high"}, {"name": "nlp", "gpus": 32}],
    "priorities": {"high": 1000, "normal": 100},
}
THREE_TEAMS = {
    "teams": [
        {"name": "vision", "gpus": 20, "borrow_gpus": 12},
        {"name": "nlp", "gpus": 20, "priority": "urgent"},
        {"name": "speech", "gpus": 12, "borrow_gpus": 20, "priority": "batch"},
    ],
    "priorities": {"urgent": 10000, "normal": 100, "batch": 1},
    "pods_ready_timeout_minutes": 45,
}
PROFILES = {"default": None, "two-teams": TWO_TEAMS, "three-teams": THREE_TEAMS}


KINDS = ("WorkloadPriorityClass", "Topology", "ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue")


def test_the_crds_serve_v1beta2_as_their_storage_version() -> None:
    for kind in KINDS:
        (crd,) = [d for d in DOCS if d["kind"] == "CustomResourceDefinition" and d["spec"]["names"]["kind"] == kind]
        (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1beta2"]
        assert version["served"] and version["storage"], kind


def validate(manifest: dict[str, Any]) -> None:
    """Strictly against the vendored CRD of its kind at v1beta2 (tests/crdschema.py: unknown fields rejected)."""
    assert manifest["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    crd_validator(BUNDLE, manifest["kind"], "v1beta2").validate(manifest)


def profile_of(queues: dict[str, Any] | None) -> Any:
    data = PRESET if queues is None else merge(PRESET, {"queues": queues})
    return architectures.parse(data, catalog=CATALOG, today=dt.date(2026, 12, 1))


def objects_of(profile: Any, topology: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The objects as the stack builds them: the instance type from the catalog, the GPU pool's label and taint."""
    instance = CATALOG.instance_types[profile.compute.instance_type]
    return kq.kueue_objects(
        profile_name=profile.name,
        namespace=profile.kubernetes.namespace,
        gpus_per_node=instance.gpu_count,
        node_vcpus=instance.vcpus,
        node_memory_gib=instance.memory_gib,
        max_nodes=profile.compute.max_nodes,
        node_labels=dict([GPU_POOL_LABEL]),
        node_taint=dict(zip(("key", "value", "effect"), GPU_TAINT, strict=True)),
        queues=profile.queues,
        topology=topology,
    )


def quantity(text: str) -> Fraction:
    """A Kubernetes quantity as a number (the suffixes this module writes, and plain numbers)."""
    match = re.fullmatch(r"(\d+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?", text)
    assert match, text
    scale = {
        None: 1,
        "m": Fraction(1, 1000),
        **{s: 1000 ** (i + 1) for i, s in enumerate("kMGTPE")},
        **{s: 1024 ** (i + 1) for i, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))},
    }[match.group(2)]
    return int(match.group(1)) * Fraction(scale)


def quota_totals(objects: list[dict[str, Any]]) -> dict[str, Fraction]:
    """Sum of nominal quotas per resource over every ClusterQueue and the Cohort."""
    totals: dict[str, Fraction] = {}
    for obj in objects:
        if obj["kind"] in ("ClusterQueue", "Cohort"):
            for group in obj["spec"]["resourceGroups"]:
                for flavor in group["flavors"]:
                    for resource in flavor["resources"]:
                        name = resource["name"]
                        totals[name] = totals.get(name, Fraction(0)) + quantity(resource["nominalQuota"])
    return totals


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


@pytest.mark.parametrize("name", PROFILES)
def test_every_object_validates_against_its_vendored_crd(name: str) -> None:
    objects = objects_of(profile_of(PROFILES[name]))
    teams = len((PROFILES[name] or {}).get("teams", ())) or 1
    kinds = [o["kind"] for o in objects]
    assert kinds.count("ClusterQueue") == kinds.count("LocalQueue") == teams
    assert kinds.count("Cohort") == kinds.count("ResourceFlavor") == 1 and "Topology" not in kinds
    for obj in objects:
        validate(obj)


def test_a_topology_when_given_validates_and_names_the_flavor() -> None:
    # The levels ACK documents for Lingjun nodes (widest first), the node's hostname last as Kueue requires.
    levels = ("alibabacloud.com/point-of-delivery", "alibabacloud.com/asw-id", "kubernetes.io/hostname")
    objects = objects_of(profile_of(TWO_TEAMS), topology=levels)
    (topology,) = by_kind(objects, "Topology")
    (flavor,) = by_kind(objects, "ResourceFlavor")
    assert [lvl["nodeLabel"] for lvl in topology["spec"]["levels"]] == list(levels)
    assert flavor["spec"]["topologyName"] == topology["metadata"]["name"] == "kubernetes-training-topology"
    assert [o["kind"] for o in objects].index("Topology") < [o["kind"] for o in objects].index("ResourceFlavor")
    for obj in objects:
        validate(obj)


@pytest.mark.parametrize(
    "kind, path, value",
    [
        ("ClusterQueue", ("spec", "cohort"), "kubernetes-training"),  # v1beta1's name for cohortName
        ("ClusterQueue", ("spec", "resourceGroups", 0, "flavors", 0, "resources", 2, "nominalQuotas"), "8"),
        ("ClusterQueue", ("spec", "resourceGroups", 0, "flavors", 0, "resources", 2, "nominalQuota"), "8 GPUs"),
        ("ClusterQueue", ("spec", "preemption", "reclaimWithinCohort"), "Always"),
        ("Cohort", ("spec", "parent"), "root"),
        ("ResourceFlavor", ("spec", "nodeTaint"), []),
        ("ResourceFlavor", ("spec", "nodeTaints", 0, "operator"), "Equal"),  # a toleration's field, not a taint's
        ("ResourceFlavor", ("spec", "nodeLabels", "aitrain.io/node-pool"), 1),
        ("LocalQueue", ("spec", "clusterqueue"), "x"),
        ("WorkloadPriorityClass", ("values",), 100),
        ("WorkloadPriorityClass", ("value",), "100"),
    ],
)
def test_the_validator_is_not_vacuous(kind: str, path: tuple[Any, ...], value: Any) -> None:
    (obj,) = by_kind(objects_of(profile_of(TWO_TEAMS)), kind)[:1]
    validate(obj)
    node: Any = obj
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        validate(obj)


@pytest.mark.parametrize("name", PROFILES)
def test_flavors_list_their_resources_as_coveredresources_does_and_no_quota_is_negative(name: str) -> None:
    # Kueue's webhook refuses a flavor whose resources differ from coveredResources, in order ("must match the name in
    # coveredResources", pkg/webhooks/clusterqueue_webhook.go@v0.19.2), and negative quantities; a CRD's CEL rules are
    # not checked by the JSON schema above.
    for obj in objects_of(profile_of(PROFILES[name])):
        for group in obj.get("spec", {}).get("resourceGroups", ()):
            for flavor in group["flavors"]:
                assert [r["name"] for r in flavor["resources"]] == group["coveredResources"]
                for resource in flavor["resources"]:
                    assert quantity(resource["nominalQuota"]) >= 0
                    assert "borrowingLimit" not in resource or resource["name"] == "nvidia.com/gpu"


def test_two_teams_get_their_queues_quotas_and_the_pools_rest_goes_to_the_cohort() -> None:
    objects = objects_of(profile_of(TWO_TEAMS))
    (cohort,) = by_kind(objects, "Cohort")
    queues = {o["metadata"]["name"]: o["spec"] for o in by_kind(objects, "ClusterQueue")}
    assert list(queues) == ["kubernetes-training-vision", "kubernetes-training-nlp"]
    vision = queues["kubernetes-training-vision"]
    assert vision["cohortName"] == cohort["metadata"]["name"] == "kubernetes-training"
    assert vision["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "training"}}
    assert vision["preemption"] == {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
    # 24 of 8-GPU, 128-vCPU, 1024-GiB nodes: 3 nodes' worth
    assert vision["resourceGroups"][0]["flavors"][0]["resources"] == [
        {"name": "cpu", "nominalQuota": "384"},
        {"name": "memory", "nominalQuota": "3Ti"},
        {"name": "nvidia.com/gpu", "nominalQuota": "24", "borrowingLimit": "8"},
    ]
    nlp = queues["kubernetes-training-nlp"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert nlp[2] == {"name": "nvidia.com/gpu", "nominalQuota": "32"}  # absent borrow_gpus: no limit, no field
    assert cohort["spec"]["resourceGroups"][0]["flavors"][0]["resources"] == [
        {"name": "cpu", "nominalQuota": "128"},
        {"name": "memory", "nominalQuota": "1Ti"},
        {"name": "nvidia.com/gpu", "nominalQuota": "8"},
    ]
    locals_ = by_kind(objects, "LocalQueue")
    assert [(o["metadata"]["namespace"], o["metadata"]["name"], o["spec"]["clusterQueue"]) for o in locals_] == [
        ("training", "vision", "kubernetes-training-vision"),
        ("training", "nlp", "kubernetes-training-nlp"),
    ]
    assert {o["metadata"]["name"]: o["value"] for o in by_kind(objects, "WorkloadPriorityClass")} == {
        "high": 1000,
        "normal": 100,
    }


def test_the_default_team_is_a_local_queue_named_default_holding_the_whole_pool() -> None:
    objects = objects_of(profile_of(None))
    (local,) = by_kind(objects, "LocalQueue")
    (queue,) = by_kind(objects, "ClusterQueue")
    (cohort,) = by_kind(objects, "Cohort")
    assert (local["metadata"]["name"], local["spec"]["clusterQueue"]) == ("default", "kubernetes-training-default")
    assert queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2] == {
        "name": "nvidia.com/gpu",
        "nominalQuota": "64",
    }
    assert [quantity(r["nominalQuota"]) for r in cohort["spec"]["resourceGroups"][0]["flavors"][0]["resources"]] == [
        0,
        0,
        0,
    ]


def test_the_flavor_is_the_gpu_pools_label_and_taint_which_launched_jobs_tolerate() -> None:
    (flavor,) = by_kind(objects_of(profile_of(None)), "ResourceFlavor")
    assert flavor["metadata"]["name"] == "kubernetes-training-gpu-pool"
    assert flavor["spec"]["nodeLabels"] == {"aitrain.io/node-pool": "gpu"}
    assert flavor["spec"]["nodeTaints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]


def test_objects_are_deterministic_and_each_local_queue_follows_its_cluster_queue() -> None:
    profile = profile_of(THREE_TEAMS)
    first, second = objects_of(profile), objects_of(profile)
    assert first == second
    names = [(o["kind"], o["metadata"]["name"]) for o in first]
    assert names[:3] == [
        ("WorkloadPriorityClass", "batch"),
        ("WorkloadPriorityClass", "normal"),
        ("WorkloadPriorityClass", "urgent"),
    ]
    for local in by_kind(first, "LocalQueue"):
        assert names.index(("ClusterQueue", local["spec"]["clusterQueue"])) < names.index(
            ("LocalQueue", local["metadata"]["name"])
        )


@settings(max_examples=300, deadline=None)
@given(
    gpus_per_node=st.integers(1, 16),
    max_nodes=st.integers(1, 1000),
    node_vcpus=st.integers(1, 256),
    node_memory_gib=st.sampled_from([7.5, 15.0, 30.0, 62.0, 188.0, 1024.0, 1800.0, 2048.0]),
    cuts=st.lists(st.floats(0, 1, allow_nan=False), min_size=0, max_size=8),
)
def test_team_quotas_and_the_cohorts_rest_are_exactly_the_pool(
    gpus_per_node: int, max_nodes: int, node_vcpus: int, node_memory_gib: float, cuts: list[float]
) -> None:
    pool = max_nodes * gpus_per_node
    # Teams with at least 1 GPU each, summing to at most the pool.
    gpus = [max(1, int(c * pool / max(len(cuts), 1))) for c in cuts][:pool]
    teams = [{"name": f"t{i}", "gpus": g} for i, g in enumerate(gpus)]
    queues = QueueSettings.model_validate({"teams": teams})
    objects = kq.kueue_objects(
        profile_name="pool",
        namespace="training",
        gpus_per_node=gpus_per_node,
        node_vcpus=node_vcpus,
        node_memory_gib=node_memory_gib,
        max_nodes=max_nodes,
        node_labels={"aitrain.io/node-pool": "gpu"},
        node_taint={"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
        queues=queues,
        topology=None,
    )
    totals = quota_totals(objects)
    assert totals["nvidia.com/gpu"] == pool
    assert totals["cpu"] == max_nodes * node_vcpus
    assert totals["memory"] == max_nodes * Fraction(str(node_memory_gib)) * 1024**3
    for queue, team in zip(by_kind(objects, "ClusterQueue"), queues.teams_for(pool), strict=True):
        resources = queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
        assert quantity(resources[2]["nominalQuota"]) == team.quota
        # CPU in proportion to the team's share of nodes, short of it by less than a millicore (rounded down)
        share = Fraction(team.quota, gpus_per_node) * node_vcpus
        assert 0 <= share - quantity(resources[0]["nominalQuota"]) < Fraction(1, 1000)
    (cohort,) = by_kind(objects, "Cohort")
    assert all(quantity(r["nominalQuota"]) >= 0 for r in cohort["spec"]["resourceGroups"][0]["flavors"][0]["resources"])


@pytest.mark.parametrize(
    "helper, value, text",
    [
        (kq.decimal_quantity, 0, "0"),
        (kq.decimal_quantity, 64, "64"),
        (kq.decimal_quantity, 1000, "1k"),
        (kq.decimal_quantity, 8000, "8k"),
        (kq.decimal_quantity, 1500, "1500"),
        (kq.millicores, 96000, "96"),
        (kq.millicores, 96500, "96500m"),
        (kq.millicores, 1_000_000, "1k"),
        (kq.binary_quantity, 0, "0"),
        (kq.binary_quantity, 7680, "7680Mi"),
        (kq.binary_quantity, 1024, "1Gi"),
        (kq.binary_quantity, 1536 * 1024, "1536Gi"),
        (kq.binary_quantity, 3 * 1024 * 1024, "3Ti"),
    ],
)
def test_quantities_are_written_in_kubernetes_canonical_form(helper: Any, value: int, text: str) -> None:
    assert helper(value) == text


def vendored_config_text() -> str:
    (config_map,) = [d for d in DOCS if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "kueue-manager-config"]
    text: str = config_map["data"]["controller_manager_config.yaml"]
    return text


def test_the_manager_config_is_set_for_the_pool_and_keeps_upstreams_other_keys() -> None:
    upstream = yaml.safe_load(vendored_config_text())
    assert "waitForPodsReady" not in upstream and "resources" not in upstream  # commented out upstream
    profile = profile_of(THREE_TEAMS)
    text = kq.configure_manager(vendored_config_text(), jobs_namespace="training", queues=profile.queues)
    config = yaml.safe_load(text)
    assert config["apiVersion"] == "config.kueue.x-k8s.io/v1beta2" and config["kind"] == "Configuration"
    assert config["waitForPodsReady"] == {
        "timeout": "45m",
        "blockAdmission": False,
        "requeuingStrategy": {
            "timestamp": "Eviction",
            "backoffLimitCount": 5,
            "backoffBaseSeconds": 60,
            "backoffMaxSeconds": 3600,
        },
    }
    assert config["manageJobsWithoutQueueName"] is True
    assert config["managedJobsNamespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "training"}}
    frameworks = config["integrations"]["frameworks"]
    assert {"trainer.kubeflow.org/trainjob", "kubeflow.org/pytorchjob"} <= set(frameworks)
    assert not {"pod", "deployment", "statefulset"} & set(frameworks)
    assert config["resources"] == {"excludeResourcePrefixes": ["aliyun/erdma"]}
    for key in ("health", "metrics", "webhook", "leaderElection", "controller", "clientConnection"):
        assert config[key] == upstream[key], key
    assert text == kq.configure_manager(vendored_config_text(), jobs_namespace="training", queues=profile.queues)


def test_the_manager_config_refuses_text_that_is_not_a_kueue_configuration() -> None:
    with pytest.raises(ValueError, match="not a Kueue Configuration"):
        kq.configure_manager("apiVersion: v1\nkind: ConfigMap\n", jobs_namespace="training", queues=QueueSettings())


def test_the_summary_names_each_teams_queues_quota_and_priority_and_why_there_is_no_topology() -> None:
    profile = profile_of(TWO_TEAMS)
    summary = kq.queue_summary(
        profile_name=profile.name,
        namespace="training",
        gpus_per_node=8,
        max_nodes=8,
        queues=profile.queues,
        topology=kq.ECS_POOL_TOPOLOGY,
    )
    assert summary["teams"] == [
        {
            "team": "vision",
            "local_queue": "vision",
            "cluster_queue": "kubernetes-training-vision",
            "gpus": 24,
            "borrowing_limit_gpus": 8,
            "priority_class": "high",
            "priority_value": 1000,
        },
        {
            "team": "nlp",
            "local_queue": "nlp",
            "cluster_queue": "kubernetes-training-nlp",
            "gpus": 32,
            "borrowing_limit_gpus": None,
            "priority_class": "normal",
            "priority_value": 100,
        },
    ]
    assert (summary["namespace"], summary["pool_gpus"], summary["shared_gpus"], summary["default_team"]) == (
        "training",
        64,
        8,
        None,
    )
    assert summary["admission"]["pods_ready_timeout_minutes"] == 30
    assert summary["admission"]["jobs_without_queue"].startswith("suspended until they set kueue.x-k8s.io/queue-name")
    assert kq.ECS_POOL_TOPOLOGY.levels is None
    assert summary["topology"].startswith("Topology-aware scheduling is not configured")
    assert kq.ACK_TOPOLOGY_DOC in summary["topology"]
    default = kq.queue_summary(
        profile_name="p",
        namespace="training",
        gpus_per_node=8,
        max_nodes=2,
        queues=QueueSettings(),
        topology=kq.ECS_POOL_TOPOLOGY,
    )
    assert [(t["team"], t["gpus"]) for t in default["teams"]] == [("default", 16)]
    assert default["default_team"] == "default"
    assert default["admission"]["jobs_without_queue"] == "sent to LocalQueue default"
