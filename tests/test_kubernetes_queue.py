"""Kueue in the kubernetes-training plan: the vendored install, its configuration, the queues, and Trainer's runtime,
each as the plan records it (what `pulumi up` would send), validated against the vendored CRDs."""

from __future__ import annotations

import hashlib

import pytest
import yaml

from blueprints.catalog.engines import KUEUE_BUNDLE, TRAINER_BUNDLE
from blueprints.components.job_queue import CONFIG_HASH_ANNOTATION, CONFIG_KEY
from blueprints.components.vendored import DATA, bundle
from blueprints.testing import offline_plan
from tests.crdschema import crd_validator

PRESET = "kubernetes-training"
QUEUE = "kubernetes-training-queue"
UNIT = "kubernetes-training-workloads"
KUEUE_FILE = DATA / KUEUE_BUNDLE
TRAINER_FILE = DATA / TRAINER_BUNDLE


@pytest.fixture(scope="module")
def k8s_plan():
    return offline_plan(PRESET)


def one(plan, name):
    (resource,) = [r for r in plan.resources if r.name == name]
    return resource


def of_group(plan, group):
    return [r for r in plan.resources if r.type.startswith(f"kubernetes:{group}/")]


def kueue_config(plan) -> dict:
    configmap = one(plan, f"{QUEUE}-kueue-configmap-kueue-manager-config")
    return yaml.safe_load(configmap.inputs["data"][CONFIG_KEY])


def test_the_vendored_installs_are_the_files_their_source_notes_hash():
    for path in (KUEUE_FILE, TRAINER_FILE):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert f"sha256 {digest}" in (path.parent / "SOURCE.md").read_text(encoding="utf-8"), path
    images = {
        c["image"]
        for path in (KUEUE_BUNDLE, TRAINER_BUNDLE)
        for o in bundle(path)
        if o["kind"] == "Deployment"
        for c in o["spec"]["template"]["spec"]["containers"]
    }
    assert images == {
        "registry.k8s.io/kueue/kueue:v0.19.2",
        "registry.k8s.io/jobset/jobset:v0.12.0",
        "ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.3.0",
    }


def test_every_kueue_object_is_installed_once_and_crds_outlive_the_stack(k8s_plan):
    installed = [r for r in k8s_plan.resources if r.name.startswith(f"{QUEUE}-kueue-")]
    assert len(installed) == len(bundle(KUEUE_BUNDLE)) == 79
    assert {r.parent for r in installed} == {QUEUE} and {r.provider for r in installed} == {f"{UNIT}-kubeconfig"}
    retained = {r.inputs["kind"] for r in installed if r.retain_on_delete}
    assert retained == {"CustomResourceDefinition"}
    # Kueue's cert controller fills the CA bundles and its webhook secret: Pulumi must not take them back.
    assert one(k8s_plan, f"{QUEUE}-kueue-secret-kueue-webhook-server-cert").ignore_changes == ("data",)
    assert one(k8s_plan, f"{QUEUE}-kueue-apiservice-v1beta2.visibility.kueue.x-k8s.io").ignore_changes == (
        "spec.caBundle",
    )
    converted = one(k8s_plan, f"{QUEUE}-kueue-customresourcedefinition-clusterqueues.kueue.x-k8s.io")
    assert converted.ignore_changes == ("spec.conversion.webhook.clientConfig.caBundle",)
    plain = one(k8s_plan, f"{QUEUE}-kueue-customresourcedefinition-topologies.kueue.x-k8s.io")
    assert plain.ignore_changes == ()


def test_the_queue_component_registers_its_kueue_version(k8s_plan):
    # A component that never registers its outputs stays "creating" in the engine's view of the stack.
    component = one(k8s_plan, QUEUE)
    assert component.type == "aitrain:kubernetes:JobQueue"
    assert component.registered_outputs == ("kueue_version",)
    assert k8s_plan.outputs["kueue_version"] == "v0.19.2"


