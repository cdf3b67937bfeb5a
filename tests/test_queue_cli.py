"""`aitrain queue`: the teams' Kueue queues and why each job waits, read with `kubectl get` only.

kubectl is replayed: a fake `kubectl` first on PATH (as the `launch --kubernetes --apply` tests do) answers with the
recorded Kueue v0.19.2 objects in tests/data/queue/ and records every call, so the tests also show the command
never runs anything but `kubectl get`.
"""

from __future__ import annotations

import copy
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprints.architectures import job_engines
from blueprints.cli.main import app
from blueprints.core.errors import UserInputError
from blueprints.launch import queue as lq
from blueprints.launch import queue_answers as la
from blueprints.launch import queue_jobs as lj
from blueprints.launch import queue_render as lr
from blueprints.launch import torchrun as lc

DATA = Path(__file__).parent / "data" / "queue"
OUTPUTS = json.loads((DATA / "outputs.json").read_text())
WORKLOADS = (DATA / "workloads.json").read_text()
CLUSTER_QUEUES = (DATA / "clusterqueues.json").read_text()
NOW = "2026-12-01T09:30:00Z"
ENGINES = job_engines()
# Kueue v0.19.2's own words (pkg/scheduler/flavorassigner/flavorassigner.go, pkg/controller/core/workload_controller.go)
INSUFFICIENT = (
    "couldn't assign flavors to pod set node: "
    "insufficient unused quota for nvidia.com/gpu in flavor llama-pretrain-gpu-pool, 8 more needed"
)
TIMEOUT = "Exceeded the PodsReady timeout training/trainjob-clip-finetune-0d4c7"

runner = CliRunner()


@pytest.fixture(autouse=True)
def pinned_clock(monkeypatch):
    monkeypatch.setenv(lc.NOW_ENV, NOW)


@pytest.fixture
def outputs_file(tmp_path):
    def write(data: Any = OUTPUTS) -> str:
        path = tmp_path / "outputs.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return str(path)

    return write


