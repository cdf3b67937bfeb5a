"""The resource-kind registry (blueprints/kinds/): every type a preset or golden variant plans is a kind with every
decision made, the records agree with the data they point at, and a type without a record fails closed (AIT039)."""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_golden import GOLDEN_PLANS  # the named variants the golden plans are made of

from blueprints import kinds
from blueprints.catalog import load_catalog
from blueprints.core.errors import UserInputError
from blueprints.export import load_terraform_names
from blueprints.kinds import (
    KINDS,
    Free,
    Kind,
    KindError,
    NoKeyProperties,
    Priced,
    ReplacingInputs,
    Role,
    Terraform,
    Unpriced,
    kind_of,
    module_for,
)
from blueprints.profile.stackconfig import preset_names
from blueprints.review import guardrails
from blueprints.review.costing import price_plan
from blueprints.review.diff.replacement import load_replacement_table, replacement_table
from blueprints.review.guardrails.known import known_kinds
from blueprints.review.plan import Plan, PlannedResource
from blueprints.review.render import key_properties
from blueprints.testing import offline_plan

ROOT = Path(__file__).resolve().parents[1]
EFLO = "alicloud:eflo/node:Node"
# Every preset as it is, and every golden variant (test_golden.GOLDEN_PLANS), each planned once.
VARIANTS = {f"{name} (preset)": (name, {}) for name in preset_names()} | {
    f"{name} (golden)": variant for name, variant in GOLDEN_PLANS.items()
}
# The opt-in account controls (flow log, audit trail) bring kinds the presets leave out.
VARIANTS["medical-imaging (flow log and trail)"] = (
    "medical-imaging",
    {
        "security.flow_log": {"project": "audit-logs", "logstore": "vpc-flow"},
        "security.actiontrail": {"sls_project_arn": "acs:log:cn-shanghai:1234567890:project/audit-logs"},
    },
)


@pytest.fixture(scope="module")
def variant_plans() -> dict[str, Plan]:
    return {label: offline_plan(preset, overrides=overrides) for label, (preset, overrides) in VARIANTS.items()}


def custom(plan: Plan) -> list[PlannedResource]:
    return [r for r in plan.resources if r.custom]


# ---- every planned type is a kind with its decisions made ----


def test_every_planned_type_is_a_kind_with_every_decision(variant_plans):
    for label, plan in variant_plans.items():
        missing = sorted({f"{r.type} → {module_for(r.type)}" for r in custom(plan) if kind_of(r.type) is None})
        assert missing == [], f"{label}: types without a kind"
        for r in custom(plan):
            kind = kind_of(r.type)
            assert kind is not None
            assert isinstance(kind.pricing, (Priced, Free, Unpriced)), (label, r.type)
            assert isinstance(kind.key_properties, (tuple, NoKeyProperties)) and kind.key_properties != (), r.type
        assert [f for f in plan.findings if f["rule"] == "AIT039"] == [], label


def test_every_planned_row_shows_key_properties_unless_its_kind_declares_none(variant_plans):
    """A kind's key properties are inputs the plan really has: no blank row in the table but on purpose."""
    for label, plan in variant_plans.items():
        blank = sorted(
            {
                r.short_type
                for r in custom(plan)
                if not key_properties(r) and not isinstance(kind_of(r.type).key_properties, NoKeyProperties)
            }
        )
        assert blank == [], f"{label}: rows without key properties"


def test_the_variants_cover_the_kinds_aitrain_creates(variant_plans):
    planned = {r.type for plan in variant_plans.values() for r in custom(plan)}
    assert {
        "alicloud:vpc/flowLog:FlowLog",
        "alicloud:actiontrail/trail:Trail",
        "kubernetes:apps/v1:Deployment",
    } <= planned
    assert len(planned) >= 50


# ---- records agree with the data they point at ----


