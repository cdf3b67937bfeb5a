"""The plan's "Run time" section shows what the stack outputs say about health, repair, checkpoints, metrics, image."""

from __future__ import annotations

from blueprints.review.render.runtime import MISSING_TEXT, RUNTIME_OUTPUTS, runtime_lines

OUTPUTS = {
    "health_gate": {
        "command": "aitrain check --stack outputs.json",
        "suite": ["gpu-count", "ecc", "xid"],
        "allreduce": {"fabric": "erdma", "expected_busbw_gbps": 160.0, "threshold_gbps": 96.0, "source": "catalog"},
    },
    "repair": {"command": None, "hook": {"transition": "SCALE_IN", "seconds": 600}, "mechanism": "replace", "on": True},
    "checkpoint_dir": "/mnt/shared/.aitrain/checkpoints/<run-id>",
    "max_restarts": 3,
    "metric_producers": [
        {"metric": "GpuUtilizationAgent", "namespace": "acs_ecs_dashboard", "producer": "agent", "read_by": ["a"]}
    ],
    "node_image": {"image_id": "m-abc", "pinned": False, "source": "newest-at-plan"},
}


def test_every_concern_is_shown_with_what_the_outputs_say():
    lines = dict(runtime_lines(OUTPUTS))
    assert [h for h, _ in runtime_lines(OUTPUTS)] == [h for _, h in RUNTIME_OUTPUTS]
    assert lines["health gate"] == [
        "command: aitrain check --stack outputs.json",
        "checks: gpu-count, ecc, xid",
        "all-reduce over erdma: pass at ≥ 96 Gbit/s bus bandwidth (expected 160); source: catalog",
    ]
    assert lines["repair"] == ["mechanism: replace", "hook: transition=SCALE_IN, seconds=600", "on: yes"]
    assert lines["checkpoints"][0].startswith("/mnt/shared/.aitrain/checkpoints/<run-id> (AITRAIN_CHECKPOINT_DIR")
    assert lines["checkpoints"][0].endswith("up to 3 times")
    assert lines["metrics"] == ["GpuUtilizationAgent (acs_ecs_dashboard) from agent; read by a"]
    assert "not pinned" in lines["node image"][0] and lines["node image"][0].startswith("m-abc ")


def test_an_unknown_threshold_says_it_is_measured_only():
    gate = {"allreduce": {"fabric": "tcp", "expected_busbw_gbps": None, "threshold_gbps": None, "source": "unknown"}}
    (line,) = dict(runtime_lines({"health_gate": gate}))["health gate"]
    assert "no pass threshold" in line and "source: unknown" in line


def test_an_image_the_platform_chooses_says_which_nodes_boot_it():
    image = {"image_id": None, "pinned": None, "source": "ack-image-type", "applies_to": "ACK's image"}
    assert dict(runtime_lines({"node_image": image}))["node image"] == ["ACK's image"]


def test_a_concern_the_outputs_lack_is_named_not_dropped():
    lines = dict(runtime_lines({}))
    assert set(lines) == {h for _, h in RUNTIME_OUTPUTS} and all(v == [MISSING_TEXT] for v in lines.values())


def test_every_preset_plan_shows_every_run_time_concern():
    """Acceptance of issue 21: each preset's plan (the golden plans) declares its health gate, repair path, checkpoint
    location, metric producers and node image, and the Markdown shows each without a 'not declared'."""
    from blueprints.profile.stackconfig import preset_names
    from blueprints.review.render import render_markdown
    from blueprints.testing import offline_plan

    for name in preset_names():
        plan = offline_plan(name)
        missing = [key for key, _ in RUNTIME_OUTPUTS if plan.outputs.get(key) is None]
        assert missing == [], f"{name} declares no {missing}"
        section = render_markdown(plan).split("### Run time", 1)[1].split("### Diagram", 1)[0]
        assert MISSING_TEXT not in section and section.count("- **") == len(RUNTIME_OUTPUTS), (name, section)
