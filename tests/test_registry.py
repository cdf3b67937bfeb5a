"""The registry finds every blueprint by itself, and each one provides the whole contract: a pure spec generic over its
own profile model, a builder for that spec, a preset; nothing outside a blueprint's own package compares its name.

Every list here is derived (the registry, the package tree, the presets); none names the shipped blueprints.
"""

from __future__ import annotations

import datetime as dt
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from blueprints import architectures
from blueprints.advisor.budget import BudgetTier
from blueprints.advisor.data import limits
from blueprints.architectures.base.build import BlueprintBuilder, builder_for
from blueprints.architectures.base.spec import BlueprintSpec
from blueprints.catalog import instance_price, load_catalog
from blueprints.profile.model import ProfileBase
from blueprints.profile.stackconfig import load_preset, preset_names

PACKAGE = Path(architectures.__file__).resolve().parents[1]
ARCHITECTURES = Path(architectures.__file__).resolve().parent
TODAY = dt.date(2026, 11, 30)
SPECS = architectures.specs()


def package_dir(cls: type) -> Path:
    """The folder of the blueprint package that defines ``cls``."""
    return Path(inspect.getfile(cls)).resolve().parent


def generic_argument(cls: type) -> object:
    """The type argument of the generic base ``cls`` was declared
    with (``EcsSpec[FixedClusterProfile]`` → the profile)."""
    (base,) = [b for b in cls.__orig_bases__ if typing.get_origin(b) is not None]
    (argument,) = typing.get_args(base)
    return argument


def test_the_registry_finds_blueprints():
    assert SPECS and list(SPECS) == sorted(SPECS)


@pytest.mark.parametrize("name, cls", sorted(SPECS.items()))
def test_every_blueprint_provides_the_whole_contract(name, cls):
    assert issubclass(cls, BlueprintSpec) and cls.name == name and not inspect.isabstract(cls)
    assert cls.__doc__ and len(cls.__doc__.split()) > 20, "the docstring states the architecture and why"
    model = cls.profile_model
    # The spec is generic over exactly the profile model it parses with: its compute fields read typed, no casts.
    assert generic_argument(cls) is model
    assert issubclass(model, ProfileBase) and model.model_fields["blueprint"].annotation.__args__ == (name,)
    ecs_nodes = model.model_fields["compute"].annotation.node_catalog == "instance_types"
    tiers = cls.budget_tiers(limits())
    assert cls.compute_zone_count >= 1
    if ecs_nodes:
        assert model.alias_count_fields and all(
            f in model.model_fields["compute"].annotation.model_fields for f in model.alias_count_fields
        )
        assert tiers and all(isinstance(t, BudgetTier) and t.blueprint == name for t in tiers)
        compute = cls.compute_from_choice("ecs.gn7e-c16g1.32xlarge", 3)
        assert compute["instance_type"] == "ecs.gn7e-c16g1.32xlarge"
        # What a recommendation becomes is a valid profile of this very blueprint.
        profile = {**load_preset("medical-imaging"), "blueprint": name, "compute": compute}
    else:
        # Nodes that are not ECS types (Lingjun machine types): no article alias resolves to them, and with no
        # published GPU or price the advisor can never choose them, so the blueprint serves no budget tier.
        assert model.alias_count_fields == () and tiers == ()
        (profile,) = [load_preset(p) for p in preset_names() if load_preset(p)["blueprint"] == name]
    parsed = architectures.parse(profile, catalog=load_catalog(), today=TODAY)
    assert isinstance(parsed, model)
    spec = architectures.spec_for(parsed, load_catalog(), TODAY)
    assert type(spec) is cls
    summary = spec.summary()
    assert summary["blueprint"] == name and summary["instance_type"] == profile["compute"]["instance_type"]
    nodes, _ = spec.price_basis()
    price = instance_price(spec.catalog, spec.instance.instance_type, summary["region"]).cny
    if price is None:
        assert summary["compute_price"].startswith("unknown: ") and not ecs_nodes
    else:
        assert summary["compute_cny_per_hour"] == pytest.approx(nodes * price)
    # Its builder sits beside it, builds exactly this spec class, and is complete.
    builder = builder_for(spec)
    assert isinstance(builder, BlueprintBuilder) and not inspect.isabstract(type(builder)) and builder.spec is spec
    assert generic_argument(type(builder)) is cls and package_dir(type(builder)) == package_dir(cls)