def test_the_terraform_export_maps_exactly_the_kinds_that_say_so():
    mapped = {token for token, kind in KINDS.items() if kind.terraform is Terraform.MAPPED}
    assert mapped == set(load_terraform_names().types)
    assert {k.token for k in KINDS.values() if k.terraform is Terraform.PROVIDER} == {"pulumi:providers:alicloud"}


def test_the_replacement_table_has_rows_for_exactly_the_kinds_that_name_a_source():
    table = replacement_table()
    sourced = {k.short_type for k in KINDS.values() if k.replacing_inputs is not ReplacingInputs.UNKNOWN}
    assert sourced == set(table.replacing)
    for (short, _), source in table.sources.items():
        assert source.startswith(kinds.kind_of_short_type(short).replacing_inputs.value), short


HEADER = "type,input,terraform_argument,source,marks\n"
DOWNTIME = "type,takes_down,unavailable_for,source\n"


@pytest.mark.parametrize(
    "row, message",
    [
        (
            "eflo.Node,machineType,a,aliyun/terraform-provider-alicloud@x:y,ForceNew\n",
            "line 2: type = 'eflo.Node': is not a resource kind: add its record to blueprints/kinds/",
        ),
        (
            "kms.Key,keySpec,a,aliyun/terraform-provider-alicloud@x:y,ForceNew\n",
            "line 2: type = 'kms.Key': its kind (blueprints/kinds/kms.py) says its replacing inputs are unknown",
        ),
        (
            "ecs.Instance,imageId,a,pulumi/pulumi-kubernetes@x:y,ForceNew\n",
            "line 2: source = 'pulumi/pulumi-kubernetes@x:y': must start with aliyun/terraform-provider-alicloud@"
            " (ReplacingInputs.TERRAFORM_DOCS, as its kind in blueprints/kinds/ecs.py says)",
        ),
    ],
)
def test_a_replacement_row_the_kinds_do_not_vouch_for_is_refused(tmp_path, row, message):
    (tmp_path / "replacing_inputs.csv").write_text(HEADER + row)
    (tmp_path / "delete_first_downtime.csv").write_text(DOWNTIME + "eflo.Node,the nodes,10 min,somewhere\n")
    with pytest.raises(UserInputError) as err:
        load_replacement_table(tmp_path)
    assert message in err.value.render()
    assert "delete_first_downtime.csv: line 2: type = 'eflo.Node': is not a resource kind" in err.value.render()


def test_each_module_declares_only_its_own_services():
    """So the file AIT039 names for a new type is the one its service's records are in."""
    for module in kinds.MODULES:
        for kind in module.KINDS:
            assert kinds.service_of(kind.token) in module.SERVICES, (module.__name__, kind.token)
            assert module_for(kind.token) == f"blueprints/kinds/{module.__name__.rsplit('.', 1)[1]}.py"
            assert (ROOT / module_for(kind.token)).is_file()
    assert module_for("alicloud:log/store:Store") == "blueprints/kinds/audit.py"
    assert module_for(EFLO) == "blueprints/kinds/eflo.py" and kinds.is_new_module(EFLO)
    assert module_for("kubernetes:batch/v1:Job") == "blueprints/kinds/kubernetes.py"
    assert module_for("pulumi:providers:random") == "blueprints/kinds/providers.py"


