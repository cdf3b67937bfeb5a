"""Metrics that exist: the catalog's metric table, the CloudMonitor agent the node boot installs (and the status it
writes), the plan's metric_producers output per preset, and AIT040 (an alarm on a metric nothing in the plan makes)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from blueprints import bootstrap as b
from blueprints.architectures.ecs.spec import EcsSpec
from blueprints.bootstrap.monitoring import CloudMonitorAgent, node_metric_producers
from blueprints.catalog.loader import CATALOG_DIR
from blueprints.catalog.metrics import (
    PRODUCERS,
    load_metrics,
    metric_producers,
    read_metrics,
    record_of,
)
from blueprints.core import userdata
from blueprints.review import guardrails
from blueprints.review.plan import Plan, PlannedResource
from blueprints.testing import offline_plan
from tests.test_bootstrap import GPUS, files, spec

OWNED = ("AIT040",)  # the rule whose violating cases live here (tests/test_guardrails.py)
AGENT = CloudMonitorAgent()
SHANGHAI_INSTALLER = (
    "https://cms-agent-cn-shanghai.oss-cn-shanghai-internal.aliyuncs.com/Argus/agent_install_ecs-1.2.sh"
)


# ---- the catalog's metric table ----


def test_the_table_documents_what_the_pool_alarms_read_and_who_makes_it():
    metrics = load_metrics()
    gpu = record_of(metrics, "GpuUtilizationAgent", "ess:system")
    cpu = record_of(metrics, "CpuUtilization", "ess:system")
    assert gpu is not None and gpu.producer == "cloudmonitor-agent" and gpu.unit == "%"
    assert cpu is not None and cpu.producer == "ecs"
    assert record_of(metrics, "GpuUtilizationAgent", "acs_ecs_dashboard") is None
    assert all(m.source and m.retrieved for m in metrics)
    assert {m.producer for m in metrics} == set(PRODUCERS)


def test_a_bad_producer_or_a_repeated_metric_names_file_line_and_column(tmp_path):
    good = (CATALOG_DIR / "metrics.csv").read_text().splitlines()
    (tmp_path / "metrics.csv").write_text("\n".join([good[0], good[1].replace(",ecs,", ",cloudwatch,")]) + "\n")
    with pytest.raises(ValueError, match=r"metrics.csv line 2, column 'producer': must be one of ecs, cloudmonitor"):
        read_metrics(tmp_path)
    (tmp_path / "metrics.csv").write_text("\n".join([good[0], good[1].replace(",ess:system,", ",acs_nas,")]) + "\n")
    with pytest.raises(ValueError, match=r"line 2, column 'namespace': must be one of ess:system, acs_ecs_dashboard"):
        read_metrics(tmp_path)
    (tmp_path / "metrics.csv").write_text("\n".join([good[0], good[1], good[1]]) + "\n")
    with pytest.raises(ValueError, match=r"line 3, column 'metric': CpuUtilization in ess:system repeats line 2"):
        read_metrics(tmp_path)


def test_metric_producers_lists_what_is_made_with_its_readers_and_what_nothing_makes():
    metrics = load_metrics()
    readers = {("GpuUtilizationAgent", "ess:system"): ["pool-gpu-idle"], ("MadeUp", "ess:system"): ["pool-x"]}
    rows = metric_producers(node_metric_producers(None), readers, metrics, ("ess:system",))
    assert rows == [
        {"metric": "CpuUtilization", "namespace": "ess:system", "producer": "ecs", "read_by": []},
        {"metric": "GpuUtilizationAgent", "namespace": "ess:system", "producer": "none", "read_by": ["pool-gpu-idle"]},
        {"metric": "MadeUp", "namespace": "ess:system", "producer": "none", "read_by": ["pool-x"]},
    ]
    with_agent = metric_producers(node_metric_producers(AGENT), readers, metrics, ())
    assert with_agent[0] == {
        "metric": "GpuUtilizationAgent",
        "namespace": "ess:system",
        "producer": "cloudmonitor-agent",
        "read_by": ["pool-gpu-idle"],
    }
    with pytest.raises(ValueError, match="unknown metric producers \\['telegraf'\\]"):
        metric_producers(("telegraf",), {}, metrics)


# ---- the boot step ----


def test_the_boot_installs_the_documented_agent_for_the_region_and_checks_it_when_ready():
    node = b.render_node_script(spec(region="cn-shanghai", cloudmonitor=AGENT))
    assert f'ARGUS_VERSION=3.4.7 /bin/bash -c "$(curl -fsS {SHANGHAI_INSTALLER})"' in node
    assert "cms-agent)" in node and "|cms-agent" in node.splitlines()[2]
    assert 'cm="cloudmonitor=failed (see /var/log/aitrain-cloudmonitor.log)"' in node
    runcmd = yaml.safe_load(b.render_user_data(spec(cloudmonitor=AGENT)))["runcmd"]
    assert f"{b.NODE_SCRIPT_PATH} cms-agent" in runcmd
    # Installed before PyTorch and the driver install (which reboots the node).
    assert runcmd.index(f"{b.NODE_SCRIPT_PATH} cms-agent") < runcmd.index(f"{b.NODE_SCRIPT_PATH} gpu-install")


def test_without_the_agent_nothing_installs_it_or_reports_it():
    node = b.render_node_script(spec())
    text = b.render_user_data(spec())
    assert "cms-agent" not in node and "cloudmonitor" not in node and "cms-agent" not in text


def test_a_bad_agent_version_is_refused_with_what_is_allowed():
    with pytest.raises(ValueError, match=r"CloudMonitorAgent: version '3.4.7; reboot' .* use a dotted version"):
        b.render_user_data(spec(cloudmonitor=CloudMonitorAgent(version="3.4.7; reboot")))


# The node script runs for real on the driver-image path: nvidia-smi answers; curl serves an installer that starts the
# agent (or fails); pgrep sees the agent once it started.
FAKES = {
    "nvidia-smi": '#!/bin/sh\ncase "$*" in *driver_version*) echo 570.1 ;; *memory.total*) echo 0, A10, 24 ;;'
    " *) echo 'CUDA Version: 12.8' ;; esac\n",
    "curl": '#!/bin/sh\necho "$*" >>"$STATE/curl"\n[ -n "${BROKEN:-}" ] && exit 22\necho \'touch "$STATE/agent"\'\n',
    "pgrep": '#!/bin/sh\n[ -f "$STATE/agent" ]\n',
}


def run_ready(tmp_path: Path, **env: str) -> dict[str, str]:
    text = files(yaml.safe_load(b.render_user_data(spec(gpu=GPUS["driver_image"], cloudmonitor=AGENT))))
    script = text[b.NODE_SCRIPT_PATH].replace(b.ENV_DIR, str(tmp_path / "etc")).replace("/var/log", str(tmp_path))
    path = tmp_path / "aitrain-node"
    path.write_text(script)
    path.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in FAKES.items():
        (bin_dir / name).write_text(body)
        (bin_dir / name).chmod(0o755)
    run = subprocess.run(
        [str(path), "ready"],
        env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "STATE": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert run.returncode == 0, run.stderr
    lines = (tmp_path / "etc" / "status").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


def test_ready_installs_the_agent_if_it_is_missing_and_says_it_runs(tmp_path):
    status = run_ready(tmp_path)
    assert status["state"] == "ready" and status["cloudmonitor"] == "running"
    assert "cms-agent-cn-wulanchabu.oss-cn-wulanchabu-internal.aliyuncs.com" in (tmp_path / "curl").read_text()


def test_a_failed_agent_install_leaves_the_node_ready_and_its_status_says_so(tmp_path):
    status = run_ready(tmp_path, BROKEN="1")
    assert status["state"] == "ready"
    assert status["cloudmonitor"] == f"failed (see {tmp_path}/aitrain-cloudmonitor.log)"


# ---- the plans ----


@pytest.fixture(scope="module")
def pool_plan() -> Plan:
    return offline_plan("autoscaling-training")


def test_the_pool_plan_lists_the_agent_metric_its_scale_in_alarm_reads(pool_plan):
    rows = {(r["metric"], r["namespace"]): r for r in pool_plan.outputs["metric_producers"]}
    assert rows[("GpuUtilizationAgent", "ess:system")] == {
        "metric": "GpuUtilizationAgent",
        "namespace": "ess:system",
        "producer": "cloudmonitor-agent",
        "read_by": ["autoscaling-training-pool-gpu-idle"],
    }
    assert rows[("CpuUtilization", "ess:system")]["read_by"] == ["autoscaling-training-pool-cpu-busy"]
    assert all(r["producer"] != "none" for r in rows.values())
    (template,) = [r for r in pool_plan.resources if r.short_type == "ecs.EcsLaunchTemplate"]
    assert SHANGHAI_INSTALLER in (userdata.decode(template.inputs["userData"]) or "")
    assert not [f for f in pool_plan.findings if f["rule"] == "AIT040"]


def test_the_pool_alarms_read_documented_ess_system_metrics(pool_plan):
    alarms = {r.name: r.inputs for r in pool_plan.resources if r.short_type == "ess.Alarm"}
    assert {name: (i["metricType"], i["metricName"]) for name, i in alarms.items()} == {
        "autoscaling-training-pool-cpu-busy": ("system", "CpuUtilization"),
        "autoscaling-training-pool-gpu-idle": ("system", "GpuUtilizationAgent"),
    }
    assert all(record_of(load_metrics(), i["metricName"], "ess:system") for i in alarms.values())


def test_the_fixed_cluster_lists_host_metrics_only_and_the_note_says_what_no_alarm_watches():
    plan = offline_plan("medical-imaging")
    rows = plan.outputs["metric_producers"]
    assert {r["namespace"] for r in rows} == {"acs_ecs_dashboard"}
    assert {r["producer"] for r in rows} == {"cloudmonitor-agent"} and all(r["read_by"] == [] for r in rows)
    assert any("No CloudMonitor metric or ECS system event for NVIDIA XID errors" in n for n in plan.notes)


def test_the_kubernetes_plan_turns_on_prometheus_for_the_gpu_exporter_metrics():
    plan = offline_plan("kubernetes-training")
    (cluster,) = [r for r in plan.resources if r.short_type == "cs.ManagedKubernetes"]
    assert {"name": "arms-prometheus"} in cluster.inputs["addons"]
    assert [r["metric"] for r in plan.outputs["metric_producers"]] == [
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_XID_ERRORS",
    ]
    assert any("arms-prometheus add-on turns on Managed Service for Prometheus" in n for n in plan.notes)


def test_turning_the_agent_install_off_makes_ait040_fail_on_the_scale_in_alarm(monkeypatch):
    monkeypatch.setattr(EcsSpec, "cloudmonitor_agent", lambda self: None)
    plan = offline_plan("autoscaling-training")
    assert [(f["rule"], f["resource"]) for f in plan.findings if f["rule"] == "AIT040"] == [
        ("AIT040", "autoscaling-training-pool-gpu-idle")
    ]
    (finding,) = [f for f in plan.findings if f["rule"] == "AIT040"]
    assert finding["message"] == (
        "reads 'GpuUtilizationAgent' (ess:system), produced by the CloudMonitor agent, installed and started at node "
        "boot (aitrain-node cms-agent), and scaling group autoscaling-training-pool-group's launch source does not "
        "run it: "
        "the metric never reports and the alarm never fires"
    )
    rows = {r["metric"]: r for r in plan.outputs["metric_producers"]}
    assert rows["GpuUtilizationAgent"]["producer"] == "none"


# ---- AIT040 on synthetic plans ----


def alicloud(short_type: str, name: str, inputs: dict[str, object]) -> PlannedResource:
    module, kind = short_type.split(".")
    return PlannedResource(f"alicloud:{module}/{kind[0].lower() + kind[1:]}:{kind}", name, None, True, inputs)


def plan_of(*resources: PlannedResource) -> Plan:
    return Plan("autoscaling-pool", "cn-shanghai", "t", {}, (), resources)


WITH_AGENT = userdata.encode(f'#cloud-config\nruncmd:\n  - bash -c "$(curl -s {SHANGHAI_INSTALLER})"\n')


def pool(metric: str, user_data: str = WITH_AGENT, **alarm: object) -> Plan:
    return plan_of(
        alicloud("ecs.EcsLaunchTemplate", "t-template", {"userData": user_data}),
        alicloud("ess.ScalingGroup", "t-group", {"launchTemplateId": "${t-template.id}"}),
        alicloud(
            "ess.Alarm",
            "t-alarm",
            {"scalingGroupId": "${t-group.id}", "metricType": "system", "metricName": metric, **alarm},
        ),
    )


def ait040(plan: Plan) -> list[tuple[str, str]]:
    return [(f.resource, f.message) for f in guardrails.check(plan) if f.rule == "AIT040"]


def test_an_agent_metric_with_the_installer_in_the_launch_template_passes():
    assert ait040(pool("GpuUtilizationAgent")) == []
    assert ait040(pool("CpuUtilization", user_data=userdata.encode("#cloud-config\n"))) == []


def test_a_made_up_metric_fails_naming_the_metric_and_the_table():
    ((name, message),) = ait040(pool("GpuIdleness"))
    assert name == "t-alarm"
    assert message.startswith(
        "reads 'GpuIdleness' (ess:system), which no row of blueprints/catalog/data/metrics.csv documents"
    )


def test_an_agent_metric_without_the_installer_fails_and_a_custom_metric_is_the_users_own():
    ((name, message),) = ait040(pool("GpuUtilizationAgent", user_data=userdata.encode("#cloud-config\n")))
    assert name == "t-alarm" and "produced by the CloudMonitor agent" in message
    assert ait040(pool("MyQueueDepth", metricType="custom")) == []


def test_a_cloudmonitor_host_alarm_needs_the_agent_on_some_node_and_other_namespaces_are_left_alone():
    node = alicloud("ecs.Instance", "n1", {"userData": userdata.encode("#cloud-config\n")})
    host = alicloud("cms.Alarm", "a1", {"project": "acs_ecs_dashboard", "metric": "gpu_gpu_usedutilization"})
    nas = alicloud("cms.Alarm", "a2", {"project": "acs_nas", "metric": "UsedCapacity"})
    ((name, message),) = ait040(plan_of(node, host, nas))
    assert name == "a1" and "'gpu_gpu_usedutilization' (acs_ecs_dashboard)" in message
    with_agent = alicloud("ecs.Instance", "n1", {"userData": WITH_AGENT})
    assert ait040(plan_of(with_agent, host, nas)) == []


def test_an_alarm_on_a_group_outside_the_plan_is_judged_by_every_node_of_the_plan():
    alarm = alicloud(
        "ess.Alarm",
        "t-alarm",
        {"scalingGroupId": "asg-uf6existing", "metricType": "system", "metricName": "GpuUtilizationAgent"},
    )
    bare = alicloud("ecs.Instance", "n1", {"userData": userdata.encode("#cloud-config\n")})
    ((name, message),) = ait040(plan_of(bare, alarm))
    assert name == "t-alarm" and message.endswith(
        "and no node of the plan runs it: the metric never reports and the alarm never fires"
    )
    assert ait040(plan_of(alicloud("ecs.Instance", "n1", {"userData": WITH_AGENT}), alarm)) == []
