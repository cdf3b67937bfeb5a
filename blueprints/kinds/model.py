"""What a resource kind is: one frozen record per Pulumi type token, holding every decision aitrain makes about it.

A record cannot be built without its decisions (no defaults; ``Kind.__post_init__`` refuses a wrong one): the inputs the
plan table shows (or ``NoKeyProperties`` with a reason), how it is priced (``Priced``, ``Free`` or ``Unpriced`` with a
reason), how it exports to Terraform and where its replacing inputs come from. Pure: no Pulumi.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol, Sequence, Union

from blueprints.catalog import CnyPrice
from blueprints.core.tokens import short_type


class KindError(ValueError):
    """A record that leaves a decision open or states one that cannot hold (raised while the registry is built)."""


class Role(enum.Enum):
    """What a type is to aitrain's rules, diff, diagram and preflight (a record holds any number of them)."""

    # Carries a node's own inputs (public IP, disks, user data, password, security groups): every node rule reads it.
    NODE = "node"
    # Holds the user data of nodes it does not run itself: a change reaches only nodes created afterwards.
    NODE_TEMPLATE = "node template"
    # ECS nodes aitrain runs itself (an instance, an instance set, a scaling group): CloudMonitor watches them (AIT028)
    # and the diagram draws them on the path to storage. An ACK
    # node pool is the cluster's, watched and drawn through it.
    COMPUTE_GROUP = "compute group"
    # Holds data, or a record whose loss cannot be undone: protect + retain_on_delete, never replaced delete-first.
    STATEFUL = "stateful"
    # Sits in a zone through the vSwitch it names (``vswitchId``/``vswitchIds``): the diagram draws it under it.
    IN_VSWITCH = "in a vSwitch"
    # Where training compute reads and writes data: the diagram draws compute → it.
    STORAGE_ACCESS = "storage access"
    # Creates ECS disks whose encryption key AIT019 asks about.
    DISKS = "disks"
    # A Pulumi provider: every resource it manages is replaced when it is.
    PROVIDER = "provider"
    # Holds capacity in a private pool that nodes start from in Target mode (a capacity reservation, an elasticity
    # assurance): the nodes that name it start from held capacity or not at all (AIT041), and its cost is what
    # holding adds to the year.
    CAPACITY_HOLD = "capacity hold"


@dataclass(frozen=True)
class NoKeyProperties:
    """The type has no input worth a column in the plan table; ``why`` says so on purpose (never a forgotten tuple)."""

    why: str


class Resource(Protocol):
    """What a kind's functions read of a planned resource (``blueprints.review.plan.PlannedResource`` fits)."""

    @property
    def name(self) -> str:
        """Logical name."""

    @property
    def type(self) -> str:
        """Pulumi type token."""

    @property
    def short_type(self) -> str:
        """``vpc.NatGateway`` style type."""

    @property
    def inputs(self) -> dict[str, Any]:
        """Engine-name inputs."""


@dataclass(frozen=True)
class Neighbours:
    """The plan around one resource: every resource in plan order, and each by its logical name."""

    resources: Sequence[Resource]
    by_name: Mapping[str, Resource]

    @classmethod
    def of(cls, resources: Sequence[Resource]) -> Neighbours:
        """The neighbourhood of a plan's resources."""
        return cls(resources, {r.name: r for r in resources})


@dataclass(frozen=True)
class NodeGroup:
    """Identical nodes a resource can run at most: the inputs
    one node is built from (``instanceType``…) and how many."""

    inputs: Mapping[str, Any]
    nodes: int


Capacity = Callable[[Resource, Neighbours], Sequence[NodeGroup]]