@pytest.fixture
def fake_kubectl(tmp_path, monkeypatch):
    """A PATH holding only a fake `kubectl` that records its argv (JSON lines) and answers from the recorded files.

    FAKE_FAIL_ON=<resource> makes the call for that resource fail with FAKE_STDERR (exit 1); FAKE_GARBAGE answers
    with text that is not JSON."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "kubectl.jsonl"
    script = textwrap.dedent(
        f"""\
        #!{sys.executable}
        import json, os, sys
        with open({str(calls)!r}, "a") as f:
            f.write(json.dumps(sys.argv[1:]) + "\\n")
        resource = sys.argv[2] if len(sys.argv) > 2 else ""
        if os.environ.get("FAKE_FAIL_ON") and resource.startswith(os.environ["FAKE_FAIL_ON"]):
            sys.stderr.write(os.environ.get("FAKE_STDERR", "error") + "\\n")
            sys.exit(1)
        if os.environ.get("FAKE_GARBAGE"):
            print("<html>proxy error</html>")
            sys.exit(0)
        name = {{"workloads.kueue.x-k8s.io": "workloads.json", "clusterqueues.kueue.x-k8s.io": "clusterqueues.json"}}
        sys.stdout.write(open(os.path.join({str(DATA)!r}, name[resource])).read())
        """
    )
    exe = bin_dir / "kubectl"
    exe.write_text(script)
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    return lambda: [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []


def queue(*args: str) -> Any:
    return runner.invoke(app, ["queue", *args])


def outputs() -> lq.QueueOutputs:
    return lq.parse_queue_outputs(copy.deepcopy(OUTPUTS), "outputs.json", ENGINES)


def report(workloads: str = WORKLOADS, cluster_queues: str = CLUSTER_QUEUES, team: str | None = None) -> lq.QueueReport:
    return lq.build_report(outputs(), workloads, cluster_queues, team=team, now=lc.utc_now())


# --- the command ----------------------------------------------------------------------------------------------------


def test_table_shows_each_teams_quota_and_why_each_job_waits(outputs_file, fake_kubectl):
    result = queue("--stack", outputs_file())
    assert result.exit_code == 0, result.output
    out = result.stdout
    # Only reads: the namespace's Workloads, then the cluster's ClusterQueues.
    assert fake_kubectl() == [
        ["get", "workloads.kueue.x-k8s.io", "-n", "training", "-o", "json"],
        ["get", "clusterqueues.kueue.x-k8s.io", "-o", "json"],
    ]
    lines = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    # team, queue, cluster queue, GPUs in use, quota, borrowed, may borrow, reserved, pending, admitted
    assert lines["nlp"] == ["nlp", "(default)", "nlp", "llama-pretrain-nlp", "32", "32", "0", "16", "32", "0", "1"]
    assert lines["vision"] == ["vision", "vision", "llama-pretrain-vision", "0", "16", "0", "8", "0", "2", "0"]
    assert lines["TrainJob/llama-sft"][:5] == ["TrainJob/llama-sft", "nlp", "32", "running", "1h23m"]
    assert lines["TrainJob/vit-pretrain"][:5] == ["TrainJob/vit-pretrain", "vision", "24", "pending", "24m"]
    assert lines["TrainJob/clip-finetune"][:5] == ["TrainJob/clip-finetune", "vision", "16", "evicted", "3m"]
    flat = " ".join(out.split())
    assert f"[Pending] {INSUFFICIENT}" in flat
    assert f"[PodsReadyTimeout] {TIMEOUT}; evicted 3 times; back in the queue after 2026-12-01T09:30:30Z" in flat
    assert "note:" not in out  # the cluster's queues match the stack's outputs


def test_json_has_every_job_with_kueues_reason_and_each_teams_usage(outputs_file, fake_kubectl):
    result = queue("--stack", outputs_file(), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    jobs = {j["job_name"]: j for j in doc["jobs"]}
    assert [j["job_name"] for j in doc["jobs"]] == ["llama-sft", "vit-pretrain", "clip-finetune"]
    assert jobs["llama-sft"] | {} == {
        **jobs["llama-sft"],
        "job_kind": "TrainJob",
        "workload": "trainjob-llama-sft-6b2f1",
        "team": "nlp",
        "cluster_queue": "llama-pretrain-nlp",
        "gpus": 32,  # 4 nodes × 8 GPUs (given as limits only)
        "state": "running",
        "reason": "Started",
        "since": "2026-12-01T08:06:40Z",
    }
    assert (jobs["vit-pretrain"]["state"], jobs["vit-pretrain"]["gpus"], jobs["vit-pretrain"]["why"]) == (
        "pending",
        24,
        INSUFFICIENT,
    )
    clip = jobs["clip-finetune"]
    assert (clip["state"], clip["reason"], clip["evictions"], clip["requeue_at"]) == (
        "evicted",
        "PodsReadyTimeout",
        3,
        "2026-12-01T09:30:30Z",
    )
    assert clip["why"].startswith(TIMEOUT)
    queues = {q["team"]: q for q in doc["queues"]}
    assert {k: queues["nlp"][k] for k in ("default", "nominal_gpus", "used_gpus", "borrowing_limit_gpus")} == {
        "default": True,
        "nominal_gpus": 32,
        "used_gpus": 32,
        "borrowing_limit_gpus": 16,
    }
    assert (queues["vision"]["pending_workloads"], queues["vision"]["cohort"], queues["vision"]["notes"]) == (
        2,
        "llama-pretrain",
        [],
    )
    assert doc["namespace"] == "training" and doc["now"] == NOW


def test_team_shows_only_that_teams_queue_and_jobs(outputs_file, fake_kubectl):
    result = queue("--stack", outputs_file(), "--team", "vision", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [q["team"] for q in doc["queues"]] == ["vision"]
    assert [j["job_name"] for j in doc["jobs"]] == ["vit-pretrain", "clip-finetune"] and doc["team"] == "vision"


def test_unknown_team_is_exit_2_listing_the_teams_and_runs_nothing(outputs_file, fake_kubectl):
    result = queue("--stack", outputs_file(), "--team", "visoin")
    assert result.exit_code == 2
    assert "--team = 'visoin'" in result.stderr and "'nlp', 'vision'" in result.stderr
    assert "did you mean 'vision'?" in result.stderr
    assert fake_kubectl() == []


@pytest.mark.parametrize(
    ("job_api", "says"),
    [
        ("trainer.kubeflow.org/v1alpha1", "this stack was made by an older aitrain"),
        ("kubeflow.org/v1", "runs the legacy training operator (job_api kubeflow.org/v1"),
    ],
)
def test_outputs_without_queues_are_exit_2_naming_the_key_and_the_engine_that_has_it(
    outputs_file, fake_kubectl, job_api, says
):
    older = {k: v for k, v in OUTPUTS.items() if k not in ("queues", "default_team")} | {"job_api": job_api}
    result = queue("--stack", outputs_file(older))
    assert result.exit_code == 2
    err = " ".join(result.stderr.split())
    assert "outputs.json: queues: missing: the teams' Kueue queues are an output of kubernetes-pool" in err
    assert "(Kubeflow Trainer v2, job_api trainer.kubeflow.org/v1alpha1) queued on Kueue v0.19.2" in err
    assert says in err and "pulumi up" in err and fake_kubectl() == []


def test_a_torchrun_stack_is_exit_2_saying_which_blueprint_has_queues(outputs_file, fake_kubectl):
    fixed = {"aitrain_outputs": OUTPUTS["aitrain_outputs"], "blueprint": "fixed-cluster"}
    result = queue("--stack", outputs_file(fixed))
    assert result.exit_code == 2
    err = " ".join(result.stderr.split())
    assert "'fixed-cluster' stack runs its jobs with torchrun" in err and "'kubernetes-pool'" in err
    assert "aitrain runs" in err and fake_kubectl() == []


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"queues": {}}, "queues"),
        ({"queues": {"nlp": {"local_queue": "nlp", "gpus": 32}}}, "queues.nlp.cluster_queue"),
        ({"queues": {"nlp": {**OUTPUTS["queues"]["nlp"], "gpus": "32"}}}, "queues.nlp.gpus"),
        ({"default_team": "audio"}, "default_team"),
        ({"queues": "[secret]"}, "queues"),
        ({"kubernetes_namespace": "Training"}, "kubernetes_namespace"),
    ],
)
def test_malformed_queue_outputs_are_exit_2_naming_the_key(outputs_file, fake_kubectl, change, where):
    result = queue("--stack", outputs_file({**OUTPUTS, **change}))
    assert result.exit_code == 2, result.output
    assert f"outputs.json: {where}" in result.stderr and fake_kubectl() == []


def test_a_stack_of_several_teams_has_no_default_team(outputs_file, fake_kubectl):
    """The stack exports ``default_team: null`` when it has several teams (a job names its --team)."""
    result = queue("--stack", outputs_file({**OUTPUTS, "default_team": None}), "--json")
    assert result.exit_code == 0, result.output
    assert [q["default"] for q in json.loads(result.stdout)["queues"]] == [False, False]


def test_outputs_without_default_team_are_exit_2_as_for_launch(outputs_file, fake_kubectl):
    older = {k: v for k, v in OUTPUTS.items() if k != "default_team"}
    result = queue("--stack", outputs_file(older))
    assert result.exit_code == 2 and "outputs.json: default_team: missing from the outputs" in result.stderr


def test_no_kubectl_on_path_is_exit_2_with_one_message(outputs_file, tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = queue("--stack", outputs_file())
    assert result.exit_code == 2
    assert "`kubectl` is not on PATH" in result.stderr and "https://kubernetes.io/docs/tasks/tools/" in result.stderr
    assert "kubectl get workloads.kueue.x-k8s.io -n training -o json" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("fail_on", "stderr", "hint"),
    [
        (
            "workloads",
            'error: the server doesn\'t have a resource type "workloads"',
            "Kueue is not installed there",
        ),
        (
            "clusterqueues",
            'Error from server (Forbidden): clusterqueues.kueue.x-k8s.io is forbidden: User "dev" cannot list resource '
            '"clusterqueues" in API group "kueue.x-k8s.io" at the cluster scope',
            "kueue-clusterqueue-viewer-role",
        ),
        (
            "workloads",
            "The connection to the server 10.0.0.10:6443 was refused - did you specify the right host or port?",
            "check the API server is reachable",
        ),
        ("workloads", "error: something else", "kubectl config current-context"),
    ],
)
def test_failing_kubectl_is_exit_1_with_one_paragraph(outputs_file, fake_kubectl, monkeypatch, fail_on, stderr, hint):
    monkeypatch.setenv("FAKE_FAIL_ON", fail_on)
    monkeypatch.setenv("FAKE_STDERR", stderr)
    result = queue("--stack", outputs_file())
    assert result.exit_code == 1
    paragraph = result.stderr.strip()
    assert "\n" not in paragraph and result.stdout == ""
    assert f"kubectl get {fail_on}.kueue.x-k8s.io" in paragraph and "failed (exit 1)" in paragraph
    assert stderr.split(":")[0] in paragraph and hint in paragraph
    assert paragraph.endswith("Nothing was changed: aitrain queue only reads.")
    assert all(call[0] == "get" for call in fake_kubectl())


def test_an_answer_that_is_not_a_list_is_exit_1(outputs_file, fake_kubectl, monkeypatch):
    monkeypatch.setenv("FAKE_GARBAGE", "1")
    result = queue("--stack", outputs_file())
    assert result.exit_code == 1 and "cannot read kubectl's answer: not JSON" in result.stderr


# --- the pure reading -----------------------------------------------------------------------------------------------


def workload(conditions: list[dict[str, Any]], **status: Any) -> dict[str, Any]:
    """The fixture's pending workload with other conditions (and status fields)."""
    base = copy.deepcopy(json.loads(WORKLOADS)["items"][1])
    base["status"] = {"conditions": conditions, **status}
    return base


