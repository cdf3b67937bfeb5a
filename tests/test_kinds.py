"""The resource-kind registry (blueprints/kinds/): every type a preset or golden variant plans is a kind with every
decision made, the records agree with the data they point at (Terraform names, replacement rows), the roles are the
sets the consumers held, no table of types is left outside it, and a record cannot leave a decision open.
What the consumers do with the kinds (pricers, mocks, AIT039): tests/test_kinds_consumers.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_golden import GOLDEN_PLANS  # the named variants the golden plans are made of

from blueprints import kinds
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
from blueprints.review.diff.replacement import load_replacement_table, replacement_table
from blueprints.review.plan import Plan, PlannedResource
from blueprints.review.render import key_properties
from blueprints.testing import offline_plan

ROOT = Path(__file__).resolve().parents[1]
UNKNOWN_TYPE = "alicloud:ehpc/jobTemplate:JobTemplate"
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
            "ehpc.JobTemplate,commandLine,a,aliyun/terraform-provider-alicloud@x:y,ForceNew\n",
            "line 2: type = 'ehpc.JobTemplate': is not a resource kind: add its record to blueprints/kinds/",
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
    (tmp_path / "delete_first_downtime.csv").write_text(DOWNTIME + "ehpc.JobTemplate,the jobs,10 min,somewhere\n")
    with pytest.raises(UserInputError) as err:
        load_replacement_table(tmp_path)
    assert message in err.value.render()
    assert "delete_first_downtime.csv: line 2: type = 'ehpc.JobTemplate': is not a resource kind" in err.value.render()


def test_each_module_declares_only_its_own_services():
    """So the file AIT039 names for a new type is the one its service's records are in."""
    for module in kinds.MODULES:
        for kind in module.KINDS:
            assert kinds.service_of(kind.token) in module.SERVICES, (module.__name__, kind.token)
            assert module_for(kind.token) == f"blueprints/kinds/{module.__name__.rsplit('.', 1)[1]}.py"
            assert (ROOT / module_for(kind.token)).is_file()
    assert module_for("alicloud:log/store:Store") == "blueprints/kinds/audit.py"
    assert module_for(UNKNOWN_TYPE) == "blueprints/kinds/ehpc.py" and kinds.is_new_module(UNKNOWN_TYPE)
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
    assert shorts(Role.IN_VSWITCH) == shorts(Role.COMPUTE_GROUP) | {
        "nas.MountTarget",
        "vpc.NatGateway",
        "eflo.Node",
        "eflo.HyperNode",
        "eflo.NodeGroupAttachment",
    }
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
    token="alicloud:ehpc/jobTemplate:JobTemplate",
    key_properties=("commandLine",),
    pricing=Unpriced("no catalog price for E-HPC job templates"),
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
        ({"token": "ehpc.JobTemplate"}, "is not a Pulumi type token"),
    ],
)
def test_a_wrong_decision_is_refused_naming_the_token(change, message):
    with pytest.raises(KindError, match=re.escape(message)) as err:
        Kind(**{**DECIDED, **change})
    assert change.get("token", DECIDED["token"]) in str(err.value)


def test_none_on_purpose_is_a_decision():
    kind = Kind(**{**DECIDED, "key_properties": NoKeyProperties("a job template's inputs are all scripts")})
    assert kind.key_inputs() == () and kind.short_type == "ehpc.JobTemplate"


def test_a_token_declared_twice_is_refused():
    module = SimpleNamespace(__name__="blueprints.kinds.twice", KINDS=(Kind(**DECIDED), Kind(**DECIDED)))
    with pytest.raises(KindError, match="kind alicloud:ehpc/jobTemplate:JobTemplate is declared twice"):
        kinds._registry((module,))


def test_every_service_module_is_found_without_a_list():
    """A new service is its own file: the registry reads every module of the package but ``model``."""
    files = sorted(p.stem for p in (ROOT / "blueprints" / "kinds").glob("*.py") if p.stem not in ("__init__", "model"))
    assert [m.__name__.rsplit(".", 1)[1] for m in kinds.MODULES] == files
    assert len(files) >= 12