def test_roles_are_what_their_consumers_held():
    """The role sets that replaced the consumers' tables (NODE_TYPES, STATEFUL_TYPES, COMPUTE_TYPES, …)."""

    def shorts(role: Role) -> set[str]:
        return {k.short_type for k in kinds.with_role(role)}

    assert shorts(Role.NODE) == {
        "ecs.EcsInstanceSet",
        "ecs.EcsLaunchTemplate",
        "ess.ScalingConfiguration",
        "ecs.Instance",
        "cs.NodePool",
    }
    assert shorts(Role.NODE_TEMPLATE) == {"ecs.EcsLaunchTemplate", "ess.ScalingConfiguration"}
    assert shorts(Role.STATEFUL) == {"nas.FileSystem", "oss.Bucket", "ecs.EcsDisk", "kms.Key", "actiontrail.Trail"}
    assert shorts(Role.COMPUTE_GROUP) == {"ess.ScalingGroup", "ecs.EcsInstanceSet", "ecs.Instance"}
    assert shorts(Role.IN_VSWITCH) == shorts(Role.COMPUTE_GROUP) | {"nas.MountTarget", "vpc.NatGateway"}
    assert shorts(Role.STORAGE_ACCESS) == {"nas.MountTarget", "oss.Bucket"}
    assert shorts(Role.PROVIDER) == {"pulumi:providers:alicloud", "pulumi:providers:kubernetes"}
    assert {k.short_type: k.deletion_protection for k in KINDS.values() if k.deletion_protection} == {
        "ess.ScalingGroup": ("groupDeletionProtection", True),
        "vpc.NatGateway": ("deletionProtection", True),
        "ecs.EipAddress": ("deletionProtection", True),
    }


def test_no_table_of_types_is_left_outside_the_registry():
    """Outside blueprints/kinds/ (and the Pulumi-facing components and architectures) no module keeps a collection
    of type names; the rules that are about particular types may name them inside their own functions, and two rule
    tables say which inputs of which bucket settings or RAM identities they read."""
    type_name = re.compile(r"^([a-z]+\.[A-Z]\w*|alicloud:\w+/\w+:\w+|kubernetes:[\w.]+/\w+:\w+|pulumi:providers:\w+)$")
    rule_tables = {
        ("blueprints/review/guardrails/bucket.py", "_BUCKET_SETTINGS"),
        ("blueprints/review/guardrails/identity.py", "_NO_USERS"),
    }
    found = []
    for path in sorted((ROOT / "blueprints").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(("blueprints/kinds/", "blueprints/components/", "blueprints/architectures/")):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_level = {id(n.value): n for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
                continue
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            names = [
                i.value
                for i in items
                if isinstance(i, ast.Constant) and isinstance(i.value, str) and type_name.match(i.value)
            ]
            if len(names) < 2:
                continue
            owner = module_level.get(id(node))
            target = owner.targets[0] if isinstance(owner, ast.Assign) else owner.target if owner else None
            label = target.id if isinstance(target, ast.Name) else None
            if owner is not None and (rel, label) in rule_tables:
                continue
            if (
                owner is None
                and rel.startswith("blueprints/review/guardrails/")
                and rel != "blueprints/review/guardrails/inputs.py"
            ):
                continue  # inside a rule function: a rule about these very types
            found.append(f"{rel}:{node.lineno} {names}")
    assert found == []


# ---- records cannot leave a decision open ----


DECIDED = dict(
    token="alicloud:eflo/node:Node",
    key_properties=("machineType",),
    pricing=Unpriced("no catalog price for Lingjun nodes"),
    terraform=Terraform.UNMAPPED,
    replacing_inputs=ReplacingInputs.UNKNOWN,
)


@pytest.mark.parametrize("field", ["key_properties", "pricing", "terraform", "replacing_inputs"])
def test_a_record_without_a_decision_cannot_be_built(field):
    with pytest.raises(TypeError, match=f"missing 1 required keyword-only argument: '{field}'"):
        Kind(**{k: v for k, v in DECIDED.items() if k != field})


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"key_properties": ()},
            "key_properties is an empty tuple; name the inputs the plan table shows, or write NoKeyProperties",
        ),
        ({"key_properties": NoKeyProperties("")}, "NoKeyProperties needs a reason"),
        ({"key_properties": ("machine_type",)}, "are not engine (camelCase) input names"),
        ({"pricing": None}, "pricing = None must be Priced(pricer), Free(why) or Unpriced(why)"),
        ({"pricing": Free(" ")}, "Free needs a reason"),
        ({"terraform": "mapped"}, "terraform = 'mapped' must be one of Terraform.MAPPED"),
        ({"roles": frozenset({Role.NODE_TEMPLATE})}, "a node template carries node inputs, so it is a Role.NODE too"),
        ({"roles": frozenset({Role.COMPUTE_GROUP})}, "a compute group runs nodes, so it needs a capacity"),
        ({"stateful_loss": "the nodes"}, "add Role.STATEFUL"),
        ({"roles": frozenset({Role.PROVIDER})}, "Role.PROVIDER is for pulumi:providers:* tokens"),
        ({"token": "eflo.Node"}, "is not a Pulumi type token"),
    ],
)
def test_a_wrong_decision_is_refused_naming_the_token(change, message):
    with pytest.raises(KindError, match=re.escape(message)) as err:
        Kind(**{**DECIDED, **change})
    assert change.get("token", DECIDED["token"]) in str(err.value)