def test_every_concrete_spec_in_the_package_is_registered():
    # A blueprint package whose spec module forgets ``SPEC`` would silently vanish; none does.
    defined = set()
    for info in pkgutil.walk_packages([str(ARCHITECTURES)], prefix=f"{architectures.__name__}."):
        module = importlib.import_module(info.name)
        defined |= {
            obj
            for obj in vars(module).values()
            if inspect.isclass(obj)
            and issubclass(obj, BlueprintSpec)
            and not inspect.isabstract(obj)
            and obj.__module__ == module.__name__
        }
    assert defined == set(SPECS.values())


def test_a_blueprint_declared_twice_is_refused(monkeypatch):
    found = list(pkgutil.iter_modules(architectures.__path__, prefix=f"{architectures.__name__}."))
    monkeypatch.setattr(architectures.pkgutil, "iter_modules", lambda *_args, **_kw: found + found)
    architectures.specs.cache_clear()
    try:
        with pytest.raises(TypeError, match=r"blueprint '[a-z-]+' is declared twice: by blueprints\.architectures\."):
            architectures.specs()
    finally:
        monkeypatch.undo()
        architectures.specs.cache_clear()
    assert architectures.specs() == SPECS


def test_every_preset_names_a_registered_blueprint_and_every_blueprint_has_a_preset():
    # A preset is how a blueprint gets its golden plan (tests/test_golden.py), so every blueprint has one.
    assert {load_preset(p)["blueprint"] for p in preset_names()} == set(SPECS)


def test_the_budget_tiers_cover_every_budget_once():
    # Per level of jobs sharing a pool: a lone job's tiers, and the shared-pool tiers that need parallel jobs.
    tiers = architectures.budget_tiers(limits())
    levels = sorted({t.min_jobs_in_parallel for t in tiers})
    assert levels[0] == 1 and len(levels) > 1
    for level in levels:
        minimums = [t.min_cny_per_year for t in tiers if t.min_jobs_in_parallel == level]
        assert minimums == sorted(minimums, reverse=True) and minimums[-1] == 0 and len(set(minimums)) == len(minimums)


def test_no_module_outside_the_blueprints_compares_blueprint_names():
    names = "|".join(re.escape(n) for n in SPECS)
    pattern = re.compile(rf"""["']({names})["']""")
    own = {package_dir(cls) for cls in SPECS.values()}
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent in own:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}")
    assert offenders == []


@pytest.mark.parametrize("tier", architectures.budget_tiers(limits()), ids=lambda t: f"{t.blueprint}:{t.name}")
def test_a_tier_sizes_its_nodes_for_the_jobs_it_serves(tier):
    # A tier for parallel jobs holds them all at once (2 nodes per job × its minimum of jobs); a lone-job tier, one job.
    jobs = tier.min_jobs_in_parallel
    compute = tier.compute("ecs.gn7e-c16g1.32xlarge", 2, jobs)
    profile = architectures.parse(
        {**load_preset("medical-imaging"), "blueprint": tier.blueprint, "compute": compute},
        catalog=load_catalog(),
        today=TODAY,
    )
    spec = architectures.spec_for(profile, load_catalog(), TODAY)
    assert spec.price_basis()[0] == 2 * jobs
    assert spec.expected_nodes() in (2, None)  # one job spans the node count chosen for it
    # What the blueprint keeps up on top of the foundation names exactly one price source each.
    assert all((s.item is None) != (s.instance_type is None) and s.quantity > 0 for s in tier.standing)
    assert (jobs > 1) == bool(tier.why_parallel)


def test_the_registry_and_every_spec_load_without_pulumi():
    # import-linter sees the static imports; this sees what discovery imports at run time, in a fresh interpreter.
    script = (
        "import sys\n"
        "from blueprints.advisor.data import limits\n"
        "from blueprints.architectures import budget_tiers, parse, spec_for, specs\n"
        "from blueprints.catalog import load_catalog\n"
        "from blueprints.profile.stackconfig import load_preset, preset_names\n"
        "import datetime\n"
        "catalog, today = load_catalog(), datetime.date(2026, 11, 30)\n"
        "budget_tiers(limits())\n"
        "for name in preset_names():\n"
        "    spec = spec_for(parse(load_preset(name), catalog=catalog, today=today), catalog, today)\n"
        "    spec.summary(); spec.security_notes(); spec.cost_context()\n"
        "print(len(specs()), sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_alicloud')))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.split(" ", 1) == [str(len(SPECS)), "[]\n"]
