"""`aitrain launch --kubernetes` on a Trainer v2 stack: the TrainJob it writes and the TrainingRuntime the stack
installs (both validated against the vendored CRDs), Kueue's labels, the team's quota, the CLI's refusals."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from blueprints.architectures import job_engines
from blueprints.bootstrap import SHUTDOWN_SECONDS, nccl_env
from blueprints.cli.main import app
from blueprints.core.errors import UserInputError
from blueprints.launch import kubernetes as lk
from blueprints.launch import kubernetes_outputs as lko
from blueprints.launch import pytorchjob as lp
from blueprints.launch import torchrun as lc
from blueprints.launch import trainjob as lt
from tests.crdschema import crd_validator
from tests.fake_kubectl import install as fake_kubectl_on_path

runner = CliRunner()
RUN = "20261201T093000Z"
IMAGE = "registry.cn-wulanchabu.aliyuncs.com/team/train:2026-11"
ENGINES = job_engines()
DATA = Path(__file__).parent / "data" / "launch"
BUNDLE_DIR = Path(lk.__file__).parents[1] / "data" / "kubeflow" / "trainer-v2.3.0"
BUNDLE = BUNDLE_DIR / "trainer.yaml"
TRAINER_MIRROR = Path("/work/.mirror/kubeflow+trainer/repo")
JOBSET_MIRROR = Path("/work/.mirror/kubernetes-sigs+jobset/repo")
KUEUE_MIRROR = Path("/work/.mirror/kubernetes-sigs+kueue/repo")
# Trainer v2.3.0 pkg/constants/constants.go TorchRunReservedEnvNames: the torch plugin sets them; a TrainJob must not.
RESERVED = {"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"}
QUEUES = {
    "ml": {"local_queue": "ml", "cluster_queue": "ml", "gpus": 16, "borrowing_limit_gpus": 8, "priority_class": "high"},
    "research": {
        "local_queue": "research-lq",
        "cluster_queue": "research",
        "gpus": 8,
        "borrowing_limit_gpus": None,
        "priority_class": None,
    },
    "interns": {"local_queue": "interns", "cluster_queue": "interns", "gpus": 0, "borrowing_limit_gpus": 4},
}


def trainer_stack(**changes: Any) -> dict[str, Any]:
    """The llama stack's outputs as a Trainer v2 stack writes them (v1's operator key gone, Trainer's keys added)."""
    data = json.loads((DATA / "llama-erdma.json").read_text())
    del data["training_operator_version"]
    data.update(
        job_api="trainer.kubeflow.org/v1alpha1",
        trainer_version="v2.3.0",
        training_runtime="aitrain-torch",
        queues=json.loads(json.dumps(QUEUES)),
        default_team="ml",
    )
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def outputs_of(data: dict[str, Any]) -> lko.KubernetesOutputs:
    return lko.parse_kubernetes_outputs(data, "outputs.json", ENGINES)


def trainjob(data: dict[str, Any] | None = None, **kwargs: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"name": "llama-sft", "image": IMAGE, "run_id": RUN, "command": ["python", "train.py"]}
    return lt.build_trainjob(outputs_of(data or trainer_stack()), **{**args, **kwargs})