def test_none_on_purpose_is_a_decision():
    kind = Kind(**{**DECIDED, "key_properties": NoKeyProperties("a Lingjun node's inputs are all ids")})
    assert kind.key_inputs() == () and kind.short_type == "eflo.Node"


def test_a_token_declared_twice_is_refused():
    module = SimpleNamespace(__name__="blueprints.kinds.twice", KINDS=(Kind(**DECIDED), Kind(**DECIDED)))
    with pytest.raises(KindError, match="kind alicloud:eflo/node:Node is declared twice"):
        kinds._registry((module,))


# ---- every pricer runs on a plausible resource ----

TEMPLATE = (
    "alicloud:ecs/ecsLaunchTemplate:EcsLaunchTemplate",
    "tpl",
    {"instanceType": "ecs.gn7i-c8g1.2xlarge", "systemDisk": {"size": 100}},
)
GROUP = ("alicloud:ess/scalingGroup:ScalingGroup", "group", {"minSize": 0, "maxSize": 4})
# Per priced kind: the resource (token, name, inputs) and the resources it names; its lines are on ``owner``.
SAMPLES: dict[str, tuple[tuple[str, str, dict], tuple[tuple[str, str, dict], ...], str]] = {
    "alicloud:vpc/natGateway:NatGateway": (
        ("alicloud:vpc/natGateway:NatGateway", "nat", {"natType": "Enhanced"}),
        (),
        "nat",
    ),
    "alicloud:ecs/eipAddress:EipAddress": (
        ("alicloud:ecs/eipAddress:EipAddress", "eip", {"bandwidth": "100"}),
        (
            (
                "alicloud:ecs/eipAssociation:EipAssociation",
                "assoc",
                {"allocationId": "${eip.id}", "instanceType": "Nat"},
            ),
        ),
        "eip",
    ),
    "alicloud:ecs/ecsInstanceSet:EcsInstanceSet": (
        (
            "alicloud:ecs/ecsInstanceSet:EcsInstanceSet",
            "set",
            {"amount": 2, "launchTemplateId": "${tpl.id}", "instanceType": "ecs.gn7i-c8g1.2xlarge"},
        ),
        (TEMPLATE,),
        "set",
    ),
    "alicloud:ecs/instance:Instance": (
        ("alicloud:ecs/instance:Instance", "node", {"instanceType": "ecs.g7.large", "systemDiskSize": 40}),
        (),
        "node",
    ),
    "alicloud:ecs/ecsDisk:EcsDisk": (
        ("alicloud:ecs/ecsDisk:EcsDisk", "disk", {"category": "cloud_essd", "size": 500, "performanceLevel": "PL1"}),
        (),
        "disk",
    ),
    "alicloud:ess/scalingGroup:ScalingGroup": (
        (
            "alicloud:ess/scalingGroup:ScalingGroup",
            "group",
            {"minSize": 1, "maxSize": 4, "launchTemplateId": "${tpl.id}"},
        ),
        (TEMPLATE,),
        "group",
    ),
    "alicloud:ess/scalingConfiguration:ScalingConfiguration": (
        (
            "alicloud:ess/scalingConfiguration:ScalingConfiguration",
            "config",
            {"scalingGroupId": "${group.id}", "instanceType": "ecs.g7.large"},
        ),
        (GROUP,),
        "group",
    ),
    "alicloud:cs/managedKubernetes:ManagedKubernetes": (
        ("alicloud:cs/managedKubernetes:ManagedKubernetes", "cluster", {"clusterSpec": "ack.pro.small"}),
        (),
        "cluster",
    ),
    "alicloud:cs/nodePool:NodePool": (
        (
            "alicloud:cs/nodePool:NodePool",
            "pool",
            {"instanceTypes": ["ecs.g7.xlarge"], "desiredSize": 2, "systemDiskSize": 120},
        ),
        (),
        "pool",
    ),
    "alicloud:nas/fileSystem:FileSystem": (
        (
            "alicloud:nas/fileSystem:FileSystem",
            "fs",
            {"fileSystemType": "extreme", "storageType": "standard", "capacity": 100},
        ),
        (),
        "fs",
    ),
    "alicloud:oss/bucket:Bucket": (("alicloud:oss/bucket:Bucket", "bucket", {"bucket": "data"}), (), "bucket"),
    "kubernetes:core/v1:Service": (
        ("kubernetes:core/v1:Service", "lb", {"spec": {"type": "LoadBalancer", "ports": [{"port": 443}]}}),
        (),
        "lb",
    ),
    "kubernetes:core/v1:PersistentVolumeClaim": (
        (
            "kubernetes:core/v1:PersistentVolumeClaim",
            "claim",
            {"spec": {"storageClassName": "alicloud-disk-essd", "resources": {"requests": {"storage": "100Gi"}}}},
        ),
        (),
        "claim",
    ),
}


