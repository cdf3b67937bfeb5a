"""Pure layout arithmetic for blueprints: vSwitch CIDRs, zone choice, instance batches, off-hours schedules."""

from __future__ import annotations

import datetime as dt
import ipaddress
import itertools
import math
import zoneinfo
from dataclasses import dataclass

# ecs.EcsInstanceSet creates 1–100 instances per resource (terraform-provider-alicloud ecs_instance_set docs, `amount`).
MAX_INSTANCES_PER_SET = 100

# Each vSwitch gets 1/16 of the VPC (a /16 VPC gives /20 vSwitches: 4,096 addresses, above ESS's 2,000-instance cap),
# kept inside the masks a vSwitch may have: a /8–/12 VPC gets /16 vSwitches (more slots, each still 65,536 addresses).
VSWITCH_PREFIX_EXTRA_BITS = 4
VSWITCH_MIN_PREFIX = (
    16  # Alibaba vSwitch masks are /16–/29 (VPC docs: "the mask length of a vSwitch CIDR block is 16 to 29").
)
VSWITCH_MAX_PREFIX = 29


class LayoutError(ValueError):
    """A profile that cannot be laid out (for example no usable zone); the message says what to change."""


def vswitch_prefix(vpc_cidr: str) -> int:
    """The prefix length of every vSwitch in a VPC of ``vpc_cidr`` (4 bits longer, within Alibaba's /16–/29)."""
    return min(
        max(ipaddress.ip_network(vpc_cidr).prefixlen + VSWITCH_PREFIX_EXTRA_BITS, VSWITCH_MIN_PREFIX),
        VSWITCH_MAX_PREFIX,
    )


def vswitch_cidr(vpc_cidr: str, zone: str, region_zones: tuple[str, ...]) -> str:
    """The vSwitch CIDR of ``zone``: the VPC's subnet numbered by the zone's place in the region's zone list.

    Tied to the zone, not to how many zones are in use, so adding or dropping a compute zone never moves
    (replaces) another zone's vSwitch, nor the file system bound to it.
    """
    vpc = ipaddress.ip_network(vpc_cidr)
    prefix = vswitch_prefix(vpc_cidr)
    slots = 2 ** (prefix - vpc.prefixlen)
    if zone not in region_zones:
        raise LayoutError(
            f"zone {zone} is not in the catalog's zone list ({', '.join(region_zones)}); add it to regions.csv"
        )
    slot = region_zones.index(zone)
    if slot >= slots:
        raise LayoutError(
            f"VPC {vpc_cidr} has room for {slots} vSwitches of "
            f"/{prefix}; zone {zone} is number {slot + 1} of the region"
        )
    return str(next(itertools.islice(vpc.subnets(new_prefix=prefix), slot, None)))


# The login node's vSwitch: one host, so a /28 (16 addresses, 12 usable) at the start of the VPC's last vSwitch slot.
LOGIN_VSWITCH_PREFIX = 28


def login_vswitch_cidr(vpc_cidr: str, zones: list[str] | tuple[str, ...], region_zones: tuple[str, ...]) -> str:
    """The login node's own vSwitch: the first /28 of the VPC's last vSwitch slot (the whole slot when that is smaller).

    Apart from every compute vSwitch, so the share's access rules (one per compute vSwitch) never admit the one host
    with a public address. The last slot belongs to no zone in use: a zone numbered there is refused.
    """
    vpc = ipaddress.ip_network(vpc_cidr)
    prefix = vswitch_prefix(vpc_cidr)
    last = 2 ** (prefix - vpc.prefixlen) - 1
    for zone in zones:
        if zone in region_zones and region_zones.index(zone) == last:
            raise LayoutError(
                f"zone {zone} is number {last + 1} of the region and "
                f"takes the last /{prefix} of network.vpc_cidr {vpc_cidr},"
                " which the login node's vSwitch needs; use a wider "
                "network.vpc_cidr, other network.zones, or access.login_node false"
            )
    slot = ipaddress.ip_network(f"{vpc.network_address + last * 2 ** (32 - prefix)}/{prefix}")
    return str(next(slot.subnets(new_prefix=max(prefix, LOGIN_VSWITCH_PREFIX))))


# Alibaba Cloud reserves the first and the last three addresses of every vSwitch IPv4 CIDR block, e.g. 192.168.1.0,
# .253, .254 and .255 of 192.168.1.0/24 (CreateVSwitch usage notes, read in the es and ja editions:
# https://www.alibabacloud.com/help/es/vpc/developer-reference/api-vpc-2016-04-28-createvswitch ,
# https://alibabacloud.com/help/ja/vpc/api-createvswitch ; the English CreateVSwitchCidrReservation page says the same).
RESERVED_PER_VSWITCH = 4
# Room beyond the nodes: ESS starts a replacement before it releases an unhealthy node, and the NAT gateway, NAS
# mount targets and eRDMA interfaces take addresses in the same vSwitches.
HEADROOM_MIN, HEADROOM_FRACTION = 8, 0.1


def vswitch_headroom(nodes: int) -> int:
    """Free addresses a vSwitch layout keeps beyond ``nodes``."""
    return max(HEADROOM_MIN, math.ceil(HEADROOM_FRACTION * nodes))