class Costs(Protocol):
    """What a pricer writes its cost lines to (``blueprints.review.costing`` implements it for one plan and region)."""

    @property
    def resources(self) -> Sequence[Resource]:
        """The plan's custom resources, in plan order."""

    @property
    def dataset_gib(self) -> float | None:
        """How much the profile says the bucket holds (None: unknown)."""

    def referenced(self, value: Any) -> Resource | None:
        """The resource a ``${name.id}`` input names, when it is one of the plan's."""

    def price(self, item: str, tier: str | None) -> CnyPrice:
        """The catalog's ``prices.csv`` price of ``item``/``tier``
        in the plan's region (unknown, never 0, without a row)."""

    def instance_price(self, instance_type: str) -> CnyPrice:
        """What one ``instance_type`` node costs per hour, pay-as-you-go, in the plan's region: the price ``nodes``
        prices a node at (``instance_prices.csv``; unknown with the reason, never 0, without a row)."""

    def add(self, resource: Resource, item: str, quantity: float, unit: str, price: CnyPrice, billing: str) -> None:
        """One cost line; ``billing`` is hourly (per unit-hour), monthly (per unit-month), usage (no amount) or
        upfront (a one-off fee per order, no hourly or monthly amount)."""

    def nodes(self, owner: Resource, count: int, node: Mapping[str, Any], system: Mapping[str, Any] | None) -> None:
        """Compute and disk lines of ``count`` identical nodes built from ``node`` (a fixed group; none at 0 nodes)."""

    def pool(
        self, owner: Resource, node: Mapping[str, Any], system: Mapping[str, Any] | None, low: int, high: int
    ) -> None:
        """A scaling pool of such nodes: lines at ``low`` nodes, and scenarios up to ``high``."""


Pricer = Callable[[Costs, Resource], None]


@dataclass(frozen=True)
class Priced:
    """Priced by ``pricer``, which adds the resource's cost lines
    (a line with an unknown price keeps totals incomplete)."""

    pricer: Pricer


@dataclass(frozen=True)
class Free:
    """No charge of its own; ``why`` says why (or on which other resource's line its cost is)."""

    why: str


@dataclass(frozen=True)
class Unpriced:
    """Charged, but aitrain does not price it (usage the plan cannot know, or no catalog price); ``why`` says which."""

    why: str


Pricing = Union[Priced, Free, Unpriced]


class Terraform(enum.Enum):
    """How ``aitrain export terraform`` writes the type."""

    MAPPED = "a resource block under its names in blueprints/data/terraform_names.json"
    PROVIDER = "the provider block"
    KUBERNETES = "refused as a Kubernetes object (--cloud-only leaves it out and names it)"
    UNMAPPED = "not written: the export refuses a plan holding it"


class ReplacingInputs(enum.Enum):
    """Where the rows of blueprints/data/replacing_inputs.csv
    for the type come from (the value: their source prefix)."""

    TERRAFORM_DOCS = "aliyun/terraform-provider-alicloud@"  # ForceNew marks of terraform-provider-alicloud's docs
    KUBERNETES_DIFF = "pulumi/pulumi-kubernetes@"  # pulumi-kubernetes' forceNewProperties / DiffConfig
    PULUMI_PROVIDERS = "https://www.pulumi.com/docs/iac/concepts/resources/providers/"  # a provider's own inputs
    UNKNOWN = ""  # no rows: `aitrain diff` says any changed input "may replace"


RecoveryWindows = Callable[[Mapping[str, Any]], dict[str, float]]


_TOKEN = re.compile(r"^[a-z][a-z0-9-]*:[A-Za-z0-9.-]+(/[A-Za-z0-9.-]+)?:[A-Za-z][A-Za-z0-9]*$")
_INPUT_PATH = re.compile(r"^[a-z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*)*$")