def runtime(fabric: str = "erdma", bucket: str | None = "llama-pretrain-data", gpus: int = 8) -> dict[str, Any]:
    return lt.torch_runtime(
        name=lt.RUNTIME_NAME,
        namespace="training",
        gpus_per_node=gpus,
        fabric=fabric,
        node_selector={"aitrain.io/node-pool": "gpu"},
        taint={"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
        shared_claim="llama-pretrain-shared",
        bucket_claim=bucket,
        labels={"app.kubernetes.io/managed-by": "aitrain"},
    )


def validate_trainjob(manifest: dict[str, Any]) -> None:
    crd_validator(BUNDLE, "TrainJob", "v1alpha1").validate(manifest)


def validate_runtime(manifest: dict[str, Any]) -> None:
    crd_validator(BUNDLE, "TrainingRuntime", "v1alpha1").validate(manifest)


def env_of(items: list[dict[str, str]]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in items}


def runtime_pod(manifest: dict[str, Any]) -> dict[str, Any]:
    (rjob,) = manifest["spec"]["template"]["spec"]["replicatedJobs"]
    pod: dict[str, Any] = rjob["template"]["spec"]["template"]["spec"]
    return pod


def upstream(mirror: Path, tag: str, path: str) -> str | None:
    """A file of an upstream release from its git mirror, where the snapshot is at hand (None elsewhere)."""
    if not mirror.exists():
        return None
    return subprocess.run(
        ["git", "-C", str(mirror), "show", f"{tag}:{path}"], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture(autouse=True)
def pinned_clock(monkeypatch):
    monkeypatch.setenv(lc.NOW_ENV, "2026-12-01T09:30:00Z")


@pytest.fixture
def fake_kubectl(tmp_path, monkeypatch):
    """A PATH holding only a fake `kubectl` (tests/fake_kubectl.py); returns the calls it recorded."""
    return fake_kubectl_on_path(tmp_path, monkeypatch, "trainjob.trainer.kubeflow.org/llama-sft created", "trainjobs")


# --- the vendored CRDs and the upstream facts -------------------------------------------------------------------------


def test_the_bundle_is_the_file_its_source_names():
    source = (BUNDLE_DIR / "SOURCE.md").read_text()
    digest = hashlib.sha256(BUNDLE.read_bytes()).hexdigest()
    assert digest in source and "v2.3.0" in source and "658725bdae5c7e3a0854d93ac6ff492e109a22ab" in source


def test_the_constants_are_upstreams():
    """Labels, names and the port, read from the releases' sources where the mirrors are at hand."""
    constants = upstream(TRAINER_MIRROR, "v2.3.0", "pkg/constants/constants.go")
    kueue = upstream(KUEUE_MIRROR, "v0.19.2", "pkg/controller/constants/constants.go")
    if constants is None or kueue is None:
        pytest.skip("the Trainer and Kueue mirrors are not on this machine")
    assert f'LabelTrainJobAncestor string = "{lt.ANCESTOR_LABEL}"' in constants
    assert f'AncestorTrainer string = "{lt.ANCESTOR_TRAINER}"' in constants
    assert f'Node string = "{lt.NODE}"' in constants
    assert f"ContainerTrainerPort int32 = {lt.TRAINER_PORT}" in constants
    for name in RESERVED:
        assert f'"{name}"' in constants
    assert f'QueueLabel = "{lt.QUEUE_LABEL}"' in kueue
    assert f'WorkloadPriorityClassLabel = "{lt.PRIORITY_LABEL}"' in kueue
    torch = upstream(TRAINER_MIRROR, "v2.3.0", "pkg/runtime/framework/plugins/torch/torch.go")
    assert torch is not None and '"%s-%s-0-0.%s", trainJob.Name, constants.Node, trainJob.Name' in torch
    placement = upstream(JOBSET_MIRROR, "v0.12.0", "pkg/util/placement/placement.go")
    assert (
        placement is not None and 'fmt.Sprintf("%s-%s-%s-%s", jobSet, replicatedJob, jobIndex, podIndex)' in placement
    )


def test_the_runtime_keeps_upstreams_torch_distributed_shape():
    """manifests/base/runtimes/torch_distributed.yaml @v2.3.0: the same replicated job, ancestor label, container
    name and ML policy; aitrain adds only pod settings."""
    text = upstream(TRAINER_MIRROR, "v2.3.0", "manifests/base/runtimes/torch_distributed.yaml")
    if text is None:
        pytest.skip("the Trainer mirror is not on this machine")
    theirs, ours = yaml.safe_load(text), runtime()
    assert ours["spec"]["mlPolicy"] == theirs["spec"]["mlPolicy"] == {"numNodes": 1, "torch": {}}
    (their_job,), (our_job,) = (m["spec"]["template"]["spec"]["replicatedJobs"] for m in (theirs, ours))
    assert our_job["name"] == their_job["name"] == "node"
    assert our_job["template"]["metadata"] == their_job["template"]["metadata"]
    their_container = their_job["template"]["spec"]["template"]["spec"]["containers"][0]
    assert runtime_pod(ours)["containers"][0]["name"] == their_container["name"]
    assert theirs["metadata"]["labels"].items() <= ours["metadata"]["labels"].items()


# --- the TrainingRuntime --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fabric", ["erdma", "roce", "tcp"])
@pytest.mark.parametrize("bucket", ["llama-pretrain-data", None])
@pytest.mark.parametrize("gpus", [1, 8])
def test_every_runtime_validates_and_carries_the_stacks_pod_settings(fabric, bucket, gpus):
    manifest = runtime(fabric, bucket, gpus)
    validate_runtime(manifest)
    assert manifest["apiVersion"] == "trainer.kubeflow.org/v1alpha1" and manifest["kind"] == "TrainingRuntime"
    assert manifest["metadata"] == {
        "name": "aitrain-torch",
        "namespace": "training",
        "labels": {"trainer.kubeflow.org/framework": "torch", "app.kubernetes.io/managed-by": "aitrain"},
    }
    assert "podGroupPolicy" not in manifest["spec"]  # all-or-nothing is Kueue's waitForPodsReady
    (rjob,) = manifest["spec"]["template"]["spec"]["replicatedJobs"]
    # Trainer's runtime webhook (pkg/webhooks/trainingruntime_webhook.go @v2.3.0): an ancestor job has replicas 1
    # and, for the trainer, a container named node.
    assert rjob["replicas"] == 1 and rjob["template"]["metadata"]["labels"] == {lt.ANCESTOR_LABEL: "trainer"}
    pod = runtime_pod(manifest)
    (container,) = pod["containers"]
    assert container["name"] == "node" and "image" not in container and "command" not in container
    assert env_of(container["env"]) == nccl_env(fabric)
    assert container["resources"] == {
        "limits": {"nvidia.com/gpu": gpus, **({"aliyun/erdma": 1} if fabric == "erdma" else {})}
    }
    assert pod.get("hostNetwork", False) == (fabric == "erdma")
    assert pod.get("dnsPolicy") == ("ClusterFirstWithHostNet" if fabric == "erdma" else None)
    assert pod["restartPolicy"] == "OnFailure" and pod["terminationGracePeriodSeconds"] == SHUTDOWN_SECONDS == 120
    assert pod["nodeSelector"] == {"aitrain.io/node-pool": "gpu"}
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule", "operator": "Equal"}
    ]
    assert {m["mountPath"]: m["name"] for m in container["volumeMounts"]} == {
        "/mnt/shared": "shared",
        "/dev/shm": "dshm",
        **({"/mnt/data": "data"} if bucket else {}),
    }
    claims = [v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"] if "persistentVolumeClaim" in v]
    assert claims == ["llama-pretrain-shared", *([bucket] if bucket else [])]


def test_the_runtime_is_deterministic_and_does_not_share_its_inputs():
    selector, taint, labels = {"aitrain.io/node-pool": "gpu"}, {"key": "k", "effect": "NoSchedule"}, {"a": "b"}
    args: dict[str, Any] = {
        "name": "r",
        "namespace": "n",
        "gpus_per_node": 8,
        "fabric": "tcp",
        "node_selector": selector,
        "taint": taint,
        "shared_claim": "s",
        "bucket_claim": None,
        "labels": labels,
    }
    first = lt.torch_runtime(**args)
    text = lk.render_job(first)
    selector["other"], taint["value"], labels["c"] = "x", "y", "d"
    assert lk.render_job(first) == text  # the manifest holds copies
    selector.pop("other"), taint.pop("value"), labels.pop("c")
    assert lk.render_job(lt.torch_runtime(**args)) == text
    assert runtime_pod(first)["tolerations"] == [{"key": "k", "effect": "NoSchedule", "operator": "Exists"}]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"gpus_per_node": 0}, "gpus_per_node must be a whole number, 1 or more (got 0)"),
        ({"gpus_per_node": True}, "gpus_per_node must be a whole number, 1 or more (got True)"),
        ({"fabric": "infiniband"}, "fabric must be one of 'erdma', 'roce', 'tcp' (got 'infiniband')"),
        ({"node_selector": {}}, "node_selector must not be empty: the runtime's pods run on the GPU node pool only"),
        ({"taint": {}}, "taint must have a key and an effect (got {})"),  # else a toleration of every taint
        ({"taint": {"key": "nvidia.com/gpu"}}, "taint must have a key and an effect (got {'key': 'nvidia.com/gpu'})"),
    ],
)
def test_the_runtime_refuses_what_would_misplace_its_pods(change, message):
    args: dict[str, Any] = {
        "name": "r",
        "namespace": "n",
        "gpus_per_node": 8,
        "fabric": "tcp",
        "node_selector": {"a": "b"},
        "taint": {"key": "k", "effect": "NoSchedule"},
        "shared_claim": "s",
        "bucket_claim": None,
        "labels": {},
    }
    with pytest.raises(ValueError) as caught:
        lt.torch_runtime(**{**args, **change})
    assert str(caught.value) == message


