"""blueprints.testing cannot pass silently: the README's pattern with `assert False` fails alone and with others."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from blueprints.components.storage import SharedStorage, SharedStorageArgs
from blueprints.review.plan import PlannedResource
from blueprints.testing import assert_guardrails, mocked, offline_mocks, record_program  # noqa: F401  (mocked: fixture)

ROOT = Path(__file__).resolve().parents[1]


def storage_args(**extra) -> SharedStorageArgs:
    values = dict(
        kind="extreme_nas",
        region="cn-shanghai",
        throughput_tier="advance",
        capacity_gib=32768,
        zone_id="cn-shanghai-a",
        vpc_id="vpc-1",
        vswitch_id="vsw-1",
        client_cidrs={"cn-shanghai-a": "10.0.0.0/20"},
    )
    values.update(extra)
    return SharedStorageArgs(**values)


# The README pattern, with a failing check written three ways.
USER_TESTS = """
from blueprints.components.storage import SharedStorage, SharedStorageArgs
from blueprints.testing import assert_guardrails, offline_mocks

ARGS = SharedStorageArgs(
    kind="extreme_nas", region="cn-shanghai", throughput_tier="advance", capacity_gib=32768, zone_id="cn-shanghai-a",
    vpc_id="vpc-1", vswitch_id="vsw-1", client_cidrs={"cn-shanghai-a": "10.0.0.0/20"},
)


def test_plain_assert():
    with offline_mocks(zones=["cn-shanghai-a"]) as stack:
        storage = SharedStorage("data", ARGS)
        assert False
    assert_guardrails(stack.resources)


def test_assert_in_apply():
    def check(value):
        assert False, "checked in apply"

    with offline_mocks(zones=["cn-shanghai-a"]) as stack:
        storage = SharedStorage("data", ARGS)
        storage.file_system_id.apply(check)
    assert_guardrails(stack.resources)


def test_resolve():
    with offline_mocks(zones=["cn-shanghai-a"]) as stack:
        storage = SharedStorage("data", ARGS)
        assert stack.resolve(storage.file_system_id) == "wrong"
"""
PASSING_TEST = """
from blueprints.testing import offline_plan


def test_other():
    assert offline_plan("medical-imaging").find("ecs.EcsInstanceSet")
"""


def _pytest(tmp_path: Path, *selection: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *selection],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_the_readme_pattern_fails_alone_and_with_others(tmp_path):
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    (tmp_path / "test_other.py").write_text(PASSING_TEST)
    # Alone: the check inside apply is the one pulumi's own test helper skipped when no mocks were set.
    for name in ("test_assert_in_apply", "test_plain_assert"):
        alone = _pytest(tmp_path, f"test_user.py::{name}")
        assert alone.returncode == 1 and "1 failed" in alone.stdout, alone.stdout + alone.stderr
        assert name != "test_assert_in_apply" or "checked in apply" in alone.stdout
    together = _pytest(tmp_path, "test_other.py", "test_user.py")
    assert together.returncode == 1 and "3 failed, 1 passed" in together.stdout, together.stdout + together.stderr


# Pulumi's documented way: `@pulumi.runtime.test` returning an `apply` check, no `set_mocks` of its own.
PULUMI_WAY = """
import pulumi
from blueprints.components.storage import SharedStorage, SharedStorageArgs

ARGS = SharedStorageArgs(
    kind="extreme_nas", region="cn-shanghai", throughput_tier="advance", capacity_gib=32768, zone_id="cn-shanghai-a",
    vpc_id="vpc-1", vswitch_id="vsw-1", client_cidrs={"cn-shanghai-a": "10.0.0.0/20"},
)


@pulumi.runtime.test
def test_failing_check():
    def check(fs_id):
        assert fs_id == "wrong", "checked in apply"

    return SharedStorage("data", ARGS).file_system_id.apply(check)


@pulumi.runtime.test
def test_passing_check():
    def check(values):
        fs_id, encrypt = values
        assert (fs_id, encrypt) == ("${data-fs.id}", 1)

    storage = SharedStorage("data", ARGS)
    return pulumi.Output.all(storage.file_system_id, storage.file_system.encrypt_type).apply(check)


def test_mocked_fixture_without_import(mocked):
    assert mocked.resolve(SharedStorage("data", ARGS).file_system_id) == "${data-fs.id}"
"""
# A Pulumi test with mocks of its own: the plugin must leave them in place (their ids, not the kit's).
OWN_MOCKS = """
import pulumi
import pulumi_alicloud as alicloud
import pytest
from pulumi.runtime import settings


class Mine(pulumi.runtime.Mocks):
    def new_resource(self, args):
        return "mine-" + args.name, args.inputs

    def call(self, args):
        return {}