def test_every_priced_kind_has_a_sample():
    assert set(SAMPLES) == {token for token, kind in KINDS.items() if isinstance(kind.pricing, Priced)}


@pytest.mark.parametrize("token", sorted(SAMPLES))
def test_every_pricer_prices_a_plausible_resource(token):
    (own_token, name, inputs), others, owner = SAMPLES[token]
    resources = [PlannedResource(t, n, None, True, i) for t, n, i in ((own_token, name, inputs), *others)]
    costs = price_plan(resources, load_catalog(), "cn-shanghai")
    lines = [line for line in costs["lines"] if line["resource"] == owner]
    assert lines, f"{token}: no cost line on {owner}"
    assert all(line["type"] == kind_of(next(r.type for r in resources if r.name == owner)).short_type for line in lines)


def test_a_type_without_a_kind_is_an_unpriced_line_never_a_silent_skip():
    costs = price_plan(
        [PlannedResource(EFLO, "lingjun", None, True, {"machineType": "efg2.NC8"})], load_catalog(), "cn-shanghai"
    )
    (line,) = [line for line in costs["lines"] if line["resource"] == "lingjun"]
    assert line["item"] == f"{EFLO}: no resource kind, not priced" and line["cny_per_month"] is None
    assert line["source"] == "no resource kind: add one to blueprints/kinds/eflo.py"
    assert (
        costs["totals"]["complete"] is False
        and f"lingjun: {EFLO}: no resource kind, not priced" in costs["totals"]["unknown"]
    )


# ---- the offline mocks answer a kind's computed outputs ----


