"""The kubernetes-pool profile's ``queues`` section: the teams that share the GPU pool, their GPU quotas, what each may
borrow, and the priorities of their jobs, validated against the pool (what ``kueue.py`` turns into Kueue objects).

Nothing here is Kueue's own number unless a comment cites it; quotas are in GPUs, the unit a job asks for.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from blueprints.core.errors import MISSING, FieldError, did_you_mean, join_allowed
from blueprints.profile.strict import Strict

# A team name becomes a LocalQueue's name, which jobs carry as the value of the label kueue.x-k8s.io/queue-name, and a
# priority name becomes a WorkloadPriorityClass's name, carried in kueue.x-k8s.io/priority-class: both must therefore
# be label values and object names at once, i.e. DNS-1123 labels (at most 63 lowercase letters, digits and '-',
# starting and ending with a letter or digit; https://kubernetes.io/docs/concepts/overview/working-with-objects/names/).
DNS_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
DNS_LABEL_RULE = "a DNS-1123 label: 1–63 lowercase letters, digits and '-', starting and ending with a letter or digit"

# At most 32 teams: each team is a ClusterQueue and a LocalQueue in the plan and a row of its queue table, and the
# Markdown plan of a pull request must stay under GitHub's 65,536-character comment cap (architecture.md, Known
# traps). More teams than that on one pool is an organisation of departments, which Kueue models as a tree of cohorts
# (apis/kueue/v1beta2/cohort_types.go@v0.19.2, CohortSpec.parentName); this section models one flat cohort.
MAX_TEAMS = 32
# At most 16 priorities: each is a WorkloadPriorityClass the stack creates and a line of the plan; a job queue needs a
# handful of levels (Kueue orders and preempts by the value alone).
MAX_PRIORITIES = 16
# WorkloadPriorityClass.value is an int32 (apis/kueue/v1beta2/workloadpriorityclass_types.go@v0.19.2).
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

DEFAULT_TEAM = "default"
DEFAULT_PRIORITY = "normal"
DEFAULT_PRIORITY_VALUE = 100
# Kueue's own default is 30 minutes (apis/config/v1beta2/defaults.go@v0.19.2, DefaultWaitForPodsReadyTimeout), kept:
# the pool scales from min_nodes (often 0), so a job's wait covers the cluster autoscaler adding bare-metal GPU nodes,
# their boot and the pull of a multi-gigabyte training image; a shorter timeout would evict jobs on every cold start.
DEFAULT_PODS_READY_TIMEOUT_MINUTES = 30
MAX_PODS_READY_TIMEOUT_MINUTES = 24 * 60


class Team(Strict):
    """One team sharing the GPU pool: its own queue, its nominal GPU quota and how much it may borrow."""

    name: str = Field(
        description=(
            "Team name: a DNS-1123 label (1–63 lowercase letters, digits and '-'), unique; it names the team's "
            "LocalQueue in the jobs' namespace (jobs set the label kueue.x-k8s.io/queue-name to it)."
        )
    )
    gpus: int | None = Field(
        default=None,
        description=(
            "Required, at least 1: the team's nominal GPU quota (GPUs), guaranteed to it as far as the autoscaler can "
            "buy the nodes; GPUs it does not use are lent to the other teams and taken back when it needs them."
        ),
    )
    borrow_gpus: int | None = Field(
        default=None,
        ge=0,
        description=(
            "Most GPUs the team may borrow beyond its quota from GPUs the others do not use (GPUs); empty: no limit; "
            "0: never borrows."
        ),
    )
    priority: str | None = Field(
        default=None,
        description=(
            "Priority of the team's jobs, a name from queues.priorities (the WorkloadPriorityClass its jobs carry in "
            "the label kueue.x-k8s.io/priority-class: Kueue sets priority per job, not per queue); empty: "
            "queues.default_priority."
        ),
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not DNS_LABEL_RE.fullmatch(value):
            raise ValueError(f"must be {DNS_LABEL_RULE} (it names the team's LocalQueue), e.g. vision")
        return value

    @model_validator(mode="after")
    def _share(self) -> "Team":
        if self.gpus is None:
            raise FieldError(
                "gpus",
                MISSING,
                f"is required: team {self.name!r} needs a share of the pool, its nominal GPU quota (1 or more GPUs)",
            )
        if self.gpus < 1:
            raise FieldError(
                "gpus",
                self.gpus,
                f"gives team {self.name!r} no share of the pool; its nominal GPU quota must be 1 or more GPUs "
                "(a team that should only borrow is not modelled: give it at least 1)",
            )
        return self

    @property
    def quota(self) -> int:
        """The team's nominal GPU quota (validated: at least 1)."""
        assert self.gpus is not None  # _share refuses a team without one
        return self.gpus