@pytest.fixture
def own_mocks():
    pulumi.runtime.set_mocks(Mine(), project="p", stack="s", preview=False)
    yield
    settings.reset_options()


@pulumi.runtime.test
def test_own_mocks(own_mocks):
    def check(vpc_id):
        assert vpc_id == "mine-net"

    return alicloud.vpc.Network("net", cidr_block="10.0.0.0/16").id.apply(check)
"""


def test_a_pulumi_runtime_test_runs_under_the_kits_mocks_wherever_aitrain_is_installed(tmp_path):
    """No conftest and no import of blueprints.testing: the installed pytest11 entry point alone makes the check run."""
    (tmp_path / "test_pulumi_way.py").write_text(PULUMI_WAY)
    (tmp_path / "test_own_mocks.py").write_text(OWN_MOCKS)
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    failing = _pytest(tmp_path, "test_pulumi_way.py::test_failing_check")
    assert failing.returncode == 1 and "1 failed" in failing.stdout and "checked in apply" in failing.stdout, (
        failing.stdout + failing.stderr
    )
    passing = _pytest(tmp_path, "test_pulumi_way.py::test_passing_check")
    assert passing.returncode == 0 and "1 passed" in passing.stdout, passing.stdout + passing.stderr
    # With others, in either order around tests that set (and reset) mocks themselves.
    together = _pytest(tmp_path, "test_user.py", "test_own_mocks.py", "test_pulumi_way.py")
    assert together.returncode == 1 and "4 failed, 3 passed" in together.stdout, together.stdout + together.stderr
    assert "FAILED test_pulumi_way.py::test_failing_check" in together.stdout
    reverse = _pytest(tmp_path, "test_pulumi_way.py", "test_own_mocks.py")
    assert reverse.returncode == 1 and "1 failed, 3 passed" in reverse.stdout, reverse.stdout + reverse.stderr
    # The control: without the plugin, pulumi's helper passes the failing check silently (the trap it closes).
    unplugged = _pytest(tmp_path, "-p", "no:aitrain", "test_pulumi_way.py::test_failing_check")
    assert unplugged.returncode == 0 and "1 passed" in unplugged.stdout, unplugged.stdout + unplugged.stderr


def test_the_plugin_is_registered_as_a_pytest11_entry_point():
    from importlib.metadata import entry_points

    (plugin,) = [e for e in entry_points(group="pytest11") if e.name == "aitrain"]
    assert plugin.value == "blueprints.testing.plugin"


def test_is_pulumi_test_recognises_only_pulumi_s_wrapper():
    import functools

    import pulumi

    from blueprints.testing.plugin import is_pulumi_test

    def plain() -> None:
        pass

    assert is_pulumi_test(pulumi.runtime.test(plain))
    assert not is_pulumi_test(plain) and not is_pulumi_test(functools.wraps(plain)(lambda: None))


def test_offline_mocks_records_resources_with_options():
    with offline_mocks(zones=["cn-shanghai-a"]) as stack:
        storage = SharedStorage("data", storage_args())
        assert stack.resolve(storage.file_system_id) == "${data-fs.id}"
    fs = next(r for r in stack.resources if r.short_type == "nas.FileSystem")
    assert fs.protect and fs.retain_on_delete and fs.parent == "data" and fs.inputs["encryptType"] == 1
    assert_guardrails(
        stack.resources, skip=["AIT016"]
    )  # the snapshot policy no resource can apply: a warning until ApplyAutoSnapshotPolicy runs


def test_offline_mocks_does_not_nest():
    with offline_mocks(), pytest.raises(RuntimeError, match="already active"), offline_mocks():
        pass


def test_mocked_fixture(mocked):  # noqa: F811  (the fixture imported above)
    storage = SharedStorage("data", storage_args())
    assert mocked.resolve(storage.file_system_id) == "${data-fs.id}"


def test_assert_guardrails_takes_record_program_output():
    resources = record_program(lambda: SharedStorage("data", storage_args()), zones=["cn-shanghai-a"])
    assert isinstance(resources, list) and all(isinstance(r, PlannedResource) for r in resources)
    assert_guardrails(
        resources, skip=["AIT016"]
    )  # a NAS component alone: no VPC in the plan, and no false AIT006 (AIT016: the unapplied policy)
    bad = record_program(
        lambda: SharedStorage(
            "data", storage_args(kind="nas", throughput_tier="Performance", client_cidrs={"cn-shanghai-a": "0.0.0.0/0"})
        ),
        zones=["cn-shanghai-a"],
    )
    with pytest.raises(AssertionError, match=r"\[AIT006\] .*0\.0\.0\.0/0, which is not a private range"):
        assert_guardrails(bad)


def _rule(source: str) -> PlannedResource:
    return PlannedResource("alicloud:nas/accessRule:AccessRule", "rule", None, True, {"sourceCidrIp": source})


def _vpc(cidr: str) -> PlannedResource:
    return PlannedResource("alicloud:vpc/network:Network", "vpc", None, True, {"cidrBlock": cidr})


@pytest.mark.parametrize(
    ("resources", "fires"),
    [
        ([_rule("10.0.0.0/16")], False),  # alone, private: nothing to compare with, nothing wrong
        ([_rule("192.168.1.0/24")], False),
        ([_rule("0.0.0.0/0")], True),
        ([_rule("203.0.113.0/24")], True),
        ([_rule("10.0.0.0/16"), _vpc("10.0.0.0/16")], False),
        ([_rule("10.0.0.0/8"), _vpc("10.0.0.0/16")], True),  # private, but wider than the plan's VPC
        ([_rule("not-a-cidr")], True),
    ],
)
def test_ait006_judges_only_what_the_plan_holds(resources, fires):
    from blueprints.testing import as_plan

    assert any(f["rule"] == "AIT006" for f in as_plan(resources).findings) is fires


@pytest.mark.parametrize(
    ("resource", "fires"),
    [
        (PlannedResource("alicloud:nas/fileSystem:FileSystem", "fs", None, True, {"fileSystemType": "cpfs"}), True),
        (
            PlannedResource(
                "alicloud:nas/fileSystem:FileSystem", "fs", None, True, {"fileSystemType": "extreme", "encryptType": 1}
            ),
            False,
        ),
        (
            PlannedResource("alicloud:nas/fileSystem:FileSystem", "fs", None, True, {"fileSystemType": "standard"}),
            False,
        ),  # AIT005's, an error
        (PlannedResource("alicloud:oss/bucket:Bucket", "b", None, True, {}), False),  # AIT010's, an error
        (
            PlannedResource(
                "alicloud:oss/bucket:Bucket", "b", None, True, {"serverSideEncryptionRule": {"sseAlgorithm": "KMS"}}
            ),
            False,
        ),
        (PlannedResource("alicloud:ecs/ecsDisk:EcsDisk", "d", None, True, {"encrypted": False}), True),
    ],
)
def test_ait009_warns_on_unencrypted_storage(resource, fires):
    from blueprints.testing import as_plan

    findings = [f for f in as_plan([resource]).findings if f["rule"] == "AIT009"]
    assert bool(findings) is fires
    assert all(f["level"] == "warning" for f in findings)


def test_offline_mocks_records_what_the_plan_records():
    """The kit and the plan share one recording set-up: depends_on and register_outputs are seen in both."""
    from blueprints.components.network import TrainingNetwork, TrainingNetworkArgs
    from blueprints.testing import offline_mocks

    args = TrainingNetworkArgs(
        region="cn-shanghai",
        vpc_cidr="10.0.0.0/16",
        region_zones=("cn-shanghai-a",),
        storage_zone="cn-shanghai-a",
        instance_type="ecs.gn7e-c16g1.32xlarge",
        compute_zone_count=1,
    )
    with offline_mocks(zones=["cn-shanghai-a"]) as stack:
        TrainingNetwork("net", args)
    (component,) = [r for r in stack.resources if not r.custom]
    assert component.registered_outputs == (
        "compute_zone_ids",
        "security_group_id",
        "vpc_id",
        "vswitch_ids",
        "zone_ids",
    )
    assert [r.depends_on for r in stack.resources if r.short_type == "vpc.SnatEntry"] == [("net-nat-eip-association",)]


def test_assert_guardrails_fails_at_its_level_and_names_the_level():
    from blueprints.review import guardrails
    from blueprints.review.plan import PlannedResource

    # A launch template without IMDSv2 tokens: AIT008 fires, at its rule's level.
    template = PlannedResource(
        "alicloud:ecs/ecsLaunchTemplate:EcsLaunchTemplate", "t", None, True, {"systemDisk": {"encrypted": True}}
    )
    level = {r.id: r.level for r in guardrails.RULES}["AIT008"]
    with pytest.raises(
        AssertionError, match=rf"1 guardrail finding\(s\) at warning or above:\n  {level}: \[AIT008\] t: "
    ):
        assert_guardrails([template])
    assert_guardrails([template], skip=["AIT008"])  # the service-managed-key info (AIT019) is below the default level
    with pytest.raises(AssertionError, match=r"at info or above:\n  info: \[AIT019\] t: "):
        assert_guardrails([template], skip=["AIT008"], fail_level="info")
    with pytest.raises(ValueError, match="fail_level 'warn' is not one of error, warning, info"):
        assert_guardrails([template], fail_level="warn")