def cond(kind: str, status: str, reason: str, message: str = "") -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": NOW}


@pytest.mark.parametrize(
    ("conditions", "status", "state", "reason", "why"),
    [
        ([], {}, "pending", None, "not yet tried by Kueue (no QuotaReserved condition)"),
        (
            [cond("QuotaReserved", "False", "ExceedsMaxQuota", "couldn't assign flavors to pod set node: x")],
            {},
            "pending",
            "ExceedsMaxQuota",
            "couldn't assign flavors to pod set node: x",
        ),
        (
            [
                cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue llama-pretrain-vision"),
                cond("Admitted", "False", "UnsatisfiedChecks", "The workload has not all checks ready"),
            ],
            {"admissionChecks": [{"name": "provisioning", "state": "Pending", "message": "waiting for capacity"}]},
            "quota reserved",
            "UnsatisfiedChecks",
            "admission check provisioning: Pending (waiting for capacity)",
        ),
        (
            [
                cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue llama-pretrain-vision"),
                cond("Admitted", "True", "Admitted", "The workload is admitted"),
                cond("PodsReady", "False", "WaitForStart", "Not all pods are ready or succeeded"),
            ],
            {},
            "admitted",
            "WaitForStart",
            "Not all pods are ready or succeeded",
        ),
        (
            [
                cond("QuotaReserved", "False", "Pending", "Preempted to accommodate a higher priority Workload"),
                cond("Evicted", "True", "Preempted", "Preempted to accommodate a higher priority Workload"),
                cond("Preempted", "True", "InClusterQueue", "Preempted to accommodate a higher priority Workload"),
                cond("Requeued", "True", "Preempted", "Preempted to accommodate a higher priority Workload"),
            ],
            {},
            "evicted",
            "Preempted",
            "Preempted to accommodate a higher priority Workload; back in the queue",
        ),
        (
            [
                cond("Evicted", "True", "PodsReadyTimeout", TIMEOUT),
                cond("Requeued", "True", "BackoffFinished", "The workload backoff was finished"),
                cond("QuotaReserved", "False", "Pending", INSUFFICIENT),
            ],
            {"requeueState": {"count": 1}},
            "evicted",
            "PodsReadyTimeout",
            f"{TIMEOUT}; back in the queue; now: {INSUFFICIENT}",
        ),
        (
            # waitForPodsReady.blockAdmission: nothing is admitted while an admitted job's pods are not all ready.
            [
                cond(
                    "QuotaReserved",
                    "False",
                    "Waiting",
                    "waiting for all admitted workloads to be in PodsReady condition",
                )
            ],
            {},
            "pending",
            "Waiting",
            "waiting for all admitted workloads to be in PodsReady condition",
        ),
        (
            # After waitForPodsReady.requeuingStrategy.backoffLimitCount timeouts Kueue deactivates the workload.
            [
                cond(
                    "Evicted",
                    "True",
                    "DeactivatedDueToRequeuingLimitExceeded",
                    "The workload is deactivated due to exceeding the maximum number of re-queuing retries",
                ),
                cond("Requeued", "False", "Deactivated", "The workload is deactivated"),
            ],
            {"schedulingStats": {"evictions": [{"reason": "PodsReadyTimeout", "count": 5}]}, "active": False},
            "evicted",
            "DeactivatedDueToRequeuingLimitExceeded",
            "The workload is deactivated due to exceeding the maximum number of re-queuing retries; evicted 5 times; "
            "deactivated (spec.active is false): Kueue will not admit it again until that is true",
        ),
        (
            [
                cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue llama-pretrain-vision"),
                cond("Admitted", "True", "Admitted", "The workload is admitted"),
                cond("Finished", "True", "Succeeded", "TrainJob vit-pretrain has completed."),
            ],
            {},
            "finished",
            "Succeeded",
            "TrainJob vit-pretrain has completed.",
        ),
    ],
)
def test_state_and_why_come_from_kueues_conditions(conditions, status, state, reason, why):
    w = workload(conditions, **{k: v for k, v in status.items() if k != "active"})
    w["spec"]["active"] = status.get("active", True)
    row = lj.job_row(w, outputs().teams)
    assert (row.state, row.reason, row.why) == (state, reason, why)


