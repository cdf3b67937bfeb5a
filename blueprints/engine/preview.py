"""Offline preview: run the real Pulumi program under mocks and record every resource into a Plan."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional, Sequence, Union

import pulumi
from pulumi.runtime import rpc
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.stack import Stack, run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from blueprints.catalog import Catalog
from blueprints.catalog.availability import zone_source_note
from blueprints.core.errors import MISSING, Problem, UserInputError
from blueprints.core.layout import LayoutError
from blueprints.kinds import kind_of
from blueprints.profile.image import OUTPUT_KEY as NODE_IMAGE_OUTPUT
from blueprints.profile.image import unpinned_note
from blueprints.profile.model import ProfileBase
from blueprints.review import guardrails
from blueprints.review.costing import price_plan, storage_summary
from blueprints.review.costing_capacity import reservation_summary
from blueprints.review.diff.reimage import newer_image_effect
from blueprints.review.plan import Plan, PlannedResource

OFFLINE_STACK = "offline"
# How the engine marks a secret value in a property map.
SECRET_SIG_KEY, SECRET_SIG_VALUE = rpc._special_sig_key, rpc._special_secret_sig


def reference(name: str, attribute: str) -> str:
    """How the plan shows a value known only after deployment."""
    return f"${{{name}.{attribute}}}"


ZoneAnswer = Union[Sequence[str], Callable[[Optional[str]], Sequence[str]]]
# ``get_images``: one ID for every lookup, or an answer per name_regex (the catalog's images of the region).
ImageAnswer = Union[str, Callable[[Optional[str]], Optional[str]], None]


class OfflineMocks(pulumi.runtime.Mocks):
    """Answers resource registrations and invokes from the catalog, and records every registration.

    ``zones`` answers ``get_zones``: a list (every type in those zones) or a function of the instance type
    (``None`` when the call names none), as the cloud answers per type.
    """

    def __init__(self, zones: ZoneAnswer, image_id: ImageAnswer):
        self.zones = zones
        self.image_id = image_id
        self.registered: list[pulumi.runtime.MockResourceArgs] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        """Record the registration; echo inputs plus placeholders for computed outputs."""
        self.registered.append(args)
        state = dict(args.inputs)
        kind = kind_of(args.typ)
        # Provider-computed outputs the program reads stay empty under mocks, so the preview answers them with a
        # visible reference (``${name.attr}``) that a reviewer reads as "known after deployment".
        for attribute in kind.computed_outputs if kind else ():
            state.setdefault(attribute, reference(args.name, attribute))
        for attribute, count in kind.counted_outputs if kind else ():
            # One reference per unit (an instance set's instanceIds: one per instance it launches).
            state[attribute] = [
                reference(args.name, f"{attribute}[{i}]") for i in range(int(args.inputs.get(count, 0)))
            ]
        return reference(args.name, "id"), state

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:  # type: ignore[override]  # a dict is an accepted answer
        """Answer the data sources the program uses, from the catalog: zones
        and images (and an ACK cluster's kubeconfig, as a reference)."""
        if args.token == "alicloud:index/getZones:getZones":
            wanted = args.args.get("availableInstanceType")
            ids = list(self.zones(wanted) if callable(self.zones) else self.zones)
            zones = [{"id": z, "localName": z, "availableInstanceTypes": [wanted] if wanted else []} for z in ids]
            return {"ids": ids, "zones": zones}
        if args.token == "alicloud:ecs/getImages:getImages":
            answer = self.image_id(args.args.get("nameRegex")) if callable(self.image_id) else self.image_id
            ids = [answer] if answer else []
            return {"ids": ids, "images": [{"id": i, "name": i} for i in ids]}
        if args.token == "alicloud:ecs/getInstances:getInstances":
            # The instances an instance set launched: their private IPs are known after deployment.
            ids = list(args.args.get("ids") or [])
            return {"ids": ids, "instances": [{"id": i, "privateIp": f"${{{i.strip('${}')}.privateIp}}"} for i in ids]}
        if args.token == "alicloud:index/getCallerIdentity:getCallerIdentity":
            # The account the stack deploys into is known only to the real run.
            return {"accountId": reference("caller", "accountId"), "identityType": "", "arn": "", "id": ""}
        if args.token == "alicloud:cs/getClusterCredential:getClusterCredential":
            # A kubeconfig exists only once the cluster does: shown as a reference to the cluster's credential.
            cluster = str(args.args.get("clusterId", "cluster")).strip("${}").removesuffix(".id")
            return {"clusterId": args.args.get("clusterId"), "kubeConfig": reference(cluster, "kubeConfig")}
        raise NotImplementedError(f"the offline preview has no answer for {args.token}")


@dataclass
class _OptionsRecorder:
    """Records what mocks never see: data-safety options, ``depends_on`` edges and component outputs."""

    by_key: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def __call__(self, args: pulumi.ResourceTransformationArgs) -> None:
        opts = args.opts or pulumi.ResourceOptions()
        parent = opts.parent
        self.by_key[(args.type_, args.name)] = {
            "parent": getattr(parent, "_name", None) if parent is not None and not isinstance(parent, Stack) else None,
            "protect": bool(opts.protect),
            "retain_on_delete": bool(opts.retain_on_delete),
            "delete_before_replace": bool(opts.delete_before_replace),
            "ignore_changes": tuple(opts.ignore_changes or ()),
            "replace_on_changes": tuple(opts.replace_on_changes or ()),
            "depends_on": _resource_names(opts.depends_on),
        }
        return None

    def outputs_registered(self, component: pulumi.ComponentResource, outputs: Any) -> None:
        """Remember the keys a component passed to ``register_outputs`` (the stack's own call is not a component's)."""
        if isinstance(component, Stack):
            return
        entry = self.by_key.setdefault((component._type, component._name), {})
        entry["registered_outputs"] = tuple(sorted(str(k) for k in (outputs or {})))


def _resource_names(depends_on: Any) -> tuple[str, ...]:
    """Logical names of ``opts.depends_on`` (a resource or a list of them), sorted for a stable plan."""
    if depends_on is None:
        return ()
    items = depends_on if isinstance(depends_on, (list, tuple)) else [depends_on]
    return tuple(sorted(getattr(d, "_name", str(d)) for d in items))


def run_program(
    program: Callable[[], None],
    config: dict[str, str],
    *,
    zones: ZoneAnswer,
    image_id: ImageAnswer,
    project: str = "aitrain",
    mocks: OfflineMocks | None = None,
) -> tuple[list[pulumi.runtime.MockResourceArgs], dict[tuple[str, str], dict[str, Any]], dict[str, Any]]:
    """Run ``program`` under fresh mocks with ``config``; return (registrations, options by key, stack outputs)."""
    mocks = mocks or OfflineMocks(zones, image_id)
    with recording_mocks(mocks, config, project=project) as recorder:
        _sync_await(run_pulumi_func(program))
        root = pulumi_settings.get_root_resource()
        outputs = {
            key: _sync_await(pulumi.Output.from_input(value).future())
            for key, value in (getattr(root, "outputs", None) or {}).items()
        }
    return mocks.registered, recorder.by_key, outputs


@contextlib.contextmanager
def recording_mocks(
    mocks: OfflineMocks, config: dict[str, str], *, project: str = "aitrain"
) -> Iterator[_OptionsRecorder]:
    """Fresh Pulumi settings under ``mocks`` and ``config``, on an event loop of their own, recording what mocks
    never see (data-safety options, ``depends_on``, each component's ``register_outputs`` keys).

    Shared by ``run_program`` and the test kit's ``offline_mocks``, so both record the same things. The
    ``register_outputs`` wrapper lives only inside the block and is restored even if the program fails.
    """
    with own_event_loop():
        pulumi_settings.reset_options(project=project, stack=OFFLINE_STACK)
        pulumi.runtime.set_mocks(mocks, project=project, stack=OFFLINE_STACK, preview=False)
        pulumi.runtime.set_all_config(config)
        recorder = _OptionsRecorder()
        pulumi.runtime.register_stack_transformation(recorder)
        original = pulumi.ComponentResource.register_outputs

        def register_outputs(self: pulumi.ComponentResource, outputs_: Any) -> None:
            recorder.outputs_registered(self, outputs_)
            original(self, outputs_)

        pulumi.ComponentResource.register_outputs = register_outputs  # type: ignore[method-assign,assignment]
        try:
            yield recorder
        finally:
            pulumi.ComponentResource.register_outputs = original  # type: ignore[method-assign]


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

    loop.set_default_executor(
        concurrent.futures.ThreadPoolExecutor(thread_name_prefix="aitrain-offline", initializer=thread_loop)
    )
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
            if previous is None and previous_set is False and local is not None:
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


def record(
    program: Callable[[], None],
    config: dict[str, str] | None = None,
    *,
    zones: ZoneAnswer,
    image_id: ImageAnswer = None,
) -> tuple[list[PlannedResource], dict[str, Any]]:
    """Run any Pulumi program offline; return its resources in tree order and its stack outputs."""
    registered, options, outputs = run_program(program, config or {}, zones=zones, image_id=image_id)
    return planned_resources(registered, options), _clean(outputs)


def planned_resources(
    registered: list[pulumi.runtime.MockResourceArgs], options: dict[tuple[str, str], dict[str, Any]]
) -> list[PlannedResource]:
    """Mock registrations plus the recorded options → PlannedResources in tree order; duplicate URNs refused."""
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
                replace_on_changes=opts.get("replace_on_changes", ()),
                depends_on=opts.get("depends_on", ()),
                registered_outputs=opts.get("registered_outputs", ()),
                provider=provider_name(r.provider),
            )
        )
    check_unique_urns(resources)
    return _tree_order(resources)