class QueueSettings(Strict):
    """How teams share the GPU pool through Kueue: one queue per team in one cohort, with priorities."""

    teams: tuple[Team, ...] = Field(
        default=(),
        description=(
            f"The teams sharing the GPU pool (at most {MAX_TEAMS}); empty: one team 'default' holding the whole pool "
            "(its LocalQueue 'default' also takes jobs that name no queue). GPUs no team is given stay in a shared "
            "pool any team may borrow."
        ),
    )
    priorities: dict[str, int] = Field(
        default_factory=lambda: {DEFAULT_PRIORITY: DEFAULT_PRIORITY_VALUE},
        description=(
            "Job priorities, name → value (an int32; higher runs first and may preempt lower within a team); each "
            "becomes a Kueue WorkloadPriorityClass of that name, which jobs name in the label "
            f"kueue.x-k8s.io/priority-class (at most {MAX_PRIORITIES})."
        ),
    )
    default_priority: str = Field(
        default=DEFAULT_PRIORITY,
        description="Priority of a team that names none: a name from queues.priorities.",
    )
    pods_ready_timeout_minutes: int = Field(
        default=DEFAULT_PODS_READY_TIMEOUT_MINUTES,
        ge=1,
        le=MAX_PODS_READY_TIMEOUT_MINUTES,
        description=(
            "Minutes an admitted job has to get every pod running and ready (1–1440; default Kueue's 30): a job whose "
            "pods are not all ready in time is evicted, gives its quota back and is requeued, so a multi-node job "
            "runs whole or not at all."
        ),
    )

    @field_validator("priorities")
    @classmethod
    def _priorities(cls, value: dict[str, int]) -> dict[str, int]:
        if not value:
            raise ValueError(f"must name at least one priority, e.g. {{{DEFAULT_PRIORITY}: {DEFAULT_PRIORITY_VALUE}}}")
        if len(value) > MAX_PRIORITIES:
            raise ValueError(f"names {len(value)} priorities; at most {MAX_PRIORITIES} are allowed")
        for name, number in value.items():
            if not DNS_LABEL_RE.fullmatch(name):
                raise FieldError(name, name, f"is not a priority name: it must be {DNS_LABEL_RULE}")
            if not INT32_MIN <= number <= INT32_MAX:
                raise FieldError(
                    name,
                    number,
                    f"is out of range: a WorkloadPriorityClass value is an int32 ({INT32_MIN} to {INT32_MAX})",
                )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> "QueueSettings":
        if len(self.teams) > MAX_TEAMS:
            raise FieldError(
                "teams",
                len(self.teams),
                f"lists {len(self.teams)} teams; at most {MAX_TEAMS} share one pool (merge teams, or give each "
                "department its own stack)",
            )
        seen: dict[str, int] = {}
        for index, team in enumerate(self.teams):
            if team.name in seen:
                raise FieldError(
                    f"teams[{index}].name",
                    team.name,
                    f"is also the name of queues.teams[{seen[team.name]}]; each team needs its own name (it names the "
                    "team's LocalQueue)",
                )
            seen[team.name] = index
        names = list(self.priorities)
        if self.default_priority not in self.priorities:
            raise FieldError(
                "default_priority",
                self.default_priority,
                f"is not in queues.priorities; allowed: {join_allowed(names)}" + _hint(self.default_priority, names),
            )
        for index, team in enumerate(self.teams):
            if team.priority is not None and team.priority not in self.priorities:
                raise FieldError(
                    f"teams[{index}].priority",
                    team.priority,
                    f"is not in queues.priorities; allowed: {join_allowed(names)}" + _hint(team.priority, names),
                )
        return self

    def teams_for(self, pool_gpus: int) -> tuple[Team, ...]:
        """The teams as listed, or, when none is, the one team ``default`` holding the whole pool."""
        return self.teams or (Team(name=DEFAULT_TEAM, gpus=pool_gpus),)

    def priority_of(self, team: Team) -> str:
        """The name of the team's priority (its own, or the default)."""
        return team.priority if team.priority is not None else self.default_priority


def _hint(word: str, names: list[str]) -> str:
    hint = did_you_mean(word, names)
    return f"; {hint}" if hint else ""


def check_queues(queues: QueueSettings, *, max_nodes: int, job_nodes: int, gpus_per_node: int) -> None:
    """Refuse team quotas the pool cannot honour (FieldError with the path below the profile, e.g.
    ``queues.teams[1].gpus``): quotas summing above the pool, or a team that can never hold one whole job."""
    pool = max_nodes * gpus_per_node
    pool_text = f"compute.max_nodes {max_nodes} × {gpus_per_node} GPUs per node = {pool} GPUs"
    total = sum(team.quota for team in queues.teams)
    if total > pool:
        quotas = " + ".join(str(team.quota) for team in queues.teams)
        raise FieldError(
            "queues.teams",
            [team.quota for team in queues.teams],
            f"give the teams {quotas} = {total} GPUs, more than the pool holds ({pool_text}); lower the teams' "
            f"gpus to sum to at most {pool}, or raise compute.max_nodes",
        )
    job = job_nodes * gpus_per_node
    for index, team in enumerate(queues.teams):
        if team.borrow_gpus is None:
            continue  # borrows without limit: it can reach the whole pool, which holds a job (compute.nodes_per_job)
        if team.quota + team.borrow_gpus < job:
            raise FieldError(
                f"queues.teams[{index}].borrow_gpus",
                team.borrow_gpus,
                f"lets team {team.name!r} use at most gpus {team.quota} + borrow_gpus {team.borrow_gpus} = "
                f"{team.quota + team.borrow_gpus} GPUs, less than one job needs ({job_nodes} nodes "
                f"(compute.nodes_per_job) × {gpus_per_node} GPUs per node = {job} GPUs), so its jobs would never "
                f"start; raise borrow_gpus to at least {job - team.quota} (or gpus), or remove borrow_gpus (no limit)",
            )