def test_deactivated_workload_says_so():
    w = workload([])
    w["spec"]["active"] = False
    assert lj.job_row(w, outputs().teams).why.startswith("deactivated: spec.active is false")


def test_gpus_count_requests_limits_and_init_containers():
    pod = {
        "spec": {"containers": [{"resources": {"requests": {"nvidia.com/gpu": "2"}, "limits": {"nvidia.com/gpu": 2}}}]}
    }
    assert lj.pod_gpus(pod) == 2
    pod["spec"]["containers"].append({"resources": {"limits": {"nvidia.com/gpu": "4"}}})
    assert lj.pod_gpus(pod) == 6
    pod["spec"]["initContainers"] = [{"resources": {"limits": {"nvidia.com/gpu": "8"}}}]
    assert lj.pod_gpus(pod) == 8
    assert lj.pod_gpus({"spec": {"containers": [{"name": "cpu-only"}]}}) == 0
    w = {"spec": {"podSets": [{"count": 2, "template": pod}, {"count": 1, "template": {}}]}}
    assert lj.workload_gpus(w) == 16


@pytest.mark.parametrize(
    ("text", "value"), [("8", 8), (8, 8), ("1500m", 1.5), ("2k", 2000), ("1Ki", 1024), ("1e3", 1000), ("0", 0)]
)
def test_quantities_read_as_kubernetes_writes_them(text, value):
    assert la.parse_quantity(text) == value