def provider_name(reference: str | None) -> str | None:
    """The logical name in a provider reference (``urn:…$pulumi:providers:alicloud::NAME::ID``); None when default."""
    if not reference:
        return None
    urn = reference.rsplit("::", 1)[0]
    return urn.rsplit("::", 1)[-1] or None


def catalog_images(catalog: Catalog, region: str) -> Callable[[Optional[str]], Optional[str]]:
    """``get_images`` as the catalog answers it in ``region``: the image ID of the row with that name pattern (the
    plain OS image and Alibaba's GPU images have different patterns); None when the region has no such row."""

    def answer(name_regex: str | None) -> str | None:
        for wanted in (region, "*"):
            for image in catalog.images:
                if image.name_regex == name_regex and image.region == wanted:
                    return image.image_id
        return None

    return answer


def catalog_zones(catalog: Catalog, region: str) -> Callable[[Optional[str]], list[str]]:
    """``get_zones`` as the cloud answers it: the zones of ``region`` that offer the type, from the catalog.

    Where the catalog does not know a type's zones, every zone of the region (the plan says so in a note).
    """

    def answer(instance_type: str | None) -> list[str]:
        offering = catalog.zones_offering(instance_type, region) if instance_type else None
        return list(offering) if offering else list(catalog.zones(region))

    return answer