def test_the_mocks_answer_computed_and_counted_outputs():
    from blueprints.engine.preview import OfflineMocks

    mocks = OfflineMocks(["cn-shanghai-a"], None)
    for token, kind in KINDS.items():
        inputs = {count: 3 for _, count in kind.counted_outputs}
        _, state = mocks.new_resource(SimpleNamespace(typ=token, name="r", inputs=inputs))
        for attribute in kind.computed_outputs:
            assert state[attribute] == f"${{r.{attribute}}}", token
        for attribute, _ in kind.counted_outputs:
            assert state[attribute] == [f"${{r.{attribute}[{i}]}}" for i in range(3)], token
    _, state = mocks.new_resource(SimpleNamespace(typ=EFLO, name="x", inputs={"zone": "a"}))
    assert state == {"zone": "a"}


# ---- a type without a kind fails closed (AIT039) ----

EFLO_FINDING = (
    f"{EFLO} has no resource kind: aitrain cannot price, count, diff, export or guard a type it has no record of;"
    f" add Kind(token='{EFLO}', …) to blueprints/kinds/eflo.py (a new service: create the module and list it in"
    " blueprints/kinds/__init__.py MODULES)"
)


def test_the_unknown_type_finding_names_the_type_and_its_file():
    job = "kubernetes:batch/v1:Job"
    resources = [
        PlannedResource(EFLO, "n0", None, True, {}),
        PlannedResource("aitrain:x:Component", "component", None, False, {}),
        PlannedResource(EFLO, "n1", None, True, {}),
        PlannedResource(job, "train", None, True, {}),
        PlannedResource(EFLO, "n2", None, True, {}),
    ]
    plan = Plan("component", "cn-shanghai", "t", {}, (), tuple(resources))
    assert list(known_kinds(plan)) == [
        ("n0", EFLO_FINDING.replace("has no resource kind:", "has no resource kind (and 2 more of its resources):")),
        (
            "train",
            f"{job} has no resource kind: aitrain cannot price, count, diff, export or guard a type it has no record"
            f" of; add Kind(token='{job}', …) to blueprints/kinds/kubernetes.py",
        ),
    ]
    assert {r.id: r.level for r in guardrails.RULES}["AIT039"] == "error"


def test_a_plan_with_an_eflo_node_shows_the_error():
    """The real engine path: a program with an alicloud.eflo.Node, previewed as `aitrain plan` previews a stack."""
    import pulumi_alicloud as alicloud

    from blueprints.engine.preview import preview
    from blueprints.profile.stackconfig import PRESET_KEY

    def program():
        alicloud.eflo.Node("lingjun-node", machine_type="efg2.NC8", zone="cn-shanghai-b", hpn_zone="B1")

    plan = preview(
        {PRESET_KEY: "medical-imaging"}, catalog=load_catalog(), today=dt.date(2026, 11, 30), program=program
    )
    assert {"rule": "AIT039", "level": "error", "resource": "lingjun-node", "message": EFLO_FINDING} in plan.findings
    assert plan.costs["totals"]["complete"] is False


def test_the_test_kit_fails_on_an_unknown_type():
    import pulumi_alicloud as alicloud

    from blueprints.testing import assert_guardrails, offline_mocks

    with offline_mocks() as stack:
        alicloud.eflo.Node("lingjun-node", machine_type="efg2.NC8", zone="cn-shanghai-b")
    with pytest.raises(
        AssertionError, match=r"error: \[AIT039\] lingjun-node: alicloud:eflo/node:Node has no resource kind"
    ):
        assert_guardrails(stack.resources)


def test_a_preset_holds_no_unknown_type_and_a_retyped_resource_fires(medical_plan):
    """The preset has no AIT039 finding; the same plan with a resource of a type aitrain does not know has one."""
    assert [f for f in guardrails.check(medical_plan) if f.rule == "AIT039"] == []
    retyped = dataclasses.replace(
        medical_plan,
        resources=tuple(
            dataclasses.replace(r, type=EFLO) if r.short_type == "ecs.EcsDeploymentSet" else r
            for r in medical_plan.resources
        ),
    )
    assert [(f.rule, f.level) for f in guardrails.check(retyped) if f.rule == "AIT039"] == [("AIT039", "error")]