@pytest.mark.parametrize("text", ["eight", "", None, True, "8 GPUs"])
def test_not_a_quantity_is_an_answer_error(text):
    with pytest.raises(la.KubectlAnswerError):
        la.parse_quantity(text)


def test_a_queue_that_differs_from_the_outputs_or_is_missing_gets_a_note():
    data = json.loads(CLUSTER_QUEUES)
    resources = data["items"][0]["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    nlp = next(r for r in resources if r["name"] == "nvidia.com/gpu")
    nlp["nominalQuota"] = "24"
    del nlp["borrowingLimit"]
    data["items"] = data["items"][:1]
    data["items"][0]["status"]["conditions"][0] |= {"status": "False", "reason": "Stopped", "message": "stopped"}
    got = {q.team: q for q in report(cluster_queues=json.dumps(data)).queues}
    assert got["nlp"].nominal_gpus == 24 and got["nlp"].borrowing_limit_gpus is None and got["nlp"].active is False
    notes = " ".join(got["nlp"].notes)
    assert "nominal quota of 24 GPUs, the stack's outputs say 32" in notes
    assert "may borrow no limit, the stack's outputs say 16 GPUs" in notes and "inactive (Stopped)" in notes
    assert (
        not got["vision"].found and "ClusterQueue llama-pretrain-vision is not in the cluster" in got["vision"].notes[0]
    )
    text = lr.render_queue(report(cluster_queues=json.dumps(data)))
    assert (
        "llama-pretrain-vision (missing)" in text
        and "note: ClusterQueue llama-pretrain-vision is not in the cluster" in text
    )


def test_a_job_in_another_queue_has_no_team_and_a_note():
    data = json.loads(WORKLOADS)
    data["items"][1]["spec"]["queueName"] = "scratch"
    got = report(workloads=json.dumps(data))
    assert [j.team for j in got.jobs][-1] is None
    assert "note: queue scratch is not one of the stack's teams' queues" in " ".join(lr.render_queue(got).split())


@pytest.mark.parametrize(
    "answer",
    [
        '{"kind": "List"}',
        '{"items": [1]}',
        "[]",
        '{"items": [{"spec": {"podSets": [{"count": 1, '
        '"template": {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "x"}}}]}}}]}}]}',
    ],
)
def test_answers_of_another_shape_are_answer_errors(answer):
    with pytest.raises(la.KubectlAnswerError):
        report(workloads=answer)


def test_no_jobs_says_so():
    text = lr.render_queue(report(workloads='{"items": []}', team="nlp"))
    assert "no jobs in namespace training for team nlp" in text


def test_check_team_and_outputs_errors_are_user_input_errors():
    with pytest.raises(UserInputError):
        lq.check_team(outputs(), "audio")
    assert lq.check_team(outputs(), "nlp") == "nlp" and lq.check_team(outputs(), None) is None


def test_queue_is_a_command_of_the_app_with_its_exit_codes():
    listed = runner.invoke(app, ["--help"])
    assert listed.exit_code == 0 and " queue " in listed.stdout
    helped = runner.invoke(app, ["queue", "--help"], terminal_width=200)
    text = " ".join(helped.stdout.split())
    assert helped.exit_code == 0 and "Exit status: 0 shown, 1 a kubectl call failed" in text
    assert "2 invalid input or no kubectl on PATH" in text and "--team" in text and "--json" in text