def preview(
    config: dict[str, str],
    *,
    catalog: Catalog,
    today: dt.date,
    program: Callable[[], None] | None = None,
    newest_image: str | None = None,
) -> Plan:
    """The Plan of an engine-form stack config: the real program (as ``infra/__main__.py`` runs it) under mocks.

    The profile for the summary is read from the same config by the same functions the program uses.
    ``newest_image`` answers ``get_images`` (the newest image of the catalog's pattern) instead of the catalog's ID:
    how a test plans the day Alibaba publishes a newer image.
    """
    from blueprints.architectures import profile_models, spec_for
    from blueprints.components.errors import ResourceError
    from blueprints.engine.program import run
    from blueprints.profile.stackconfig import read_settings, resolve

    settings = read_settings(config, source="(offline plan)")
    _, profile = resolve(settings, profile_models(), catalog=catalog, today=today)
    spec = spec_for(profile, catalog, today)
    # The pattern the nodes' image came from: Alibaba's GPU image for the family where the catalog has one.
    preinstalled = getattr(spec, "preinstalled_image", None)
    image = (preinstalled() if preinstalled else None) or catalog.image_for(profile.region)
    try:
        resources, outputs = record(
            program or (lambda: run(catalog, today)),
            config,
            zones=catalog_zones(catalog, profile.region),
            image_id=newest_image or catalog_images(catalog, profile.region),
        )
    except (pulumi.RunError, LayoutError) as exc:
        # The program's own message (a layout the cloud would refuse), as a user error: exit 2, no traceback. A
        # component's ResourceError gives its bare message: the profile problem is the same whichever resource saw it.
        text = exc.message if isinstance(exc, ResourceError) else str(exc).removeprefix("error: ")
        raise UserInputError("cannot plan this profile", [Problem("profile", MISSING, text)]) from None
    costs = price_plan(resources, catalog, profile.region, scenarios_context=spec.cost_context())
    plan = Plan(
        blueprint=profile.blueprint,
        region=profile.region,
        profile_name=profile.name,
        summary={**spec.summary(), **storage_summary(costs), **reservation_summary(costs)},
        costs=costs,
        notes=tuple(
            n
            for n in (
                profile.description or None,
                profile.alias_note,
                *_zone_notes(profile, outputs, catalog),
                unpinned_note(
                    outputs.get(NODE_IMAGE_OUTPUT), image.name_regex if image else None, newer_image_effect(resources)
                ),
                *spec.security_notes(),
            )
            if n
        ),
        resources=tuple(resources),
        outputs=outputs,
    )
    return guardrails.with_findings(plan, profile.guardrails.skips())