def check_vswitch_room(vpc_cidr: str, nodes: int, vswitches: int) -> None:
    """Refuse a layout whose ``vswitches`` vSwitches (each the size ``vswitch_cidr`` gives) cannot hold ``nodes``
    plus headroom: the cloud would fail to launch the last nodes mid-deployment."""
    prefix = vswitch_prefix(vpc_cidr)
    free = vswitches * max(2 ** (32 - prefix) - RESERVED_PER_VSWITCH, 0)
    wanted = nodes + vswitch_headroom(nodes)
    if free < wanted:
        raise LayoutError(
            f"network.vpc_cidr {vpc_cidr} gives each zone a /{prefix} "
            f"vSwitch: {vswitches} × {2 ** (32 - prefix)} addresses"
            f" less {RESERVED_PER_VSWITCH} reserved per vSwitch = {free} free, below {nodes} nodes + "
            f"{vswitch_headroom(nodes)} headroom = {wanted};"
            " use a wider network.vpc_cidr (each bit shorter doubles every vSwitch) or fewer nodes"
        )


def choose_compute_zones(
    available: list[str],
    preferred: tuple[str, ...],
    storage_zone: str,
    count: int,
    *,
    region_zones: tuple[str, ...],
    instance_type: str,
    region: str,
    next_step: str = "change network.zones, the region or compute.instance_type",
) -> list[str]:
    """Pick up to ``count`` zones that offer the instance type for compute.

    ``available`` is what the cloud reports for the type (``alicloud.get_zones``), kept in the catalog's order;
    ``preferred`` is the profile's ``network.zones`` (empty: the storage zone first when it offers the type,
    then the others). Compute follows storage when it can; storage never follows compute. ``next_step`` ends the
    error: what to do, naming the profile's next fallback where it has one.
    """
    offered = [z for z in region_zones if z in set(available)]
    if preferred:
        usable = [z for z in preferred if z in offered]
    else:
        usable = sorted(offered, key=lambda z: z != storage_zone)
    if not usable:
        wanted = f" among network.zones {list(preferred)}" if preferred else ""
        listed = ", ".join(offered) or "none"
        raise LayoutError(f"no zone{wanted} in {region} offers {instance_type} (zones that do: {listed}); {next_step}")
    return usable[:count]


def network_zones(storage_zone: str, compute_zones: list[str], region_zones: tuple[str, ...]) -> list[str]:
    """Every zone that needs a vSwitch: the storage zone and the compute zones, in the region's order."""
    wanted = {storage_zone, *compute_zones}
    return [z for z in region_zones if z in wanted]


def instance_batches(nodes: int, max_per_batch: int = MAX_INSTANCES_PER_SET) -> list[int]:
    """Split ``nodes`` into the fewest batches of at most ``max_per_batch``, as even as possible (largest first)."""
    if nodes < 1:
        raise ValueError("nodes must be at least 1")
    batches = math.ceil(nodes / max_per_batch)
    base, extra = divmod(nodes, batches)
    return [base + 1 if i < extra else base for i in range(batches)]


@dataclass(frozen=True)
class RecurringTask:
    """One ESS scheduled task in the API's terms (UTC times)."""

    launch_time: str  # YYYY-MM-DDThh:mmZ
    recurrence_type: str  # Daily | Weekly
    recurrence_value: str
    recurrence_end_time: str  # YYYY-MM-DDThh:mm:ssZ


# ESS: launch_time at most 90 days and recurrence_end_time at most 365 days after the task is created
# (pulumi_alicloud.ess.ScheduledTask docstring, from terraform-provider-alicloud ess_scheduled_task docs).
ESS_LAUNCH_WINDOW_DAYS = 90
ESS_RECURRENCE_WINDOW_DAYS = 365
SCHEDULE_LIFETIME_DAYS = 364


def off_hours_tasks(
    start_date: dt.date, timezone: str, work_start: str, work_end: str, weekdays_only: bool, *, created: dt.date
) -> tuple[RecurringTask, RecurringTask]:
    """(wake, sleep) tasks: wake at ``work_start`` on working days, sleep at ``work_end`` every day.

    Local times are converted to UTC at ``start_date``'s offset (a zone with daylight saving shifts by an hour
    in the other season). Weekday numbers follow ESS: 0 = Sunday … 6 = Saturday, shifted when the UTC time
    falls on another calendar day than the local time. The tasks repeat until ``SCHEDULE_LIFETIME_DAYS`` after
    ``created`` (the day the deployment creates them), not after ``start_date``: ESS refuses an end more than
    365 days after creation, and a start up to 89 days ahead plus 364 days would pass it. Each deploy renews it.
    """
    zone = zoneinfo.ZoneInfo(timezone)
    end = created + dt.timedelta(days=SCHEDULE_LIFETIME_DAYS)

    def to_utc(hhmm: str) -> dt.datetime:
        hour, minute = map(int, hhmm.split(":"))
        local = dt.datetime.combine(start_date, dt.time(hour, minute), tzinfo=zone)
        return local.astimezone(dt.timezone.utc)

    def task(at: dt.datetime, days: list[int] | None) -> RecurringTask:
        end_time = f"{end.isoformat()}T{at:%H:%M}:00Z"
        if days is None:
            return RecurringTask(f"{at:%Y-%m-%dT%H:%MZ}", "Daily", "1", end_time)
        shift = (at.date() - start_date).days  # -1, 0 or +1
        utc_days = sorted({(d + shift) % 7 for d in days})
        return RecurringTask(f"{at:%Y-%m-%dT%H:%MZ}", "Weekly", ",".join(map(str, utc_days)), end_time)

    working_days = [1, 2, 3, 4, 5] if weekdays_only else None
    return task(to_utc(work_start), working_days), task(to_utc(work_end), None)