@dataclass(frozen=True, kw_only=True)
class Kind:
    """Everything aitrain knows about one Pulumi resource type (see the module docstring for what must be decided).

    ``key_properties``: inputs the plan table shows, dotted paths for nested ones (``metadata.name``).
    ``computed_outputs``: outputs the offline mocks answer with a ``${name.attr}`` reference; ``counted_outputs``
    (output, input): a list output with one reference per unit of that input (an instance set's ``instanceIds``).
    ``capacity``: the node groups preflight checks quota and stock for (instance type × count).
    ``stateful_loss``: what is lost when a stateful resource that holds no data goes (the diff says it).
    ``deletion_protection`` (input, value): the provider's own switch that AIT015 wants on.
    ``recovery_windows``: how long deleted data stays recoverable, by label, from the inputs (diff retention risks).
    """

    token: str
    # The four decisions have no default: a record that leaves one out is a TypeError, one that states it wrongly
    # (None, an empty tuple, a reason left blank) a KindError.
    key_properties: tuple[str, ...] | NoKeyProperties
    pricing: Pricing
    terraform: Terraform
    replacing_inputs: ReplacingInputs
    roles: frozenset[Role] = frozenset()
    computed_outputs: tuple[str, ...] = ()
    counted_outputs: tuple[tuple[str, str], ...] = ()
    capacity: Capacity | None = None
    stateful_loss: str = ""
    deletion_protection: tuple[str, object] | None = None
    recovery_windows: RecoveryWindows | None = None

    def __post_init__(self) -> None:
        if not _TOKEN.match(self.token):
            raise KindError(
                f"kind token {self.token!r} is not a Pulumi type token (package:module/file:Type, e.g."
                " alicloud:ecs/instance:Instance, or pulumi:providers:alicloud)"
            )
        self._decided("key_properties", (tuple, NoKeyProperties), "a tuple of input names, or NoKeyProperties(why)")
        self._decided("pricing", (Priced, Free, Unpriced), "Priced(pricer), Free(why) or Unpriced(why)")
        self._decided("terraform", (Terraform,), f"one of {', '.join('Terraform.' + t.name for t in Terraform)}")
        self._decided(
            "replacing_inputs",
            (ReplacingInputs,),
            f"one of {', '.join('ReplacingInputs.' + r.name for r in ReplacingInputs)}",
        )
        if self.key_properties == ():
            raise KindError(
                f"kind {self.token}: key_properties is an empty tuple; name the inputs the plan table shows, or write"
                " NoKeyProperties('why none is worth showing') so that none is a decision, not an omission"
            )
        if isinstance(self.key_properties, tuple):
            bad = [p for p in self.key_properties if not isinstance(p, str) or not _INPUT_PATH.match(p)]
            if bad:
                raise KindError(
                    f"kind {self.token}: key_properties {bad} are not engine (camelCase) input names, dots for nesting"
                )
        for decision in (self.key_properties, self.pricing):
            if isinstance(decision, (NoKeyProperties, Free, Unpriced)) and not decision.why.strip():
                raise KindError(f"kind {self.token}: {type(decision).__name__} needs a reason (why)")
        self._roles_hold()

    def _decided(self, field: str, allowed: tuple[type, ...], what: str) -> None:
        value = getattr(self, field)
        if not isinstance(value, allowed):
            raise KindError(f"kind {self.token}: {field} = {value!r} must be {what}")

    def _roles_hold(self) -> None:
        if not all(isinstance(role, Role) for role in self.roles):
            raise KindError(f"kind {self.token}: roles {sorted(map(str, self.roles))} must be Role members")
        if Role.NODE_TEMPLATE in self.roles and Role.NODE not in self.roles:
            raise KindError(f"kind {self.token}: a node template carries node inputs, so it is a Role.NODE too")
        if Role.COMPUTE_GROUP in self.roles and self.capacity is None:
            raise KindError(f"kind {self.token}: a compute group runs nodes, so it needs a capacity (its node groups)")
        if self.stateful_loss and Role.STATEFUL not in self.roles:
            raise KindError(f"kind {self.token}: stateful_loss says what a stateful resource loses; add Role.STATEFUL")
        if (Role.PROVIDER in self.roles) != self.token.startswith("pulumi:providers:"):
            raise KindError(f"kind {self.token}: Role.PROVIDER is for pulumi:providers:* tokens, and only for them")

    @property
    def short_type(self) -> str:
        """The type as the plan shows it (``ecs.Instance``; Kubernetes and provider tokens whole)."""
        return short_type(self.token)

    def has(self, role: Role) -> bool:
        """Whether the kind plays ``role``."""
        return role in self.roles

    def key_inputs(self) -> tuple[str, ...]:
        """The key properties as a tuple (empty when the kind declares none on purpose)."""
        return self.key_properties if isinstance(self.key_properties, tuple) else ()
