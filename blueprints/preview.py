"""Offline preview: run the real Pulumi program under mocks and record every resource into a Plan."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import pulumi
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.stack import Stack, run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from blueprints import guardrails
from blueprints.catalog import load_catalog
from blueprints.plan import Plan, PlannedResource
from blueprints.profile import ProfileModel, alias_note
from blueprints.stackconfig import PROFILE_KEY

OFFLINE_STACK = "offline"

# Provider-computed outputs the program reads. Under mocks they would stay empty, so the preview answers
# them with a visible reference (``${name.attr}``) that a reviewer reads as "known after deployment".
COMPUTED_OUTPUTS: dict[str, tuple[str, ...]] = {
    "alicloud:vpc/natGateway:NatGateway": ("snatTableIds", "forwardTableIds"),
    "alicloud:ecs/eipAddress:EipAddress": ("ipAddress",),
    "alicloud:nas/mountTarget:MountTarget": ("mountTargetDomain",),
    "alicloud:ess/scalingRule:ScalingRule": ("ari",),
    "alicloud:ram/role:Role": ("arn",),
}


def reference(name: str, attribute: str) -> str:
    """How the plan shows a value known only after deployment."""
    return f"${{{name}.{attribute}}}"


class OfflineMocks(pulumi.runtime.Mocks):
    """Answers resource registrations and invokes from the catalog, and records every registration."""

    def __init__(self, zones: list[str], image_id: str | None):
        self.zones = zones
        self.image_id = image_id
        self.registered: list[pulumi.runtime.MockResourceArgs] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        """Record the registration; echo inputs plus placeholders for computed outputs."""
        self.registered.append(args)
        state = dict(args.inputs)
        for attribute in COMPUTED_OUTPUTS.get(args.typ, ()):
            state.setdefault(attribute, reference(args.name, attribute))
        return reference(args.name, "id"), state

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict:
        """Answer the data sources the program uses, from the catalog: zones and images."""
        if args.token == "alicloud:index/getZones:getZones":
            wanted = args.args.get("availableInstanceType")
            zones = [{"id": z, "localName": z, "availableInstanceTypes": [wanted] if wanted else []} for z in self.zones]
            return {"ids": list(self.zones), "zones": zones}
        if args.token == "alicloud:ecs/getImages:getImages":
            ids = [self.image_id] if self.image_id else []
            return {"ids": ids, "images": [{"id": i, "name": i} for i in ids]}
        raise NotImplementedError(f"the offline preview has no answer for {args.token}")


@dataclass
class _OptionsRecorder:
    """Records the options that matter for data safety, which mocks never see, at resource creation."""

    by_key: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def __call__(self, args: pulumi.ResourceTransformationArgs):
        opts = args.opts or pulumi.ResourceOptions()
        parent = opts.parent
        self.by_key[(args.type_, args.name)] = {
            "parent": getattr(parent, "_name", None) if parent is not None and not isinstance(parent, Stack) else None,
            "protect": bool(opts.protect),
            "retain_on_delete": bool(opts.retain_on_delete),
            "delete_before_replace": bool(opts.delete_before_replace),
            "ignore_changes": tuple(opts.ignore_changes or ()),
        }
        return None


def run_program(program: Callable[[], None], config: dict[str, str], *, zones: list[str], image_id: str | None, project: str = "aitrain", mocks: OfflineMocks | None = None) -> tuple[list, dict, dict]:
    """Run ``program`` under fresh mocks with ``config``; return (registrations, options by key, stack outputs)."""
    with own_event_loop():
        pulumi_settings.reset_options(project=project, stack=OFFLINE_STACK)
        mocks = mocks or OfflineMocks(zones, image_id)
        pulumi.runtime.set_mocks(mocks, project=project, stack=OFFLINE_STACK, preview=False)
        pulumi.runtime.set_all_config(config)
        recorder = _OptionsRecorder()
        pulumi.runtime.register_stack_transformation(recorder)
        outputs: dict[str, Any] = {}
        _sync_await(run_pulumi_func(program))
        root = pulumi_settings.get_root_resource()
        for key, value in (getattr(root, "outputs", None) or {}).items():
            outputs[key] = _sync_await(pulumi.Output.from_input(value).future())
    return mocks.registered, recorder.by_key, outputs


@contextlib.contextmanager
def own_event_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """A fresh event loop for one offline run, closed afterwards.

    Pulumi's ``_sync_await`` otherwise lets ``asyncio.get_event_loop()`` create loops that nobody closes: one in
    the main thread and one in every executor thread the mock monitor serialises in. At interpreter exit such a
    loop's ``__del__`` may run after its self-pipe socket was already collected and print "Exception ignored in
    BaseEventLoop.__del__ … Invalid file descriptor: -1" to stderr (a few % of runs). So the run gets its own
    loop and its own executor whose threads' loops are closed too. Inside an already running loop (a caller's
    own async test) the caller's loop is used as it is.
    """
    if asyncio._get_running_loop() is not None:
        yield asyncio.get_running_loop()
        return
    policy = asyncio.get_event_loop_policy()
    local = getattr(policy, "_local", None)  # peek at the thread's loop without creating one
    previous, previous_set = getattr(local, "_loop", None), getattr(local, "_set_called", None)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    thread_loops: list[asyncio.AbstractEventLoop] = []

    def thread_loop() -> None:
        # Runs first in each executor thread: the loop pulumi would create there lazily, but one we can close.
        thread_loops.append(asyncio.new_event_loop())
        asyncio.set_event_loop(thread_loops[-1])

    loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(thread_name_prefix="aitrain-offline", initializer=thread_loop))
    try:
        yield loop
    finally:
        try:
            _finish_tasks(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())  # joins the threads
        finally:
            for other in thread_loops:
                other.close()
            loop.close()
            asyncio.set_event_loop(previous if previous is not None and not previous.is_closed() else None)
            if previous is None and previous_set is False:
                # As before the run: code that later calls get_event_loop() (pulumi's own test helpers) gets a
                # new loop instead of "There is no current event loop".
                local._set_called = False


def _finish_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what the run left pending (unawaited outputs) and let the cancellations finish, quietly."""
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def record(program: Callable[[], None], config: dict[str, str] | None = None, *, zones: list[str], image_id: str | None = None) -> tuple[list[PlannedResource], dict[str, Any]]:
    """Run any Pulumi program offline; return its resources in tree order and its stack outputs."""
    registered, options, outputs = run_program(program, config or {}, zones=zones, image_id=image_id)
    resources = []
    for r in registered:
        opts = options.get((r.typ, r.name), {})
        resources.append(
            PlannedResource(
                type=r.typ,
                name=r.name,
                parent=opts.get("parent"),
                custom=bool(r.custom),
                inputs=_clean(r.inputs),
                protect=opts.get("protect", False),
                retain_on_delete=opts.get("retain_on_delete", False),
                delete_before_replace=opts.get("delete_before_replace", False),
                ignore_changes=opts.get("ignore_changes", ()),
            )
        )
    return _tree_order(resources), _clean(outputs)


