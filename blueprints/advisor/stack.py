"""Turn a recommendation into the profile dict that ``aitrain plan``
and ``pulumi up`` accept, and into stack-config text."""

from __future__ import annotations

from typing import Any, Callable

from blueprints.advisor.choice import Recommendation
from blueprints.core.errors import Problem, UserInputError


def profile_dict(rec: Recommendation) -> dict[str, Any] | None:
    """The profile for the chosen option (None when nothing is feasible). Plain data, key order fixed."""
    if rec.chosen is None or rec.tier is None:
        return None
    job, chosen, tier = rec.job, rec.chosen, rec.tier
    # The blueprint that declared the tier says how the choice becomes its compute section.
    compute = dict(tier.compute)
    description = job.description or (
        f"aitrain recommend: {job.model_kind} {job.params:.3g} params, {chosen.estimated_hours or 0:,.1f} h per run"
    )
    profile: dict[str, Any] = {
        "name": job.name,
        "blueprint": tier.blueprint,
        "description": " ".join(description.split()),
        "region": job.region,
        "compute": compute,
    }
    if rec.storage is not None:
        storage: dict[str, Any] = {
            "kind": rec.storage.kind,
            "capacity_gib": rec.storage.capacity_gib,
            "throughput_tier": rec.storage.profile_tier,
        }
        if rec.storage.kind == "cpfs":
            # The throughput needs CPFS, which the NAS API cannot encrypt; the profile requires saying so explicitly.
            storage["allow_unencrypted_cpfs"] = True
        profile["storage"] = storage
    if rec.cpu_group is not None and tier.cpu_preprocess:
        # The vCPUs of the chosen nodes cannot feed their GPUs: the CPU group the input-pipeline check sized.
        profile["preprocess"] = {"instance_type": rec.cpu_group.instance_type, "nodes": rec.cpu_group.nodes}
    profile["network"] = {"vpc_cidr": "10.0.0.0/16"}
    profile["cost"] = {"spot": tier.spot}
    profile["tags"] = {"workload": job.name, "sized-by": "aitrain-recommend"}
    return profile


def stack_config_text(rec: Recommendation, validate: Callable[[dict[str, Any]], object]) -> str:
    """YAML of a ``Pulumi.<stack>.yaml`` for the chosen option, checked first by ``validate``.

    ``validate`` is the parser ``aitrain plan`` uses (``blueprints.architectures.parse``); it raises
    ``UserInputError`` for a profile the blueprint would refuse.
    """
    profile = profile_dict(rec)
    if profile is None:
        raise UserInputError(
            "nothing to write",
            [
                Problem(
                    "--write",
                    None,
                    "no option meets the job's constraints, so there is no stack config; relax as suggested above",
                )
            ],
        )
    validate(profile)
    from blueprints.profile.stackconfig import render_stack_config

    return render_stack_config(profile)