def _zone_notes(profile: ProfileBase, outputs: dict[str, Any], catalog: Catalog) -> list[str]:
    """Say where compute lands relative to storage, and when zone availability is assumed."""
    notes = []
    compute_zones = outputs.get("compute_zone_ids") or []
    storage_zone = outputs.get("storage_zone_id")
    if storage_zone and compute_zones and storage_zone not in compute_zones:
        notes.append(
            f"Compute runs in {', '.join(compute_zones)}; the file system "
            f"stays in {storage_zone} (storage never follows compute), "
            "so nodes mount it across zones. Pin storage.zone and network.zones "
            "to one zone that offers the type to keep them together."
        )
    if not profile.storage.zone:
        notes.append(
            f"storage.zone is not set: the file system goes to {storage_zone}, the region's first zone; record it in "
            f"the stack config (storage.zone: {storage_zone})."
        )
    note = zone_source_note(catalog, profile.compute.instance_type, profile.region)
    if note:
        notes.append(note)
    return notes


def check_unique_urns(resources: list[PlannedResource]) -> None:
    """Refuse what the engine refuses: two resources with one type and logical name (one URN)."""
    seen: set[tuple[str, str]] = set()
    for r in resources:
        key = (r.type, r.name)
        if key in seen:
            raise LayoutError(
                f"two resources would have the same URN ({r.type} '{r.name}'); `pulumi up` refuses duplicate URNs"
            )
        seen.add(key)


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
        if value.get(SECRET_SIG_KEY) == SECRET_SIG_VALUE:
            # A secret input (the cluster's kubeconfig): the plan names what it is, never its value.
            return f"[secret] {_clean(value.get('value'))}"
        return {str(k): _clean(v) for k, v in sorted(value.items()) if not str(k).startswith("__")}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