def preview_profile(profile_dict: dict[str, Any], profile: ProfileModel, program: Callable[[], None] | None = None) -> Plan:
    """Run the real program (``blueprints.program.run``, as ``infra/__main__.py`` does) for one profile."""
    from blueprints.program import run

    catalog = load_catalog()
    zones = list(profile.network.zones) or list(catalog.zones(profile.region))
    image = catalog.image_for(profile.region)
    config = {PROFILE_KEY: json.dumps(profile_dict, sort_keys=True)}
    resources, outputs = record(program or run, config, zones=zones, image_id=image.image_id if image else None)
    plan = Plan(
        blueprint=profile.blueprint,
        region=profile.region,
        profile_name=profile.name,
        summary=summarize(profile),
        notes=tuple(n for n in (profile.description or None, alias_note(profile)) if n),
        resources=tuple(resources),
        outputs=outputs,
    )
    return dataclasses.replace(plan, findings=tuple(dataclasses.asdict(f) for f in guardrails.check(plan)))


def summarize(profile: ProfileModel) -> dict[str, Any]:
    """What a reviewer reads first: hardware, counts, storage and the compute price, with its source."""
    catalog = load_catalog()
    instance = catalog.instance_type(profile.compute.instance_type)
    compute = profile.compute
    summary: dict[str, Any] = {
        "blueprint": profile.blueprint,
        "region": profile.region,
        "instance_type": instance.instance_type,
        "gpu_model": instance.gpu_model,
        "gpus_per_node": instance.gpu_count,
        "gpu_memory_gib": instance.gpu_memory_gib,
        "vcpus_per_node": instance.vcpus,
        "memory_gib_per_node": instance.memory_gib,
    }
    if profile.blueprint == "fixed-cluster":
        nodes_for_price = compute.nodes
        summary.update(nodes=compute.nodes, gpus=compute.nodes * instance.gpu_count)
    else:
        nodes_for_price = compute.max_nodes
        summary.update(
            min_nodes=compute.min_nodes,
            max_nodes=compute.max_nodes,
            working_hours_nodes=compute.working_hours_nodes,
            max_gpus=compute.max_nodes * instance.gpu_count,
            scale_out_cpu_percent=compute.scale_out_cpu_percent,
            scale_in_gpu_percent=compute.scale_in_gpu_percent,
            off_hours=profile.cost.off_hours.enabled,
        )
    storage = profile.storage
    tier = next(t for t in catalog.storage_tiers(storage.kind) if t.storage_type == storage.throughput_tier)
    throughput = tier.throughput_mb_s(storage.capacity_gib)
    summary.update(
        storage_kind=storage.kind,
        storage_tier=storage.throughput_tier,
        storage_capacity_gib=storage.capacity_gib,
        storage_throughput_mb_s=round(throughput) if throughput is not None else "unknown (not in the catalog)",
        storage_price=(
            f"{round(tier.price_per_gib_month * storage.capacity_gib):,} {tier.price_currency}/month at {storage.capacity_gib:,} GiB"
            f" ({tier.price_per_gib_month} {tier.price_currency}/GiB-month, {tier.price_region}, {tier.price_date}; {tier.price_source})"
            if tier.price_per_gib_month is not None
            else "unknown: the catalog has no price for this tier"
        ),
        spot=profile.cost.spot,
        admin_cidr=profile.network.admin_cidr,
    )
    if instance.price_cny_per_hour is None:
        summary["compute_price"] = f"unknown: the catalog has no price for {instance.instance_type}"
    else:
        hourly = round(instance.price_cny_per_hour * nodes_for_price, 2)
        summary["compute_cny_per_hour"] = hourly
        summary["compute_price_basis"] = (
            f"{nodes_for_price} × {instance.price_cny_per_hour} CNY/h pay-as-you-go list price"
            f" ({instance.price_region}, {instance.price_date}; {instance.price_source})"
            + ("; at max_nodes" if profile.blueprint == "autoscaling-pool" else "")
            + ("; spot pays less, by a varying discount" if profile.cost.spot else "")
        )
    return summary


def _tree_order(resources: list[PlannedResource]) -> list[PlannedResource]:
    """Depth-first from the top level, siblings by name: a stable order whatever the registration order."""
    by_parent: dict[str | None, list[PlannedResource]] = {}
    names = {r.name for r in resources}
    for r in resources:
        parent = r.parent if r.parent in names else None
        by_parent.setdefault(parent, []).append(r)
    ordered: list[PlannedResource] = []

    def visit(parent: str | None) -> None:
        for r in sorted(by_parent.get(parent, []), key=lambda x: (x.custom, x.name)):
            ordered.append(r)
            visit(r.name)

    visit(None)
    return ordered


def _clean(value: Any) -> Any:
    """JSON-ready, deterministic values: dicts sorted by key, no Pulumi sentinels."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in sorted(value.items()) if not str(k).startswith("__")}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