def test_kueue_admits_all_or_nothing_and_manages_every_job_of_the_jobs_namespace(k8s_plan):
    config = kueue_config(k8s_plan)
    ready = config["waitForPodsReady"]
    assert ready["timeout"] == "30m" and ready["blockAdmission"] is False
    assert config["manageJobsWithoutQueueName"] is True
    assert config["managedJobsNamespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "training"}}
    assert set(config["integrations"]["frameworks"]) == {
        "batch/job",
        "jobset.x-k8s.io/jobset",
        "kubeflow.org/pytorchjob",
        "trainer.kubeflow.org/trainjob",
    }
    assert "aliyun/erdma" in config["resources"]["excludeResourcePrefixes"]


def test_a_changed_configuration_rolls_kueues_controller():
    def controller(plan):
        deployment = one(plan, f"{QUEUE}-kueue-deployment-kueue-controller-manager").inputs
        return deployment["spec"]["template"]["metadata"]["annotations"][CONFIG_HASH_ANNOTATION]

    base = offline_plan(PRESET)
    longer = offline_plan(PRESET, overrides={"queues.pods_ready_timeout_minutes": 45})
    assert kueue_config(longer)["waitForPodsReady"]["timeout"] == "45m"
    for plan in (base, longer):
        text = one(plan, f"{QUEUE}-kueue-configmap-kueue-manager-config").inputs["data"][CONFIG_KEY]
        assert controller(plan) == hashlib.sha256(text.encode()).hexdigest()
    assert controller(base) != controller(longer)


def test_the_controller_image_can_come_from_your_own_registry():
    mirror = "registry.cn-shanghai.aliyuncs.com/team/kueue@sha256:" + "a" * 64
    plan = offline_plan(PRESET, overrides={"kubernetes.images.kueue": mirror})
    deployment = one(plan, f"{QUEUE}-kueue-deployment-kueue-controller-manager").inputs
    assert [c["image"] for c in deployment["spec"]["template"]["spec"]["containers"]] == [mirror]


def test_the_queues_are_the_profiles_teams_and_wait_for_kueue(k8s_plan):
    queues = of_group(k8s_plan, "kueue.x-k8s.io")
    assert sorted((r.inputs["kind"], r.inputs["metadata"]["name"]) for r in queues) == [
        ("ClusterQueue", "kubernetes-training-llm"),
        ("ClusterQueue", "kubernetes-training-vision"),
        ("Cohort", "kubernetes-training"),
        ("LocalQueue", "llm"),
        ("LocalQueue", "vision"),
        ("ResourceFlavor", "kubernetes-training-gpu-pool"),
        ("WorkloadPriorityClass", "normal"),
    ]
    crds = {f"{QUEUE}-kueue-customresourcedefinition-{n}.kueue.x-k8s.io" for n in ("clusterqueues", "localqueues")}
    for r in queues:
        # Kueue's webhooks validate these objects: its controller must serve them, and the CRDs must exist.
        assert f"{QUEUE}-kueue-deployment-kueue-controller-manager" in r.depends_on and crds <= set(r.depends_on)
        assert r.parent == QUEUE and r.provider == f"{UNIT}-kubeconfig"
    gpus = {
        r.inputs["metadata"]["name"]: {
            q["name"]: q["nominalQuota"] for q in r.inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
        }["nvidia.com/gpu"]
        for r in queues
        if r.inputs["kind"] in ("ClusterQueue", "Cohort")
    }
    assert gpus == {"kubernetes-training-llm": "32", "kubernetes-training-vision": "32", "kubernetes-training": "0"}


@pytest.mark.parametrize("kind", ["ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass"])
def test_every_planned_queue_object_validates_against_kueues_crd(k8s_plan, kind):
    validate = crd_validator(KUEUE_FILE, kind, "v1beta2")
    planned = [r.inputs for r in of_group(k8s_plan, "kueue.x-k8s.io") if r.inputs["kind"] == kind]
    assert planned
    for manifest in planned:
        validate.validate(manifest)


def test_the_runtime_is_installed_after_trainer_and_validates_against_its_crd(k8s_plan):
    (runtime,) = of_group(k8s_plan, "trainer.kubeflow.org")
    assert runtime.name == f"{UNIT}-runtime-aitrain-torch" and runtime.inputs["metadata"]["namespace"] == "training"
    assert {f"{UNIT}-trainer-deployment-kubeflow-trainer-controller-manager", f"{UNIT}-namespace"} <= set(
        runtime.depends_on
    )
    assert f"{UNIT}-trainer-customresourcedefinition-trainingruntimes.trainer.kubeflow.org" in runtime.depends_on
    crd_validator(TRAINER_FILE, "TrainingRuntime", "v1alpha1").validate(runtime.inputs)
    assert k8s_plan.outputs["training_runtime"] == "aitrain-torch" == runtime.inputs["metadata"]["name"]


def test_the_outputs_name_each_teams_queues_and_no_default_team_when_there_are_two(k8s_plan):
    outputs = k8s_plan.outputs
    assert outputs["job_api"] == "trainer.kubeflow.org/v1alpha1" and outputs["kueue_version"] == "v0.19.2"
    assert outputs["queues"] == {
        team: {
            "local_queue": team,
            "cluster_queue": f"kubernetes-training-{team}",
            "gpus": 32,
            "borrowing_limit_gpus": None,
            "priority_class": "normal",
        }
        for team in ("llm", "vision")
    }
    assert outputs["default_team"] is None
    single = offline_plan(PRESET, overrides={"queues.teams": []}).outputs
    assert single["default_team"] == "default" and single["queues"]["default"]["gpus"] == 64


def test_the_plan_summary_shows_engine_queues_and_admission(k8s_plan):
    summary = k8s_plan.summary
    assert (
        summary["job_engine"] == "Kubeflow Trainer v2.3.0 with JobSet v0.12.0 (TrainJob trainer.kubeflow.org/v1alpha1)"
    )
    assert summary["queues"] == (
        "llm: 32 GPUs (LocalQueue llm → ClusterQueue kubernetes-training-llm), borrows without limit, priority normal "
        "(100); vision: 32 GPUs (LocalQueue vision → ClusterQueue kubernetes-training-vision), borrows without limit, "
        "priority normal (100)"
    )
    assert summary["queueing"].startswith("Kueue v0.19.2: cohort kubernetes-training of 64 GPUs (0 shared")
    assert "within 30 min" in summary["admission"] and "reclaimWithinCohort Any" in summary["admission"]
    assert "Topology-aware scheduling is not configured" in summary["topology"]
