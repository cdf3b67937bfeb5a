"""`aitrain image pin` and the node_image output: the image is recorded in the stack config, every other byte kept;
bad input is exit 2 with nothing written; the plan says plainly when the image is not pinned."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from blueprints.cli.main import app
from blueprints.testing import offline_plan

runner = CliRunner()
OLD = "ubuntu_22_04_x64_20G_alibase_20230815.vhd"  # the catalog's answer to get_images offline

STACK = """\
# Production training stack — keep this comment
encryptionsalt: v1:abc123:def456
config:
  alicloud:region: cn-shanghai   # provider region
  aitrain:preset: medical-imaging
  team:api-key:
    secure: AAABAHxyzSECRETCIPHERTEXT==

  aitrain:profile:
    storage:
      zone: cn-shanghai-a
    compute:
      nodes: 2
  other:flag: "true"
# trailing comment
"""


@pytest.fixture
def stack(tmp_path):
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(STACK, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def outputs_data():
    """What `pulumi stack output --json` of this stack holds (the offline plan's outputs are the program's own)."""
    plan = offline_plan("medical-imaging", overrides={"storage.zone": "cn-shanghai-a", "compute.nodes": 2})
    return json.loads(plan.to_json())["outputs"]


@pytest.fixture
def outputs(tmp_path, outputs_data):
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(outputs_data), encoding="utf-8")
    return path


def invoke(*args):
    return runner.invoke(app, ["image", "pin", *map(str, args)])


def non_aitrain_lines(text: str) -> list[str]:
    """Every line outside the aitrain:* entries (which the stack-file writer keeps together where the first was)."""
    return [line for line in text.splitlines() if "aitrain:" not in line and not line.startswith("    ")]


def test_without_write_it_shows_the_change_and_writes_nothing(stack, outputs):
    before = stack.read_bytes()
    result = invoke("--stack-config", stack, "--from-outputs", outputs)
    assert result.exit_code == 0, result.output
    assert (
        "aitrain image pin: medical-imaging (fixed-cluster) — compute.image_id: (not pinned: the newest image at "
        f"each `pulumi up`) -> {OLD}" in result.stdout
    )
    assert f"+      image_id: {OLD}" in result.stdout
    assert f"not written: add --write to change {stack}" in result.stdout
    assert stack.read_bytes() == before


def test_from_outputs_writes_the_field_and_keeps_every_other_byte(stack, outputs):
    result = invoke("--stack-config", stack, "--from-outputs", outputs, "--write")
    assert result.exit_code == 0, result.output
    text = stack.read_text(encoding="utf-8")
    # The secret, salt, comments and other keys byte for byte; the profile gains one line, in its own key order.
    assert non_aitrain_lines(text) == non_aitrain_lines(STACK)
    for kept in ("encryptionsalt: v1:abc123:def456\n", "  team:api-key:\n    secure: AAABAHxyzSECRETCIPHERTEXT==\n"):
        assert kept in text
    assert (
        "  aitrain:profile:\n    storage:\n      zone: cn-shanghai-a\n    compute:\n      nodes: 2\n"
        f"      image_id: {OLD}\n" in text
    )
    config = yaml.safe_load(text)["config"]
    assert config["aitrain:profile"]["compute"] == {"nodes": 2, "image_id": OLD}
    assert config["team:api-key"] == {"secure": "AAABAHxyzSECRETCIPHERTEXT=="}
    assert "Next `pulumi up`: nothing changes on the nodes the outputs describe" in result.stdout
    # The pinned stack plans the same resources; its output and notes say it is pinned.
    pinned = offline_plan(stack_config=stack)
    unpinned = offline_plan("medical-imaging", overrides={"storage.zone": "cn-shanghai-a", "compute.nodes": 2})
    assert [r.inputs for r in pinned.resources] == [r.inputs for r in unpinned.resources]
    assert pinned.outputs["node_image"] == {"image_id": OLD, "pinned": True, "source": "profile"}
    assert not any("not pinned" in n for n in pinned.notes)
    again = invoke("--stack-config", stack, "--from-outputs", outputs, "--write")
    assert again.exit_code == 0 and "already pinned" in again.stdout


def test_image_id_pins_a_chosen_image(stack):
    result = invoke("--stack-config", stack, "--image-id", "m-uf6bbbbbbbbbbbbbbbbb", "--write")
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(stack.read_text())["config"]["aitrain:profile"]["compute"]["image_id"] == (
        "m-uf6bbbbbbbbbbbbbbbbb"
    )
    assert "nodes not already on it are stopped and re-imaged: check with `aitrain diff`" in result.stdout


def refused(result, *needles):
    assert result.exit_code == 2, result.output
    message = result.stderr
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in message, message
    return message


@pytest.mark.parametrize(
    "bad",
    ["bad id", "m-abc;rm -rf /", "-leading-dash", "x" * 129, "ubuntu_22_04_x64_20G_alibase_2023\n0815.vhd", ""],
)
def test_a_malformed_image_id_is_refused_and_nothing_is_written(stack, bad):
    before = stack.read_bytes()
    refused(invoke("--stack-config", stack, "--image-id", bad, "--write"), "--image-id", "must be an ECS image ID")
    assert stack.read_bytes() == before


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"profile_name": "other-stack"}, "profile_name = 'other-stack': the stack config is profile_name"),
        ({"region": "cn-beijing"}, "region = 'cn-beijing'"),
        ({"blueprint": "autoscaling-pool"}, "blueprint = 'autoscaling-pool'"),
    ],
)
def test_outputs_of_another_stack_are_refused(stack, tmp_path, outputs_data, change, needle):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**outputs_data, **change}), encoding="utf-8")
    before = stack.read_bytes()
    refused(invoke("--stack-config", stack, "--from-outputs", other, "--write"), "outputs of another stack", needle)
    assert stack.read_bytes() == before


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{", "is not JSON"),
        ('{"vpc_id": "vpc-1"}', "these are not aitrain stack outputs"),
        (None, "does not exist"),
    ],
)
def test_a_missing_or_foreign_outputs_file_is_refused(stack, tmp_path, content, needle):
    path = tmp_path / "outputs.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    before = stack.read_bytes()
    refused(invoke("--stack-config", stack, "--from-outputs", path, "--write"), needle)
    assert stack.read_bytes() == before


def test_outputs_without_node_image_name_both_ways_out(stack, tmp_path, outputs_data):
    old = tmp_path / "old.json"
    old.write_text(json.dumps({k: v for k, v in outputs_data.items() if k != "node_image"}), encoding="utf-8")
    refused(invoke("--stack-config", stack, "--from-outputs", old), "node_image.image_id", "--image-id")


def test_a_malformed_image_in_the_outputs_is_refused(stack, tmp_path, outputs_data):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**outputs_data, "node_image": {"image_id": "a b", "pinned": False}}), encoding="utf-8")
    refused(invoke("--stack-config", stack, "--from-outputs", bad, "--write"), "node_image.image_id = 'a b'")


def test_a_missing_stack_file_and_a_missing_choice_are_refused(tmp_path, stack, outputs):
    refused(invoke("--stack-config", tmp_path / "nope.yaml", "--image-id", "m-abc"), "file does not exist")
    refused(invoke("--stack-config", stack), "give exactly one")
    refused(invoke("--stack-config", stack, "--image-id", "m-abc", "--from-outputs", outputs), "give exactly one")
    refused(invoke("--stack-config", stack, "--image-id", "m-abc", "--newest"), "--image-id and --newest")


def test_outputs_that_disagree_with_a_pinned_image_are_refused(stack, outputs):
    assert invoke("--stack-config", stack, "--image-id", "m-uf6pinned", "--write").exit_code == 0
    before = stack.read_bytes()
    refused(invoke("--stack-config", stack, "--from-outputs", outputs, "--write"), "m-uf6pinned", "--image-id")
    assert stack.read_bytes() == before


def test_a_kubernetes_pool_without_a_login_node_has_nothing_to_pin(tmp_path):
    path = tmp_path / "Pulumi.k8s.yaml"
    path.write_text("config:\n  aitrain:preset: kubernetes-training\n", encoding="utf-8")
    refused(invoke("--stack-config", path, "--image-id", "m-abc", "--write"), "ACK's image")
    assert path.read_text() == "config:\n  aitrain:preset: kubernetes-training\n"


def test_a_secret_in_the_aitrain_keys_is_refused_before_anything_is_written(tmp_path):
    path = tmp_path / "Pulumi.s.yaml"
    text = "config:\n  aitrain:preset: medical-imaging\n  aitrain:profile:\n    name:\n      secure: v1:XYZ\n"
    path.write_text(text, encoding="utf-8")
    refused(invoke("--stack-config", path, "--image-id", "m-abc", "--write"), "is a Pulumi secret")
    assert path.read_text() == text


def test_the_plan_says_plainly_when_the_image_is_not_pinned(medical_plan):
    assert medical_plan.outputs["node_image"] == {"image_id": OLD, "pinned": False, "source": "newest-at-plan"}
    (note,) = [n for n in medical_plan.notes if "not pinned" in n]
    assert note.startswith("compute.image_id is not pinned: every `pulumi up` resolves the newest system image")
    assert "a routine `pulumi up` stops and re-images 12 nodes" in note
    assert "aitrain image pin --stack-config Pulumi.<stack>.yaml --from-outputs outputs.json --write" in note


def test_the_kubernetes_pool_exports_an_ecs_image_only_with_a_login_node():
    plan = offline_plan("kubernetes-training")
    ack = plan.outputs["node_image"]  # no ECS image to pin: ACK's image of image_type, never re-imaging running nodes
    assert (ack["image_id"], ack["pinned"], ack["source"]) == (None, None, "ack-image-type")
    assert "running nodes are never re-imaged" in ack["applies_to"] and not any("not pinned" in n for n in plan.notes)
    with_login = offline_plan(
        "kubernetes-training",
        overrides={"network.admin_cidr": "203.0.113.0/24", "access.login_node": True, "access.key_pair_name": "ops"},
    )
    image = with_login.outputs["node_image"]
    assert (image["pinned"], image["source"]) == (False, "newest-at-plan")
    assert image["applies_to"].startswith("the login node; the GPU pool's nodes boot ACK's")
    (note,) = [n for n in with_login.notes if "not pinned" in n]
    assert "stops and re-images 1 node (the login node)" in note


def describe_answer(images, total=None):
    return json.dumps({"TotalCount": len(images) if total is None else total, "Images": {"Image": images}})


@pytest.fixture
def fake_aliyun(monkeypatch):
    """Replaces the aliyun CLI: records each argv and answers DescribeImages from ``pages`` (one answer per call)."""
    import subprocess

    import blueprints.cli.image as image_cli

    calls: list[list[str]] = []
    pages: list[tuple[int, str, str]] = []

    def run(argv):
        calls.append(argv)
        code, out, err = pages[len(calls) - 1]
        return subprocess.CompletedProcess(argv, code, out, err)

    monkeypatch.setattr(image_cli, "_run", run)
    return calls, pages


def test_newest_asks_describe_images_with_the_programs_filter_prints_it_and_pins_the_latest_match(stack, fake_aliyun):
    calls, pages = fake_aliyun
    filler = [
        {"ImageId": f"centos_{i}.vhd", "ImageName": f"centos_{i}", "CreationTime": "2026-01-01T00:00:00Z"}
        for i in range(98)
    ]
    first = [
        {
            "ImageId": OLD,
            "ImageName": "ubuntu_22_04_x64_20G_alibase_20230815.vhd",
            "CreationTime": "2023-08-15T06:49:06Z",
        },
        {
            "ImageId": "m-newer-but-other-name",
            "ImageName": "aliyun_3_x64_20G_alibase_20261101.vhd",
            "CreationTime": "2026-11-01T00:00:00Z",
        },
        *filler,
    ]
    newest = "ubuntu_22_04_x64_20G_alibase_20261120.vhd"
    second = [{"ImageId": newest, "ImageName": newest, "CreationTime": "2026-11-20T02:00:00Z"}]
    pages += [(0, describe_answer(first, total=101), ""), (0, describe_answer(second, total=101), "")]
    result = invoke("--stack-config", stack, "--newest", "--write")
    assert result.exit_code == 0, result.output
    expected = [
        "aliyun",
        "ecs",
        "DescribeImages",
        "--RegionId",
        "cn-shanghai",
        "--ImageOwnerAlias",
        "system",
        "--InstanceType",
        "ecs.gn7e-c16g1.32xlarge",
        "--PageSize",
        "100",
        "--PageNumber",
    ]
    assert calls == [[*expected, "1"], [*expected, "2"]]
    # Each call is printed before it runs.
    assert "running: aliyun ecs DescribeImages --RegionId cn-shanghai --ImageOwnerAlias system" in result.stdout
    assert f"newest: {newest} ({newest}, created 2026-11-20T02:00:00Z)" in result.stdout
    assert yaml.safe_load(stack.read_text())["config"]["aitrain:profile"]["compute"]["image_id"] == newest


@pytest.mark.parametrize(
    ("answer", "needle"),
    [
        ((1, "", "InvalidAccessKeyId.NotFound"), "InvalidAccessKeyId.NotFound"),
        ((0, "not json", ""), "cannot read the answer"),
        ((0, '{"RequestId": "x"}', ""), "cannot read the answer"),
        ((0, '{"TotalCount": 1, "Images": {"Image": ["m-abc"]}}', ""), "cannot read the answer"),
        ((0, describe_answer([{"ImageId": "x", "ImageName": "centos_7", "CreationTime": "2026"}]), ""), "matches"),
    ],
)
def test_newest_that_fails_or_finds_nothing_is_exit_1_and_writes_nothing(stack, fake_aliyun, answer, needle):
    _, pages = fake_aliyun
    pages.append(answer)
    before = stack.read_bytes()
    result = invoke("--stack-config", stack, "--newest", "--write")
    assert result.exit_code == 1 and needle in result.stderr, result.output
    assert stack.read_bytes() == before


def test_newest_without_the_aliyun_cli_is_exit_2(stack, monkeypatch):
    import blueprints.cli.image as image_cli

    def missing(argv):
        raise FileNotFoundError(argv[0])

    monkeypatch.setattr(image_cli, "_run", missing)
    refused(invoke("--stack-config", stack, "--newest", "--write"), "aliyun", "--image-id")