# --- the TrainJob ---------------------------------------------------------------------------------------------------


def test_the_llama_trainjob_in_the_default_teams_queue():
    job = trainjob(nodes=3)
    validate_trainjob(job)
    assert job["apiVersion"] == "trainer.kubeflow.org/v1alpha1" and job["kind"] == "TrainJob"
    assert job["metadata"] == {
        "name": "llama-sft",
        "namespace": "training",
        "labels": {
            "aitrain.io/run-id": RUN,
            "aitrain.io/profile": "llama-pretrain",
            "aitrain.io/team": "ml",
            "kueue.x-k8s.io/queue-name": "ml",
            "kueue.x-k8s.io/priority-class": "high",
        },
    }
    spec = job["spec"]
    assert spec["runtimeRef"] == {
        "name": "aitrain-torch",
        "apiGroup": "trainer.kubeflow.org",
        "kind": "TrainingRuntime",
    }
    trainer = spec["trainer"]
    assert trainer["image"] == IMAGE and trainer["command"] == ["torchrun", "train.py"]
    assert trainer["numNodes"] == 3
    assert trainer["numProcPerNode"] == 8
    assert trainer["resourcesPerNode"] == {"limits": {"nvidia.com/gpu": 8, "aliyun/erdma": 1}}
    assert env_of(trainer["env"]) == {
        "AITRAIN_RUN_ID": RUN,
        "AITRAIN_CHECKPOINT_DIR": f"/mnt/shared/.aitrain/checkpoints/{RUN}",
        "TORCH_ELASTIC_SHUTDOWN_TIMEOUT": "120",
        "PET_RDZV_BACKEND": "c10d",
        "PET_RDZV_ENDPOINT": "llama-sft-node-0-0.llama-sft:29500",
        "PET_RDZV_ID": RUN,
        "PET_MAX_RESTARTS": "3",
    }
    (patch,) = spec["runtimePatches"]
    assert patch["manager"] == "aitrain.io/launch"
    (rjob,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert rjob == {
        "name": "node",
        "template": {
            "spec": {
                "template": {
                    "metadata": {
                        "labels": {
                            "aitrain.io/run-id": RUN,
                            "aitrain.io/profile": "llama-pretrain",
                            "aitrain.io/team": "ml",
                        }
                    }
                }
            }
        },
    }


@pytest.mark.parametrize("fabric", ["erdma", "roce", "tcp"])
@pytest.mark.parametrize("bucket", [True, False])
@pytest.mark.parametrize("nodes", [1, 2, 4])
@pytest.mark.parametrize("team", ["research", None])
def test_every_trainjob_validates_against_the_crd(fabric, bucket, nodes, team):
    data = trainer_stack(fabric=fabric, bucket_volume_claim="llama-pretrain-data" if bucket else None)
    if team is None:  # the default team, with room for every node count here
        data["default_team"] = "research"
    job = trainjob(data, nodes=nodes, team=team)
    validate_trainjob(job)
    trainer = job["spec"]["trainer"]
    assert trainer["numNodes"] == nodes and trainer["numProcPerNode"] == 8
    assert ("aliyun/erdma" in trainer["resourcesPerNode"]["limits"]) == (fabric == "erdma")
    assert not RESERVED & set(env_of(trainer["env"]))  # Trainer's torch plugin rejects them
    labels = job["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/queue-name"] == "research-lq" and labels["aitrain.io/team"] == "research"
    assert "kueue.x-k8s.io/priority-class" not in labels  # research has no priority class


def test_the_trainjob_and_its_runtime_give_the_pods_what_the_pytorchjob_gave_them():
    """Trainer's merge (builder.go, trainingruntime.go @v2.3.0: the TrainJob's env upserted over the runtime's,
    resourcesPerNode merged per key, its image and command set) gives each pod the PyTorchJob's pod settings."""
    v1 = json.loads((DATA / "llama-erdma.json").read_text())
    v1_job = lp.build_job(outputs_of(v1), name="llama-sft", image=IMAGE, run_id=RUN, command=["python", "t.py"])
    v1_pod = v1_job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    job = trainjob(command=["python", "t.py"], nodes=3)
    pod = runtime_pod(runtime())
    (container,) = pod["containers"]
    merged_env = {**env_of(container["env"]), **env_of(job["spec"]["trainer"]["env"])}
    merged_limits = {**container["resources"]["limits"], **job["spec"]["trainer"]["resourcesPerNode"]["limits"]}
    (v1_container,) = v1_pod["containers"]
    assert env_of(v1_container["env"]).items() <= merged_env.items()
    assert merged_limits == v1_container["resources"]["limits"]
    assert job["spec"]["trainer"]["image"] == v1_container["image"]
    assert job["spec"]["trainer"]["command"] == v1_container["command"]
    assert container["volumeMounts"] == v1_container["volumeMounts"]
    for key in ("hostNetwork", "dnsPolicy", "nodeSelector", "tolerations", "volumes"):
        assert pod.get(key) == v1_pod.get(key), key
    assert pod["restartPolicy"] == v1_job["spec"]["pytorchReplicaSpecs"]["Master"]["restartPolicy"] == "OnFailure"
    pod_labels = job["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    assert v1_job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["metadata"]["labels"].items() <= (
        pod_labels["template"]["spec"]["template"]["metadata"]["labels"].items()
    )


@pytest.mark.parametrize(
    "path, value",
    [
        (("spec", "trainer", "numNodes"), "3"),
        (("spec", "trainer", "nodes"), 3),  # no such field
        (("spec", "runtimeRef"), {"kind": "TrainingRuntime"}),  # name is required
        (("spec", "trainer", "env", 0), {"name": "A", "valu": "b"}),
        (("spec", "runtimePatches", 0, "trainingRuntimeSpec", "mlPolicy"), {"numNodes": 2}),  # only template patches
        (("spec", "trainer", "numProcPerNode"), "auto"),  # an int32 in the TrainJob
    ],
)
def test_the_trainjob_validator_is_not_vacuous(path, value):
    job = trainjob(nodes=2)
    node: Any = job
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        validate_trainjob(job)


def test_a_trainjob_without_its_runtime_ref_is_invalid():
    job = trainjob(nodes=2)
    del job["spec"]["runtimeRef"]
    with pytest.raises(jsonschema.ValidationError, match="'runtimeRef' is a required property"):
        validate_trainjob(job)


@pytest.mark.parametrize(
    "path, value",
    [
        # Trainer v2.3.0's torch policy has no numProcPerNode (it is the TrainJob's spec.trainer.numProcPerNode).
        (("spec", "mlPolicy", "torch", "numProcPerNode"), 8),
        (
            ("spec", "template", "spec", "replicatedJobs", 0, "template", "spec", "template", "spec", "nodeSelectors"),
            {},
        ),
        (("spec", "template", "spec", "replicatedJobs", 0, "replicas"), "1"),
        (("spec", "podGroupPolicy", "gang"), {}),
    ],
)
def test_the_runtime_validator_is_not_vacuous(path, value):
    manifest = runtime()
    node: Any = manifest
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(node, dict) else node[key]
    node[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        validate_runtime(manifest)


def test_names_fit_every_pod_name_jobset_makes():
    """A 44-character name gives pod names <name>-node-0-<5 digits>-<5 random> of 63 characters (JobSet's webhook
    limit, a DNS-1035 label); 45 is refused before anything is built, and the default name is cut to 44."""
    assert lt.MAX_TRAINJOB_NAME == 44
    name = "a" * 44
    pod = f"{name}-node-0-99999-abcde"
    assert len(pod) == 63
    job = trainjob(name=name, nodes=1)
    validate_trainjob(job)
    assert env_of(job["spec"]["trainer"]["env"])["PET_RDZV_ENDPOINT"] == f"{name}-node-0-0.{name}:29500"
    with pytest.raises(UserInputError, match="must be 1–44 lowercase"):
        trainjob(name="a" * 45, nodes=1)
    assert len(lk.default_job_name("a" * 40, RUN, lt.MAX_TRAINJOB_NAME)) <= 44


# --- teams and quotas -----------------------------------------------------------------------------------------------


def test_a_team_can_use_its_quota_plus_what_it_may_borrow_and_no_more():
    assert trainjob(nodes=3)["spec"]["trainer"]["numNodes"] == 3  # ml: 16 + 8 = 24 = 3 × 8
    with pytest.raises(UserInputError) as caught:
        trainjob(nodes=4)
    (problem,) = caught.value.problems
    assert problem.path == "--nodes" and problem.value == 4
    assert problem.message == (
        "4 nodes × 8 GPUs = 32 GPUs is more than team 'ml' can ever be admitted with: its ClusterQueue 'ml' has a "
        "quota of 16 GPUs and may borrow 8 more (24 in all); use --nodes 3 or fewer"
    )
    # research may borrow without limit: the pool (4 nodes × 8 = 32 GPUs) bounds it.
    assert trainjob(team="research", nodes=4)["spec"]["trainer"]["numNodes"] == 4
    with pytest.raises(UserInputError, match="cannot run even one node of 8 GPUs"):
        trainjob(team="interns", nodes=1)  # 0 + 4 GPUs


def test_the_pools_max_gpus_bounds_a_team_without_a_borrowing_limit():
    outputs = outputs_of(trainer_stack())
    queue = lko.TeamQueue("x", "x", "x", 8, None, None)
    lt.check_quota(outputs, queue, 4)  # 32 GPUs: the whole pool
    with pytest.raises(UserInputError, match="may borrow without limit, up to the pool's 32 GPUs"):
        lt.check_quota(outputs, queue, 5)


def test_a_v1_stack_has_no_team_queues_and_builds_no_trainjob():
    legacy = outputs_of(json.loads((DATA / "llama-erdma.json").read_text()))
    assert legacy.trainer is None
    for team, value in (("ml", "ml"), (None, "")):
        with pytest.raises(UserInputError) as caught:
            lt.team_queue(legacy, team)
        (problem,) = caught.value.problems
        assert (problem.path, problem.value) == ("--team", value)
        assert problem.message.startswith(
            "teams and their Kueue queues need a Kubeflow Trainer stack, and outputs.json runs the legacy training "
            "operator (job_api kubeflow.org/v1, profile setting kubernetes.job_engine: training-operator-v1)"
        )
    # The launch builds a PyTorchJob for such a stack; asking it for a TrainJob is a programming error, not a team's.
    with pytest.raises(ValueError) as built:
        lt.build_trainjob(legacy, name="llama-sft", image=IMAGE, run_id=RUN, command=["python", "train.py"])
    assert not isinstance(built.value, UserInputError)
    assert str(built.value) == "outputs.json is a kubeflow.org/v1 stack: build its PyTorchJob instead"


def test_an_unknown_team_lists_the_stacks_teams():
    with pytest.raises(UserInputError) as caught:
        trainjob(team="vision", nodes=1)
    (problem,) = caught.value.problems
    assert problem.path == "--team" and problem.value == "vision"
    assert "'interns', 'ml', 'research'" in problem.message and "(default ml)" in problem.message


# --- the outputs ----------------------------------------------------------------------------------------------------


def test_trainer_outputs_are_read_and_v1_outputs_have_none():
    outputs = outputs_of(trainer_stack())
    assert outputs.job_api == lt.TRAINER_API and outputs.operator_version is None
    assert outputs.trainer is not None and outputs.trainer.version == "v2.3.0"
    assert outputs.trainer.runtime == "aitrain-torch" and outputs.trainer.default_team == "ml"
    assert outputs.trainer.queues["research"] == lko.TeamQueue("research", "research-lq", "research", 8, None, None)
    assert outputs.trainer.queues["interns"].priority_class is None  # missing = none
    legacy = outputs_of(json.loads((DATA / "llama-erdma.json").read_text()))
    assert legacy.trainer is None and legacy.job_api == "kubeflow.org/v1" and legacy.operator_version == "v1.9.0"


@pytest.mark.parametrize(
    "change, path, allowed",
    [
        ({"trainer_version": "latest"}, "trainer_version", "a release tag such as v2.3.0"),
        ({"training_runtime": "Aitrain_Torch"}, "training_runtime", "a TrainingRuntime name"),
        ({"queues": {}}, "queues", "a non-empty mapping of team names"),
        ({"queues": ["ml"]}, "queues", "a non-empty mapping of team names"),
        ({"default_team": "vision"}, "default_team", "must be one of the teams in queues: 'interns', 'ml', 'research'"),
        ({"queues": {"ML": QUEUES["ml"], "ml": QUEUES["ml"]}}, "queues.ML", "DNS-1123 label"),
        ({"queues": {"ml": "ml-queue"}}, "queues.ml", "a mapping like"),
        ({"queues": {"ml": {**QUEUES["ml"], "gpus": -1}}}, "queues.ml.gpus", "a whole number of GPUs, 0 or more"),
        ({"queues": {"ml": {**QUEUES["ml"], "gpus": "16"}}}, "queues.ml.gpus", "a whole number of GPUs"),
        (
            {"queues": {"ml": {**QUEUES["ml"], "borrowing_limit_gpus": 1.5}}},
            "queues.ml.borrowing_limit_gpus",
            "(null: may borrow without limit)",
        ),
        ({"queues": {"ml": {**QUEUES["ml"], "local_queue": "ML queue"}}}, "queues.ml.local_queue", "a LocalQueue name"),
        (
            {"queues": {"ml": {k: v for k, v in QUEUES["ml"].items() if k != "cluster_queue"}}},
            "queues.ml.cluster_queue",
            "(is missing)",
        ),
        ({"queues": {"ml": {**QUEUES["ml"], "priority_class": "x" * 64}}}, "queues.ml.priority_class", "at most 63"),
        ({"job_api": "trainer.kubeflow.org/v1"}, "job_api", "'trainer.kubeflow.org/v1alpha1'"),
    ],
)
def test_each_malformed_trainer_output_is_one_problem_naming_key_value_and_what_is_allowed(change, path, allowed):
    with pytest.raises(UserInputError) as caught:
        outputs_of(trainer_stack(**change))
    (problem,) = caught.value.problems
    assert problem.path == f"outputs.json: {path}" and allowed in problem.message


def test_missing_trainer_keys_are_all_listed():
    data = trainer_stack(trainer_version=None, training_runtime=None, queues=None, default_team=None)
    with pytest.raises(UserInputError) as caught:
        outputs_of(data)
    assert [p.path for p in caught.value.problems] == [
        "outputs.json: trainer_version",
        "outputs.json: training_runtime",
        "outputs.json: queues",
        "outputs.json: default_team",
    ]


def several_teams() -> dict[str, Any]:
    """A stack of several teams as the stack exports it: no default team (``default_team: null``)."""
    data = trainer_stack()
    data["default_team"] = None
    return data


def test_a_null_default_team_is_read_as_none_and_a_job_must_name_its_team():
    outputs = outputs_of(several_teams())
    assert outputs.trainer is not None and outputs.trainer.default_team is None
    assert trainjob(several_teams(), team="ml", nodes=1)["metadata"]["labels"]["aitrain.io/team"] == "ml"
    with pytest.raises(UserInputError) as caught:
        trainjob(several_teams(), nodes=1)
    (problem,) = caught.value.problems
    assert problem.path == "--team" and "no default team" in problem.message
    assert "'interns', 'ml', 'research'" in problem.message


def test_null_queues_are_a_problem_not_no_teams():
    data = trainer_stack()
    data["queues"] = None
    with pytest.raises(UserInputError) as caught:
        outputs_of(data)
    (problem,) = caught.value.problems
    assert problem.path == "outputs.json: queues" and "a non-empty mapping of team names" in problem.message


# --- the CLI --------------------------------------------------------------------------------------------------------


def launch(*args: str) -> Any:
    return runner.invoke(app, ["launch", "--kubernetes", *args])


def test_cli_prints_a_trainjob_in_the_default_teams_queue(outputs_file):
    result = launch("--stack", outputs_file(trainer_stack()), "--image", IMAGE, "--nodes", "2", "--", "python", "t.py")
    assert result.exit_code == 0, result.output
    job = yaml.safe_load(result.stdout)
    validate_trainjob(job)
    assert job["kind"] == "TrainJob" and job["metadata"]["name"] == "llama-pretrain-20261201t093000z"
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "ml"
    assert result.stderr.startswith(
        "aitrain launch --kubernetes: TrainJob training/llama-pretrain-20261201t093000z on llama-pretrain "
        "(kubernetes-pool, cn-wulanchabu): 2 nodes × 8 GPUs, fabric erdma, aliyun/erdma 1 per pod, shared at "
        "/mnt/shared, bucket at /mnt/data; team ml (queue ml, ClusterQueue ml, priority high), runtime aitrain-torch, "
        f"run {RUN}\n"
    )


def test_cli_dry_run_shows_the_trainjob_with_its_teams_queue_and_applies_nothing(outputs_file, fake_kubectl, tmp_path):
    out = tmp_path / "job.yaml"
    result = launch(
        "--stack",
        outputs_file(trainer_stack()),
        "--image",
        IMAGE,
        "--team",
        "research",
        "--nodes",
        "4",
        "--out",
        str(out),
        "--apply",
        "--dry-run",
        "--",
        "python",
        "t.py",
    )
    assert result.exit_code == 0, result.output
    assert (
        "kueue.x-k8s.io/queue-name: research-lq\n" in result.stdout and "aitrain.io/team: research\n" in result.stdout
    )
    assert f"would run: kubectl apply -f {out}" in result.stdout and "nothing was written or applied" in result.stdout
    assert fake_kubectl() == [] and not out.exists()


def test_cli_applies_the_trainjob_and_says_how_to_follow_it(outputs_file, fake_kubectl):
    result = launch(
        "--stack",
        outputs_file(trainer_stack()),
        "--image",
        IMAGE,
        "--name",
        "llama-sft",
        "--nodes",
        "3",
        "--apply",
        "--",
        "python",
        "t.py",
    )
    assert result.exit_code == 0, result.output
    (call,) = fake_kubectl()
    assert call["argv"] == ["apply", "-f", "-"]
    job = yaml.safe_load(call["stdin"])
    validate_trainjob(job)
    assert job["spec"]["trainer"]["numNodes"] == 3
    assert (
        "follow with: kubectl -n training get trainjob llama-sft; kubectl -n training get workloads (Kueue: queued or "
        f"admitted); kubectl -n training get pods -l aitrain.io/run-id={RUN}; kubectl -n training logs -f -l "
        f"aitrain.io/run-id={RUN} --prefix --max-log-requests 3"
    ) in result.stdout


BAD = {
    "unknown team": (["--image", IMAGE, "--team", "vision", "--nodes", "1"], "is not a team of"),
    "nodes over max": (["--image", IMAGE, "--nodes", "5", "--team", "research"], "must be 1 to 4"),
    "over the team's quota": (["--image", IMAGE, "--nodes", "4"], "team 'ml' can ever be admitted with"),
    "default nodes over the quota": (["--image", IMAGE], "4 nodes × 8 GPUs = 32 GPUs is more than team 'ml'"),
    "name too long for a trainjob": (["--image", IMAGE, "--nodes", "1", "--name", "a" * 45], "must be 1–44"),
    "no image": (["--nodes", "1"], "--image"),
    "interns cannot run a node": (["--image", IMAGE, "--team", "interns", "--nodes", "1"], "cannot run even one"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_exit_2_with_one_message_and_nothing_applied(case, outputs_file, fake_kubectl, tmp_path):
    args, message = BAD[case]
    out = tmp_path / "job.yaml"
    out.write_text("previous job\n")
    result = launch(
        "--stack", outputs_file(trainer_stack()), *args, "--out", str(out), "--apply", "--", "python", "t.py"
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and "Traceback" not in result.output
    assert message in " ".join(result.stderr.split())
    assert fake_kubectl() == [] and out.read_text() == "previous job\n"


def test_cli_unknown_team_names_every_team(outputs_file):
    result = launch(
        "--stack", outputs_file(trainer_stack()), "--image", IMAGE, "--team", "vision", "--", "python", "t.py"
    )
    assert result.exit_code == 2
    text = " ".join(result.stderr.split())
    assert "--team = 'vision': is not a team of" in text and "'interns', 'ml', 'research' (default ml)" in text


def test_cli_without_team_on_a_stack_of_several_teams_is_exit_2_listing_them(outputs_file, fake_kubectl, tmp_path):
    out = tmp_path / "job.yaml"
    stack = outputs_file(several_teams())
    result = launch(
        "--stack", stack, "--image", IMAGE, "--nodes", "1", "--out", str(out), "--apply", "--", "python", "t.py"
    )
    assert result.exit_code == 2, result.output
    text = " ".join(result.stderr.split())
    assert text.startswith("error: cannot launch (--team)") and "Traceback" not in result.output
    assert "has several teams and no default team (its default_team is null)" in text
    assert "one of 'interns', 'ml', 'research'" in text
    assert fake_kubectl() == [] and not out.exists()
    named = launch("--stack", stack, "--image", IMAGE, "--nodes", "1", "--team", "research", "--", "python", "t.py")
    assert named.exit_code == 0, named.output
    assert yaml.safe_load(named.stdout)["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "research-lq"


def test_cli_unknown_team_suggests_the_closest(outputs_file):
    result = launch(
        "--stack", outputs_file(trainer_stack()), "--image", IMAGE, "--team", "reserch", "--", "python", "t.py"
    )
    assert result.exit_code == 2 and "did you mean 'research'?" in result.stderr


def test_cli_malformed_queues_in_the_outputs_is_exit_2_naming_the_key(outputs_file):
    data = trainer_stack(queues={"ml": {**QUEUES["ml"], "borrowing_limit_gpus": -2}})
    result = launch("--stack", outputs_file(data), "--image", IMAGE, "--", "python", "t.py")
    assert result.exit_code == 2 and "queues.ml.borrowing_limit_gpus = -2" in result.stderr


def test_cli_team_on_a_v1_stack_says_how_to_move(outputs_file):
    legacy = json.loads((DATA / "llama-erdma.json").read_text())
    result = launch("--stack", outputs_file(legacy), "--image", IMAGE, "--team", "ml", "--", "python", "t.py")
    assert result.exit_code == 2
    text = " ".join(result.stderr.split())
    assert "teams and their Kueue queues need a Kubeflow Trainer stack" in text
    assert "kubernetes.job_engine: training-operator-v1" in text and "default job_engine is trainer-v2" in text


def test_cli_resume_is_a_new_trainjob_with_the_same_run_and_checkpoints(outputs_file):
    result = launch(
        "--stack",
        outputs_file(trainer_stack()),
        "--image",
        IMAGE,
        "--nodes",
        "1",
        "--resume",
        RUN,
        "--",
        "python",
        "t.py",
    )
    assert result.exit_code == 0, result.output
    job = yaml.safe_load(result.stdout)
    validate_trainjob(job)
    name = job["metadata"]["name"]
    assert name == "llama-pretrain-20261201t093000z-20261201t093" and len(name) == lt.MAX_TRAINJOB_NAME
    env = env_of(job["spec"]["trainer"]["env"])
    assert env["AITRAIN_RUN_ID"] == env["PET_RDZV_ID"] == RUN
    assert env["AITRAIN_CHECKPOINT_DIR"] == f"/mnt/shared/.aitrain/checkpoints/{RUN}"
    assert f"resuming run {RUN}" in result.stderr
