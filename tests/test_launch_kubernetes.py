"""`aitrain launch --kubernetes` on a legacy stack (job_api kubeflow.org/v1): the PyTorchJob it writes (validated
against the vendored CRD), --apply, refusals. Trainer stacks' TrainJobs: tests/test_launch_trainjob.py."""

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
from blueprints.bootstrap import nccl_env
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
DATA = Path(__file__).parent / "data" / "launch"
CRD_DIR = Path(lk.__file__).parents[1] / "data" / "kubeflow" / "training-operator-v1.9.0"
CRD = CRD_DIR / "kubeflow.org_pytorchjobs.yaml"
IMAGE = "registry.cn-wulanchabu.aliyuncs.com/team/train:2026-11"
ENGINES = job_engines()


def llama(**changes: Any) -> dict[str, Any]:
    data = json.loads((DATA / "llama-erdma.json").read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def validate(manifest: dict[str, Any]) -> None:
    crd_validator(CRD, "PyTorchJob", "v1").validate(manifest)


def job_for(
    data: dict[str, Any], nodes: int | None = None, command: tuple[str, ...] = ("python", "train.py", "--lr", "3e-4")
) -> dict[str, Any]:
    outputs = lko.parse_kubernetes_outputs(data, "outputs.json", ENGINES)
    return lp.build_job(outputs, name="llama-sft", image=IMAGE, run_id=RUN, command=command, nodes=nodes)


@pytest.fixture(autouse=True)
def pinned_clock(monkeypatch):
    monkeypatch.setenv(lc.NOW_ENV, "2026-12-01T09:30:00Z")


@pytest.fixture
def fake_kubectl(tmp_path, monkeypatch):
    """A PATH holding only a fake `kubectl` (tests/fake_kubectl.py); returns the calls it recorded."""
    return fake_kubectl_on_path(tmp_path, monkeypatch, "pytorchjob.kubeflow.org/llama-sft created", "pytorchjobs")


# --- the vendored CRD -----------------------------------------------------------------------------------------------


def test_vendored_crd_is_the_v1_9_0_file_its_source_names():
    source = (CRD_DIR / "PYTORCHJOB_CRD.md").read_text()
    assert (
        "6f74c7f6b2ed6c27aabd82d0a316b23f0646059c" in source
        and "manifests/base/crds/kubeflow.org_pytorchjobs.yaml" in source
    )
    digest = hashlib.sha256(CRD.read_bytes()).hexdigest()
    assert digest == "eb80e57a984cdc7ceefaaf3fc561e21b673c30cbb58589f2389528d2b2760d22" and digest in source
    mirror = Path("/work/.mirror/kubeflow+training-operator/repo")
    if mirror.exists():  # byte-identical to the tag, where the snapshot is at hand
        upstream = subprocess.run(
            ["git", "-C", str(mirror), "show", "v1.9.0:manifests/base/crds/kubeflow.org_pytorchjobs.yaml"],
            capture_output=True,
            check=True,
        ).stdout
        assert upstream == CRD.read_bytes()


# --- the job --------------------------------------------------------------------------------------------------------


def test_llama_job_shape_master_rank0_three_workers_eight_gpus_erdma():
    job = job_for(llama())
    validate(job)
    assert job["apiVersion"] == "kubeflow.org/v1" and job["kind"] == "PyTorchJob"
    assert job["metadata"] == {
        "name": "llama-sft",
        "namespace": "training",
        "labels": {"aitrain.io/run-id": RUN, "aitrain.io/profile": "llama-pretrain"},
    }
    assert job["spec"]["nprocPerNode"] == "8"
    specs = job["spec"]["pytorchReplicaSpecs"]
    assert {k: v["replicas"] for k, v in specs.items()} == {"Master": 1, "Worker": 3}
    for spec in specs.values():
        assert spec["restartPolicy"] == "OnFailure"
        pod = spec["template"]["spec"]
        (container,) = pod["containers"]
        assert container["name"] == "pytorch" and container["image"] == IMAGE
        assert container["command"] == ["torchrun", "train.py", "--lr", "3e-4"]
        assert container["resources"] == {"limits": {"nvidia.com/gpu": 8, "aliyun/erdma": 1}}
        assert {e["name"]: e["value"] for e in container["env"]} == {**nccl_env("erdma"), **run_env(RUN)}
        assert pod["nodeSelector"] == {"aitrain.io/node-pool": "gpu"}
        assert (
            pod["hostNetwork"] is True and pod["dnsPolicy"] == "ClusterFirstWithHostNet"
        )  # eRDMA reaches NCCL on the node's network
        assert pod["tolerations"] == [
            {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule", "operator": "Equal"}
        ]
        assert {m["mountPath"]: m["name"] for m in container["volumeMounts"]} == {
            "/mnt/shared": "shared",
            "/dev/shm": "dshm",
            lk.BUCKET_MOUNT_PATH: "data",
        }
        assert pod["volumes"] == [
            {"name": "shared", "persistentVolumeClaim": {"claimName": "llama-pretrain-shared"}},
            {"name": "dshm", "emptyDir": {"medium": "Memory"}},
            {"name": "data", "persistentVolumeClaim": {"claimName": "llama-pretrain-data"}},
        ]
        assert spec["template"]["metadata"]["labels"]["aitrain.io/run-id"] == RUN


@pytest.mark.parametrize("fabric", ["erdma", "roce", "tcp"])
@pytest.mark.parametrize("bucket", [True, False])
@pytest.mark.parametrize("nodes", [1, 2, 4])
def test_every_generated_job_validates_against_the_crd(fabric, bucket, nodes):
    job = job_for(llama(fabric=fabric, bucket_volume_claim="llama-pretrain-data" if bucket else None), nodes=nodes)
    validate(job)
    specs = job["spec"]["pytorchReplicaSpecs"]
    assert sum(s["replicas"] for s in specs.values()) == nodes
    assert ("Worker" in specs) == (nodes > 1)  # the webhook forbids Worker replicas < 1
    container = specs["Master"]["template"]["spec"]["containers"][0]
    assert ("aliyun/erdma" in container["resources"]["limits"]) == (fabric == "erdma")
    pod = specs["Master"]["template"]["spec"]
    assert pod.get("hostNetwork", False) == (fabric == "erdma") and ("dnsPolicy" in pod) == (fabric == "erdma")
    assert {e["name"]: e["value"] for e in container["env"]} == {**nccl_env(fabric), **run_env(RUN)}
    elastic = job["spec"]["elasticPolicy"]
    assert elastic == {
        "rdzvBackend": "c10d",
        "rdzvId": RUN,
        "minReplicas": nodes,
        "maxReplicas": nodes,
        "maxRestarts": 3,
    }
    claims = [
        v["persistentVolumeClaim"]["claimName"]
        for v in specs["Master"]["template"]["spec"]["volumes"]
        if "persistentVolumeClaim" in v
    ]
    assert claims == (["llama-pretrain-shared", "llama-pretrain-data"] if bucket else ["llama-pretrain-shared"])


@pytest.mark.parametrize(
    "path, value",
    [
        (("spec", "pytorchReplicaSpecs", "Master", "replicas"), "two"),
        (("spec", "nprocPerNode"), 8),  # a string in the CRD (auto | cpu | gpu | int as text)
        (("spec", "pytorchReplicaSpecs", "Master", "template", "spec", "containers"), [{"image": IMAGE}]),
        (
            (
                "spec",
                "pytorchReplicaSpecs",
                "Master",
                "template",
                "spec",
                "containers",
                0,
                "resources",
                "limits",
                "nvidia.com/gpu",
            ),
            [8],
        ),
        (("spec", "pytorchReplicaSpecs", "Master", "template", "spec", "nodeSelectors"), {"a": "b"}),
    ],
)
def test_the_validator_is_not_vacuous(path, value):
    job = job_for(llama())
    node: Any = job
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        validate(job)


def test_commands_are_torchrun_lists_and_never_a_shell():
    assert lk.torchrun_command(["python3", "-m", "pkg.train", "--x", "1"]) == [
        "torchrun",
        "-m",
        "pkg.train",
        "--x",
        "1",
    ]
    assert lk.torchrun_command(["bash", "-c", "rm -rf /; echo $HOME"]) == [
        "torchrun",
        "--no-python",
        "bash",
        "-c",
        "rm -rf /; echo $HOME",
    ]
    job = job_for(llama(), command=("python", "train.py", "--note", "it's $(reboot) `x`: {a: b}"))
    text = lk.render_job(job)
    back = yaml.safe_load(text)
    assert (
        back == job
        and back["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["command"][-1]
        == "it's $(reboot) `x`: {a: b}"
    )


# --- the CLI --------------------------------------------------------------------------------------------------------


def test_cli_writes_out_and_applies_the_file_with_kubectl(outputs_file, fake_kubectl, tmp_path):
    out = tmp_path / "job.yaml"
    result = runner.invoke(
        app,
        [
            "launch",
            "--kubernetes",
            "--stack",
            outputs_file(llama()),
            "--image",
            IMAGE,
            "--name",
            "llama-sft",
            "--out",
            str(out),
            "--apply",
            "--",
            "python",
            "train.py",
        ],
    )
    assert result.exit_code == 0, result.output
    written = yaml.safe_load(out.read_text())
    validate(written)
    assert written["metadata"]["name"] == "llama-sft"
    assert fake_kubectl() == [{"argv": ["apply", "-f", str(out)], "stdin": ""}]
    assert result.stdout.startswith(
        "aitrain launch --kubernetes: PyTorchJob training/llama-sft on "
        "llama-pretrain (kubernetes-pool, cn-wulanchabu): 4 nodes × 8 GPUs, "
        f"fabric erdma, aliyun/erdma 1 per pod, shared at /mnt/shared, bucket at /mnt/data, run {RUN}\n"
    )
    assert result.stdout.index(f"running: kubectl apply -f {out}") < result.stdout.index(
        "pytorchjob.kubeflow.org/llama-sft created"
    )


def test_cli_apply_without_out_pipes_the_manifest_on_stdin(outputs_file, fake_kubectl):
    result = runner.invoke(
        app,
        [
            "launch",
            "--kubernetes",
            "--stack",
            outputs_file(llama()),
            "--image",
            IMAGE,
            "--nodes",
            "2",
            "--apply",
            "--",
            "python",
            "train.py",
        ],
    )
    assert result.exit_code == 0, result.output
    (call,) = fake_kubectl()
    assert call["argv"] == ["apply", "-f", "-"]
    job = yaml.safe_load(call["stdin"])
    validate(job)
    assert job["metadata"]["name"] == "llama-pretrain-20261201t093000z"  # default: <profile>-<run id>
    assert job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 1


def test_cli_prints_the_manifest_on_stdout_by_default_and_dry_run_applies_nothing(outputs_file, fake_kubectl, tmp_path):
    plain = runner.invoke(
        app, ["launch", "--kubernetes", "--stack", outputs_file(llama()), "--image", IMAGE, "--", "python", "train.py"]
    )
    assert plain.exit_code == 0 and yaml.safe_load(plain.stdout)["kind"] == "PyTorchJob"
    out = tmp_path / "job.yaml"
    dry = runner.invoke(
        app,
        [
            "launch",
            "--kubernetes",
            "--stack",
            outputs_file(llama()),
            "--image",
            IMAGE,
            "--out",
            str(out),
            "--apply",
            "--dry-run",
            "--",
            "python",
            "train.py",
        ],
    )
    assert (
        dry.exit_code == 0
        and f"would run: kubectl apply -f {out}" in dry.stdout
        and "nothing was written or applied" in dry.stdout
    )
    assert fake_kubectl() == [] and not out.exists()


def test_failed_kubectl_is_exit_1_with_its_stderr(outputs_file, fake_kubectl, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL", "1")
    result = runner.invoke(
        app,
        [
            "launch",
            "--kubernetes",
            "--stack",
            outputs_file(llama()),
            "--image",
            IMAGE,
            "--apply",
            "--",
            "python",
            "train.py",
        ],
    )
    assert result.exit_code == 1 and "pytorchjobs" in result.stderr


def test_plain_launch_on_a_kubernetes_stack_says_use_kubernetes(outputs_file):
    result = runner.invoke(app, ["launch", "--stack", outputs_file(llama()), "--dry-run", "--", "python", "train.py"])
    assert (
        result.exit_code == 2 and "runs training jobs on Kubernetes: use `aitrain launch --kubernetes" in result.stderr
    )


def test_kubernetes_on_a_torchrun_stack_names_its_blueprint_and_the_ones_that_support_it(outputs_file):
    data = {"aitrain_outputs": "v1", "blueprint": "fixed-cluster", "profile_name": "x"}
    result = runner.invoke(
        app, ["launch", "--kubernetes", "--stack", outputs_file(data), "--image", IMAGE, "--", "python", "t.py"]
    )
    assert result.exit_code == 2
    assert (
        "is a 'fixed-cluster' stack" in result.stderr
        and "needs a stack of 'kubernetes-pool'" in result.stderr.replace("\n", " ")
    )


BAD = {
    "no image": (llama(), [], "--image"),
    "nodes over max": (llama(), ["--image", IMAGE, "--nodes", "5"], "must be 1 to 4"),
    "nodes zero": (llama(), ["--image", IMAGE, "--nodes", "0"], "must be 1 to 4"),
    "bad name": (llama(), ["--image", IMAGE, "--name", "Llama_SFT"], "DNS-1035"),
    "name starts with digit": (llama(), ["--image", IMAGE, "--name", "1job"], "DNS-1035"),
    "empty command": (llama(), ["--image", IMAGE, "--"], "give the command to run after --"),
    "python option": (llama(), ["--image", IMAGE, "--", "python", "-u", "t.py"], "python option '-u' is not supported"),
    "missing key": (llama(gpus_per_node=None), ["--image", IMAGE], "gpus_per_node"),
    "bad fabric": (llama(fabric="infiniband"), ["--image", IMAGE], "fabric"),
    "secret claim": (llama(shared_volume_claim="[secret]"), ["--image", IMAGE], "--show-secrets"),
    "not aitrain": ({"vpc_id": "vpc-1"}, ["--image", IMAGE], "these are not aitrain stack outputs"),
    "old outputs": (llama(aitrain_outputs="v0"), ["--image", IMAGE], "this aitrain reads outputs version 'v1'"),
    "unknown blueprint": (
        llama(blueprint="slurm-cluster"),
        ["--image", IMAGE],
        "blueprint 'slurm-cluster' is not one aitrain knows",
    ),
    "taint without effect": (
        llama(gpu_taint={"key": "nvidia.com/gpu", "value": "true"}),
        ["--image", IMAGE],
        "must have a key and an effect",
    ),
    "stale nodes_per_job": (
        llama(nodes_per_job=5),
        ["--image", IMAGE],
        "nodes_per_job = 5: is greater than max_nodes (4)",
    ),
    "bare python": (llama(), ["--image", IMAGE, "--", "python"], "python needs a script or -m MODULE"),
    "python -m alone": (llama(), ["--image", IMAGE, "--", "python", "-m"], "python needs a script or -m MODULE"),
    "via ssh": (llama(), ["--image", IMAGE, "--via", "ssh"], "drop --via with --kubernetes"),
    "team on a v1 stack": (
        llama(),
        ["--image", IMAGE, "--team", "ml"],
        "teams and their Kueue queues need a Kubeflow Trainer stack",
    ),
    "team without kubernetes": ({"aitrain_outputs": "v1", "blueprint": "fixed-cluster"}, ["--team", "ml"], "--team"),
    "k8s option on torchrun": ({"aitrain_outputs": "v1", "blueprint": "fixed-cluster"}, ["--image", IMAGE], None),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_exit_2_one_message_nothing_applied_out_untouched(case, outputs_file, fake_kubectl, tmp_path):
    data, args, message = BAD[case]
    out = tmp_path / "job.yaml"
    out.write_text("previous job\n")
    kube = [] if case in ("k8s option on torchrun", "team without kubernetes") else ["--kubernetes"]
    command = [] if "--" in args else ["--", "python", "t.py"]
    result = runner.invoke(
        app, ["launch", *kube, "--stack", outputs_file(data), "--out", str(out), "--apply", *args, *command]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and "Traceback" not in result.output
    assert message is None or message in result.stderr
    assert fake_kubectl() == [] and out.read_text() == "previous job\n"


def test_apply_without_kubectl_is_exit_2_and_writes_nothing(outputs_file, tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    out = tmp_path / "job.yaml"
    result = runner.invoke(
        app,
        [
            "launch",
            "--kubernetes",
            "--stack",
            outputs_file(llama()),
            "--image",
            IMAGE,
            "--out",
            str(out),
            "--apply",
            "--",
            "python",
            "t.py",
        ],
    )
    assert result.exit_code == 2 and "`kubectl` is not on PATH" in result.stderr and not out.exists()


def test_pure_helpers_refuse_bad_values():
    outputs = lko.parse_kubernetes_outputs(llama(), "o.json", ENGINES)
    assert lk.job_nodes(outputs, None) == 4
    with pytest.raises(UserInputError, match="DNS-1035"):
        lp.build_job(outputs, name="-bad", image=IMAGE, run_id=RUN, command=["python", "t.py"])
    with pytest.raises(UserInputError):
        lp.build_job(outputs, name="ok", image="has space", run_id=RUN, command=["python", "t.py"])
    with pytest.raises(UserInputError):
        lp.build_job(outputs, name="ok", image=IMAGE, run_id="x" * 64, command=["python", "t.py"])
    assert lk.default_job_name("llama", "Run_1.2") == "llama-run-1-2"


@pytest.mark.parametrize(
    "key, value, allowed",
    [
        ("kubernetes_namespace", "Training; rm -rf /", "a Kubernetes namespace"),
        ("shared_volume_claim", 7, "a PersistentVolumeClaim name"),
        ("bucket_volume_claim", "Data_Claim", "a PersistentVolumeClaim name"),
        ("gpus_per_node", "8", "a whole number, 1 or more"),
        ("gpus_per_node", 0, "a whole number, 1 or more"),
        ("max_nodes", True, "a whole number, 1 or more"),
        ("fabric", "infiniband", "one of 'erdma', 'roce', 'tcp'"),
        ("gpu_node_selector", {}, "a non-empty mapping of strings to strings"),
        ("gpu_node_selector", ["aitrain.io/node-pool=gpu"], "a non-empty mapping of strings to strings"),
        ("gpu_taint", {"key": "nvidia.com/gpu", "effect": 1}, "a non-empty mapping of strings to strings"),
        ("job_api", "kubeflow.org/v2", "'kubeflow.org/v1'"),
        ("training_operator_version", "latest", "a release tag such as v1.9.0"),
        ("kubernetes_namespace", "[secret]", "--show-secrets"),
    ],
)
def test_each_malformed_output_is_one_problem_naming_key_value_and_what_is_allowed(key, value, allowed):
    with pytest.raises(UserInputError) as caught:
        lko.parse_kubernetes_outputs(llama(**{key: value}), "o.json", ENGINES)
    (problem,) = caught.value.problems
    assert problem.path == f"o.json: {key}" and problem.value == value and allowed in problem.message


def test_outputs_without_a_bucket_claim_have_none_and_missing_required_keys_are_all_listed():
    assert lko.parse_kubernetes_outputs(llama(bucket_volume_claim=None), "o.json", ENGINES).bucket_claim is None
    with pytest.raises(UserInputError) as caught:
        lko.parse_kubernetes_outputs(llama(gpus_per_node=None, fabric=None, gpu_taint=None), "o.json", ENGINES)
    assert [p.path for p in caught.value.problems] == ["o.json: gpus_per_node", "o.json: fabric", "o.json: gpu_taint"]


def test_the_kubernetes_training_presets_own_outputs_give_a_valid_job():
    """The seam end to end: the preset's stack outputs (as `pulumi stack output --json` gives them once deployed)
    give the job their job_api names, valid against its vendored CRD, on the preset's pool."""
    from blueprints.testing import offline_plan

    deployed = {
        "cluster_id": "c8f2e1b0a9d3c4e5f6a7b8c9d0e1f2a3b",
        "gpu_node_pool_id": "np4f1c2d3e4b5a6978899aabbccddeeff",
    }
    data = {key: deployed.get(key, value) for key, value in offline_plan("kubernetes-training").outputs.items()}
    outputs = lko.parse_kubernetes_outputs(data, "outputs.json", ENGINES)
    assert outputs.namespace == "training" and outputs.gpus_per_node == 8 and outputs.nodes_per_job == 4
    if outputs.job_api == lko.TRAINER_API:  # the default engine: a TrainJob on the stack's runtime, in a team's queue
        assert outputs.trainer is not None
        args: dict[str, Any] = {"name": "llama-sft", "image": IMAGE, "run_id": RUN, "command": ["python", "t.py"]}
        team = outputs.trainer.default_team
        if team is None:  # several teams (the preset's llm and vision): a job names its team
            with pytest.raises(UserInputError, match="no default team"):
                lt.build_trainjob(outputs, **args)
            team = next(iter(outputs.trainer.queues))
        job = lt.build_trainjob(outputs, team=team, **args)
        trainer_crd = Path(lk.__file__).parents[1] / "data" / "kubeflow" / "trainer-v2.3.0" / "trainer.yaml"
        crd_validator(trainer_crd, "TrainJob", "v1alpha1").validate(job)
        assert job["spec"]["runtimeRef"]["name"] == outputs.trainer.runtime
        assert job["spec"]["trainer"]["numNodes"] == 4 and job["spec"]["trainer"]["numProcPerNode"] == 8
        assert job["spec"]["trainer"]["resourcesPerNode"] == {"limits": {"nvidia.com/gpu": 8, "aliyun/erdma": 1}}
        queue = outputs.trainer.queues[team]
        assert job["metadata"]["labels"][lt.QUEUE_LABEL] == queue.local_queue
        return
    job = job_for(data)
    validate(job)
    master, worker = (job["spec"]["pytorchReplicaSpecs"][k] for k in ("Master", "Worker"))
    assert (master["replicas"], worker["replicas"], job["spec"]["nprocPerNode"]) == (
        1,
        3,
        "8",
    )  # nodes_per_job 4 of ebmgn7ex × 8 GPUs
    pod = master["template"]["spec"]
    assert pod["nodeSelector"] == {"aitrain.io/node-pool": "gpu"} and job["metadata"]["namespace"] == "training"
    assert pod["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 8, "aliyun/erdma": 1}
    claims = {v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"] if "persistentVolumeClaim" in v}
    assert claims == {"kubernetes-training-shared", "kubernetes-training-data"}  # the file system and the bucket


def test_the_pytorchjob_is_byte_for_byte_the_one_written_before_trainer_v2():
    """Splitting the PyTorchJob out of kubernetes.py changed nothing a v1 stack gets: the sha256 of the rendered job,
    recorded with the pre-split module (blueprints/launch/kubernetes.py at 83d48ec)."""
    text = lk.render_job(job_for(llama()))
    assert hashlib.sha256(text.encode()).hexdigest() == (
        "a67148bcb609967fa19fb2ebb627ef3e4d6e1ddf2d0e0d1b8ace86c5e571d8de"
    )
    assert "trainer.kubeflow.org" not in text and "kueue" not in text


def run_env(run_id: str) -> dict[str, str]:
    """What every pod gets besides NCCL's settings: the run id and its checkpoint directory on the shared volume."""
    return {
        "AITRAIN_RUN_ID": run_id,
        "AITRAIN_CHECKPOINT_DIR": f"/mnt/shared/.aitrain/checkpoints/{run_id}",
        "TORCH_ELASTIC_SHUTDOWN_TIMEOUT": "120",
    }


def test_max_restarts_reaches_the_elastic_policy_and_the_crd_takes_it():
    outputs = lko.parse_kubernetes_outputs(llama(), "o", ENGINES)
    job = lp.build_job(outputs, name="j", image=IMAGE, run_id=RUN, command=["python", "t.py"], nodes=2, max_restarts=7)
    validate(job)
    assert job["spec"]["elasticPolicy"]["maxRestarts"] == 7
    assert all(s["restartPolicy"] == "OnFailure" for s in job["spec"]["pytorchReplicaSpecs"].values())
