"""Draws for the profile fuzzer (``bench/fuzz.py``): one seeded ``random.Random`` per draw, so a draw is
reproducible from ``(seed, index)`` alone, whatever the number of worker processes.

A draw is a coherent base (a preset, or a valid profile of a random blueprint) plus a few mutations, each at a
leaf path taken from ``leaf_paths(profile_models())`` (new fields are covered automatically), delivered through
a stack file (YAML text read by ``engine_config``) or a ``--set PATH=VALUE`` string (``parse_overrides``).
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import typing
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import BaseModel

from blueprints.architectures import profile_models
from blueprints.catalog import Catalog
from blueprints.profile.parse import leaf_paths
from blueprints.profile.stackconfig import PRESET_KEY, PROFILE_KEY, preset_names

TODAY = dt.date(2026, 11, 30)  # the suite's clock (tests/conftest.py); passed to preview as today=


@dataclass(frozen=True)
class Raw:
    """YAML text placed verbatim in a stack file (anchors, tags, base-60 times...)."""

    text: str


@dataclass
class Mutation:
    """One change: a profile path (or stack-config key) set to a value through one route."""

    route: str  # "stack" (inside aitrain:profile), "set" (--set PATH=TEXT), "config" (a top-level config key)
    path: str
    value: Any  # "set": the text after '='; otherwise a Python value or Raw
    kind: str  # which generator made it (for the summary)


@dataclass
class Case:
    """Everything one `aitrain plan` run gets: a preset argument, a stack file text and --set strings."""

    preset: str | None
    profile: dict[str, Any] | None  # the stack file's aitrain:profile before mutations (None: no stack file)
    stack_preset: Any = None
    mutations: list[Mutation] = field(default_factory=list)
    document: str | None = None  # a whole stack file text replacing the rendered one (odd documents)

    def stack_text(self) -> str | None:
        """The stack file as YAML text, or None when the draw uses no stack file."""
        if self.document is not None:
            return self.document
        if (
            self.profile is None
            and self.stack_preset is None
            and not any(m.route in ("stack", "config") for m in self.mutations)
        ):
            return None
        config: dict[str, Any] = {}
        if self.stack_preset is not None:
            config[PRESET_KEY] = self.stack_preset
        profile = json.loads(json.dumps(self.profile or {}))
        for m in self.mutations:
            if m.route == "stack":
                profile = _set_path(profile, m.path, m.value)
            elif m.route == "config":
                config[m.path] = m.value
        if profile or self.profile is not None:
            config[PROFILE_KEY] = profile
        return "encryptionsalt: v1:abc:def\n" + emit_yaml({"config": config})

    def sets(self) -> list[str]:
        """The --set arguments, in order."""
        return [f"{m.path}={m.value}" for m in self.mutations if m.route == "set"]

    def repro(self) -> dict[str, Any]:
        """What reproduces the draw by hand: `aitrain plan [PRESET] --stack-config FILE --set ...`."""
        return {
            "preset": self.preset,
            "stack_file": self.stack_text(),
            "sets": self.sets(),
            "kinds": [m.kind for m in self.mutations],
        }


def _set_path(data: Any, path: str, value: Any) -> Any:
    head, _, rest = path.partition(".")
    out = dict(data) if isinstance(data, dict) else {}
    out[head] = _set_path(out.get(head), rest, value) if rest else value
    return out


# --- YAML text -----------------------------------------------------------------------------------------


def _scalar(value: Any) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return yaml.safe_dump(value, default_flow_style=True).removesuffix("\n...\n").strip()
    if isinstance(value, int):
        return str(value)  # no int-string limit on the way out: 5,000 digits are written as written
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_scalar(str(k))}: {_scalar(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))


def _key(key: str) -> str:
    """Plain keys as people write them (``aitrain:profile``); anything odd double-quoted."""
    return (
        key
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.:-]*", key)
        and key.lower() not in ("y", "n", "yes", "no", "on", "off", "true", "false", "null")
        else _scalar(key)
    )


def emit_yaml(data: dict[str, Any], indent: int = 0) -> str:
    """Block-style YAML whose leaves may be ``Raw`` text; nested containers below leaves go flow-style."""
    lines = []
    pad = "  " * indent
    for key, value in data.items():
        if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
            lines.append(f"{pad}{_key(key)}:\n{emit_yaml(value, indent + 1)}")
        else:
            lines.append(f"{pad}{_key(key)}: {_scalar(value)}\n")
    return "".join(lines)


# --- value pools ---------------------------------------------------------------------------------------

HOSTILE_YAML = [
    "&a [*a]",
    "&a {x: *a}",
    "[&a [x, x, x, x, x, x, x, x, x], &b [*a, *a, *a, *a, *a, *a, *a, *a, *a], &c [*b, *b, *b, *b, *b, *b, *b, *b, "
    "*b], &d [*c, *c, *c, *c, *c, *c, *c, *c, *c], &e [*d, *d, *d, *d, *d, *d, *d, *d, *d], &f [*e, *e, *e, *e, *e, "
    "*e, *e, *e, *e], &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]]",
    "19:00",
    "9:30",
    "24:00",
    "1:30:00",
    "2027-01-04",
    "2026-12-01",
    "2026-12-01T10:00:00Z",
    "2027-1-4",
    "!!python/object:os.system",
    "!!python/object/apply:os.system ['true']",
    "!!python/name:builtins.print",
    "!!binary aGVsbG8=",
    "!!set {a, b}",
    "!!omap [a: 1]",
    "!!timestamp 2027-01-04",
    "!!int 1:30",
    "!!float 1e3",
    "!!str 12",
    "!!int 12",
    "!!bool yes",
    "!!null ''",
    "\tfoo",
    "a\tb",
    "{a: 1}: x",
    "? [a]\n: b",
    "'unterminated",
    "[unclosed",
    "{a: 1",
    "*undefined",
    "@reserved",
    "`tick",
    ": x",
    "- a\n- b",
    "--- a\n--- b",
    "%YAML 1.2\n---\nx",
    "0x1F",
    "0o17",
    "017",
    "0b101",
    "1_000",
    "1e3",
    "1.0e+3",
    "+.inf",
    "-.inf",
    ".nan",
    "~",
    "null",
    "yes",
    "on",
    "off",
    "NO",
    "y",
    "''",
    '""',
    "[]",
    "{}",
    "- ",
    "#comment",
    "a #comment",
    "x: y",
    "[1, [2, [3]]]",
    "\u00a0",
    "\ufeffx",
    "\x85",
    "a\x00b",
    "\x1b[31mred\x1b[0m",
    "1" * 5000,
    "-" + "9" * 5000,
    "9" * 101,
    "9" * 100,
    "1e99999",
    "0." + "0" * 400 + "1",
    "&x 1",
    "[&x 1, *x]",
    "{<<: {a: 1}}",
    "<<: *x",
]
NASTY_SUFFIX = [
    "\n",
    "\r\n",
    "\r",
    "\t",
    " ",
    "\x00",
    "\x1b[31m",
    "\x7f",
    "\u2028",
    "\u202e",
    "\u200b",
    "\x85",
    "é",
    "😀",
    "\ud800",
]


class Values:
    """Value generators for one leaf path, from the field's type and constraints and the catalog."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.models = profile_models()
        self.leaves = leaf_paths(self.models)
        self.regions = sorted(catalog.regions)
        self.gpu_types = sorted(n for n, i in catalog.instance_types.items() if i.is_gpu)
        self.cpu_types = sorted(n for n, i in catalog.instance_types.items() if not i.is_gpu)
        self.aliases = sorted(catalog.aliases)
        self.tiers = [(s.kind, s.storage_type) for s in catalog.storage if s.storage_type]

    def field(self, path: str):
        """The pydantic FieldInfo of ``path`` in the first model that takes it."""
        blueprint = self.leaves[path][0]
        model: Any = self.models[blueprint]
        info = None
        for part in path.split("."):
            info = model.model_fields[part]
            model = next(
                (
                    a
                    for a in getattr(info.annotation, "__args__", (info.annotation,))
                    if isinstance(a, type) and issubclass(a, BaseModel)
                ),
                None,
            )
        return info

    def bounds(self, path: str) -> dict[str, float]:
        """ge/le/gt/lt of a numeric field."""
        out = {}
        for meta in self.field(path).metadata:
            for name in ("ge", "le", "gt", "lt"):
                if getattr(meta, name, None) is not None:
                    out[name] = getattr(meta, name)
        return out

    def kinds(self, path: str) -> set[Any]:
        annotation = self.field(path).annotation
        args = set(typing.get_args(annotation)) or {annotation}
        if typing.get_origin(annotation) is typing.Literal:
            return {"literal"}
        return {typing.get_origin(a) or a for a in args}

    # valid ---------------------------------------------------------------

    def valid(self, rng: random.Random, path: str, region: str = "cn-shanghai") -> Any:
        """A value the field should accept (most of the time: the base decides region and kind)."""
        zones = list(self.catalog.zones(region))
        special = {
            "blueprint": lambda: rng.choice(sorted(self.models)),
            "region": lambda: region,
            "name": lambda: (
                rng.choice("abcdefghijklmnopqrstuvwxyz")
                + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-") for _ in range(rng.randint(1, 22)))
                + rng.choice("abc123")
            ),
            "description": lambda: rng.choice(
                [
                    "",
                    "Team A training",
                    "A100 cluster — 8 × GPUs, 'quoted' \"text\" | pipes",
                    "x" * 300,
                    "## heading *stars* <b>html</b> [link](http://x)",
                ]
            ),
            "compute.instance_type": lambda: rng.choice(self.gpu_types + self.aliases),
            "compute.image_id": lambda: rng.choice([None, "m-uf6abc123", "ubuntu_22_04_x64_20G_alibase_20230815.vhd"]),
            "storage.zone": lambda: rng.choice(zones + [None]),
            "network.zones": lambda: rng.sample(zones, rng.randint(0, min(4, len(zones)))),
            "network.vpc_cidr": lambda: rng.choice(
                [
                    "10.0.0.0/8",
                    "10.0.0.0/16",
                    "172.16.0.0/12",
                    "192.168.0.0/16",
                    "10.20.0.0/16",
                    "192.168.1.0/24",
                    "10.128.0.0/9",
                    "172.16.0.0/20",
                    "10.1.0.0/17",
                ]
            ),
            "network.admin_cidr": lambda: rng.choice(
                [None, "203.0.113.0/24", "198.51.100.7/32", "10.0.0.0/16", "100.64.0.0/16", "203.0.113.0/28"]
            ),
            "storage.throughput_tier": lambda: rng.choice([t for _, t in self.tiers]),
            "cost.off_hours.timezone": lambda: rng.choice(
                [
                    "Asia/Shanghai",
                    "UTC",
                    "America/New_York",
                    "Pacific/Kiritimati",
                    "Pacific/Pago_Pago",
                    "Australia/Lord_Howe",
                    "Asia/Kathmandu",
                    "Europe/London",
                ]
            ),
            "cost.off_hours.work_start": lambda: f"{rng.randint(0, 11):02d}:{rng.choice([0, 15, 30, 59]):02d}",
            "cost.off_hours.work_end": lambda: f"{rng.randint(12, 23):02d}:{rng.choice([0, 1, 30, 59]):02d}",
            "cost.off_hours.start_date": lambda: rng.choice(
                [None, (TODAY + dt.timedelta(days=rng.randint(1, 89))).isoformat()]
            ),
            "tags": lambda: {
                f"k{i}-{rng.randint(0, 99)}": rng.choice(["", "v", "team-a", "x" * 128, "值"])
                for i in range(rng.randint(0, 18))
            },
        }
        if path in special:
            return special[path]()
        kinds = self.kinds(path)
        if "literal" in kinds:
            return rng.choice(typing.get_args(self.field(path).annotation))
        if bool in kinds:
            return rng.random() < 0.5
        b = self.bounds(path)
        if int in kinds:
            return rng.randint(int(b.get("ge", 0)), int(b.get("le", 10_000)))
        if float in kinds:
            low, high = b.get("gt", b.get("ge", 0.0)), b.get("lt", b.get("le", 100.0))
            return round(rng.uniform(low, high), rng.choice([0, 1, 3]))
        return "x"

    def boundary(self, rng: random.Random, path: str) -> Any:
        """min-1, min, max, max+1 and their textual cousins."""
        if path in ("name",):
            return rng.choice(
                ["ab", "abc", "a" * 24, "a" * 25, "a-", "-ab", "1ab", "Abc", "ab_c", "abc\n", "a--b", "a" * 23 + "-"]
            )
        if path == "description":
            return rng.choice(["x" * 300, "x" * 301, "é" * 300])
        if path == "cost.off_hours.start_date":
            return (
                (TODAY + dt.timedelta(days=rng.choice([-1, 0, 1, 89, 90, 91, 365]))).isoformat()
                if rng.random() < 0.7
                else rng.choice(["0001-01-01", "9999-12-31", "2026-02-29", "2028-02-29", "2026-13-01"])
            )
        if path.endswith(("work_start", "work_end")):
            return rng.choice(["00:00", "23:59", "24:00", "00:60", "9:00", "09:00:00", "09:00 ", " 09:00", "0900"])
        if path == "tags":
            return rng.choice(
                [
                    {f"k{i}": "v" for i in range(18)},
                    {f"k{i}": "v" for i in range(19)},
                    {"k" * 128: "v" * 128},
                    {"k" * 129: "v"},
                    {"k": "v" * 129},
                    {"": "v"},
                    {"aliyun-team": "v"},
                    {"Aliyun": "v"},
                    {"ACS:x": "v"},
                    {"k": "acs:v"},
                    {"k": "ACS:v"},
                    {"https://x": "v"},
                    {"k": "see HTTP://x"},
                    {"managed-by": "me"},
                    {"aitrain-component": "x"},
                    {"k\n": "v"},
                    {"k": "v\x1b[0m"},
                    {"k": ""},
                    {"值": "值" * 128},
                    {"k": "v" * 128},
                    {"acs": "v"},
                    {"aliyu": "v"},
                ]
            )
        if path in ("network.vpc_cidr", "network.admin_cidr"):
            return rng.choice(
                [
                    "10.0.0.0/7",
                    "10.0.0.0/8",
                    "10.0.0.0/24",
                    "10.0.0.0/25",
                    "0.0.0.0/0",
                    "10.0.0.0/15",
                    "203.0.113.0/16",
                    "10.0.0.1/16",
                    "::/0",
                    "fd00::/8",
                    "10.0.0.0/32",
                ]
            )
        b = self.bounds(path)
        if b:
            low, high = b.get("ge", b.get("gt")), b.get("le", b.get("lt"))
            step = 1 if int in self.kinds(path) else rng.choice([1, 1e-9, 0.5])
            # A bound may be one-sided (ge without le: queues.teams[].borrow_gpus): probe the sides that exist.
            edges = [edge for edge in (low, high) if edge is not None]
            return rng.choice([edge + delta for edge in edges for delta in (-step, 0, step)])
        return self.valid(rng, path)

    def wrong_type(self, rng: random.Random, path: str) -> Any:
        return rng.choice(
            [
                None,
                True,
                False,
                0,
                -1,
                1.5,
                "text",
                "",
                [],
                {},
                [1, 2],
                {"a": 1},
                ["x"],
                {"a": {"b": 1}},
                "16",
                "1e2",
                "true",
                "null",
            ]
        )

    def huge(self, rng: random.Random, path: str) -> Any:
        return rng.choice(
            [
                Raw("1" + "0" * 4999),
                Raw("-" + "9" * 5000),
                10**100,
                2**63,
                -(2**63) - 1,
                10**18,
                10**19,
                1e308,
                1.7976931348623157e308,
                5e-324,
                float("nan"),
                float("inf"),
                float("-inf"),
            ]
        )

    def nasty_text(self, rng: random.Random, path: str, region: str) -> Any:
        base = self.valid(rng, path, region)
        base = base if isinstance(base, str) else str(base)
        suffix = rng.choice(NASTY_SUFFIX)
        return rng.choice(
            [
                base + suffix,
                suffix + base,
                base[:1] + suffix + base[1:],
                base.upper(),
                f"\x1b]0;title\x07{base}",
                base + "\n## guardrails: all passed",
            ]
        )

    def long_text(self, rng: random.Random, path: str) -> Any:
        return rng.choice(["a" * rng.choice([1000, 100_000]), "é" * 5000, "ab" * 50_000, "x-" * 400])

    def nested(self, rng: random.Random, path: str) -> Any:
        depth = rng.choice(
            [3, 10, 31, 32, 33, 100, 200]
        )  # 200: well past the loader's bound, within our emitter's recursion
        value: Any = rng.choice([1, "x", []])
        for _ in range(depth):
            value = [value] if rng.random() < 0.5 else {"a": value}
        return value

    def duplicates(self, rng: random.Random, path: str, region: str) -> Any:
        zones = list(self.catalog.zones(region)) or ["cn-shanghai-a"]
        zone = rng.choice(zones)
        return rng.choice(
            [[zone, zone], [zone] * 3, [zone, zone.upper()], [zone, zone + " "], zones * 2, [zone, None], [[zone]]]
        )


# --- draws ---------------------------------------------------------------------------------------------

KINDS = (
    "valid",
    "valid",
    "valid",
    "valid",
    "valid",
    "boundary",
    "boundary",
    "boundary",
    "wrong_type",
    "huge",
    "nasty_text",
    "long_text",
    "nested",
    "duplicates",
    "hostile_yaml",
    "unknown_key",
    "other_blueprint_key",
    "misnested_config",
    "bad_preset",
)


def base_profile(rng: random.Random, values: Values, blueprint: str) -> dict[str, Any]:
    """A profile of ``blueprint`` that should be accepted as it is."""
    region = rng.choice(values.regions)
    zones = list(values.catalog.zones(region))
    kind, tier = rng.choice([t for t in values.tiers if t[0] != "oss"])
    profile: dict[str, Any] = {
        "blueprint": blueprint,
        "name": values.valid(rng, "name"),
        "region": region,
        "compute": {"instance_type": rng.choice(values.gpu_types + values.aliases)},
        "storage": {
            "kind": kind,
            "throughput_tier": tier,
            "capacity_gib": rng.choice([100, 2048, 32768, 1_048_576]),
            "zone": rng.choice(zones + [None]),
        },
        "network": {"vpc_cidr": values.valid(rng, "network.vpc_cidr")},
        "tags": values.valid(rng, "tags") if rng.random() < 0.5 else {},
    }
    if kind == "cpfs":
        profile["storage"]["allow_unencrypted_cpfs"] = True
    if rng.random() < 0.5:
        profile["network"]["zones"] = values.valid(rng, "network.zones", region)
    if rng.random() < 0.3:
        profile["network"]["admin_cidr"] = values.valid(rng, "network.admin_cidr")
    if blueprint == "fixed-cluster":
        profile["compute"]["nodes"] = rng.choice([1, 2, 12, 100, 101, 250, 2000])
    elif blueprint == "kubernetes-pool":
        # An ACK node pool holds 0–1000 nodes and has no desired size or off-hours schedule (the autoscaler sizes it).
        low = rng.choice([0, 0, 1, 2, 50])
        high = max(rng.choice([low, low + 1, low + 8, 1000]), low, 1)
        profile["compute"].update(min_nodes=low, max_nodes=high)
        if rng.random() < 0.5:
            profile["compute"]["nodes_per_job"] = rng.randint(1, high)
    else:
        low = rng.choice([0, 0, 1, 2, 50])
        high = rng.choice([low, low + 1, low + 8, 2000]) or 1
        profile["compute"].update(min_nodes=low, max_nodes=max(high, low))
        if rng.random() < 0.5:
            profile["compute"]["desired_nodes"] = rng.randint(low, max(high, low))
        if rng.random() < 0.6:
            profile["cost"] = {
                "off_hours": {
                    "enabled": True,
                    "timezone": values.valid(rng, "cost.off_hours.timezone"),
                    "work_start": values.valid(rng, "cost.off_hours.work_start"),
                    "work_end": values.valid(rng, "cost.off_hours.work_end"),
                    "start_date": values.valid(rng, "cost.off_hours.start_date"),
                    "weekdays_only": rng.random() < 0.5,
                }
            }
    if blueprint == "lingjun-cluster":
        return _lingjun_profile(rng, values, profile)
    if rng.random() < 0.3:
        profile["cost"] = {**profile.get("cost", {}), "spot": True}
    return profile


def _lingjun_profile(rng: random.Random, values: Values, profile: dict[str, Any]) -> dict[str, Any]:
    """A lingjun-cluster profile: a Lingjun machine type where the catalog shows it, its zone and HPN zone, the node
    spec Alibaba does not publish, an ACK-mountable file system; no spot, no off-hours schedule."""
    row = rng.choice(sorted(values.catalog.lingjun.values(), key=lambda r: r.machine_type))
    zone, hpn = rng.choice(row.zones)
    region = next(r for r in row.regions if zone in values.catalog.zones(r))
    nodes = rng.choice([1, 2, 16, 1000])
    profile.update(region=region, network={**profile["network"], "zones": [zone]})
    profile.pop("cost", None)
    profile["storage"].update(kind=rng.choice(["nas", "extreme_nas"]), zone=rng.choice([zone, None]))
    profile["storage"]["throughput_tier"] = next(t for k, t in values.tiers if k == profile["storage"]["kind"])
    profile["storage"].pop("allow_unencrypted_cpfs", None)
    profile["compute"] = {
        "instance_type": row.machine_type,
        "nodes": nodes,
        "zone": zone,
        "hpn_zone": hpn,
        "node_image_id": "i198448731735114628708",
        "node_spec": {"gpus": rng.choice([8, 16]), "vcpus": 192, "memory_gib": 1967, "source": "fuzz"},
    }
    if rng.random() < 0.5:
        profile["compute"]["nodes_per_job"] = rng.randint(1, nodes)
    return profile


def draw(values: Values, seed: int, index: int) -> Case:
    """Draw number ``index`` of run ``seed`` (independent of every other draw)."""
    rng = random.Random(f"{seed}:{index}")
    presets = preset_names()
    start = rng.random()
    if start < 0.25:
        case = Case(preset=rng.choice(presets), profile=None)
    elif start < 0.4:
        case = Case(preset=None, profile={}, stack_preset=rng.choice(presets))
    else:
        case = Case(preset=None, profile=base_profile(rng, values, rng.choice(sorted(values.models))))
    region = (case.profile or {}).get("region", "cn-shanghai")
    paths = sorted(values.leaves)
    for _ in range(rng.choice([0, 1, 1, 1, 1, 2, 2, 3, 5])):
        path = rng.choice(paths)
        kind = rng.choice(KINDS)
        case.mutations.append(mutation(rng, values, path, kind, region, case))
    if rng.random() < 0.02:
        case.document = rng.choice(odd_documents(rng))
    return case


def mutation(rng: random.Random, values: Values, path: str, kind: str, region: str, case: Case) -> Mutation:
    """One mutation of ``kind`` at ``path`` through a random route."""
    route = "set" if rng.random() < 0.45 else "stack"
    if kind == "hostile_yaml":
        text = rng.choice(HOSTILE_YAML)
        return (
            Mutation("set", path, text, kind)
            if route == "set" or "\n" in text
            else Mutation("stack", path, Raw(text), kind)
        )
    if kind == "unknown_key":
        parent = path.rsplit(".", 1)[0] if "." in path else ""
        key = rng.choice(
            [
                "bogus",
                path.rsplit(".", 1)[-1] + "s",
                path.rsplit(".", 1)[-1].upper(),
                "nodez",
                "__class__",
                "",
                " ",
                "a.b",
                "0",
            ]
        )
        return Mutation(route, f"{parent}.{key}" if parent else key, values.valid(rng, path, region), kind)
    if kind == "other_blueprint_key":
        owners = set(values.leaves[path])
        foreign = [p for p, o in values.leaves.items() if set(o) != owners] or [path]
        other = rng.choice(foreign)
        return Mutation(route, other, values.valid(rng, other, region), kind)
    if kind == "misnested_config":
        key = rng.choice(
            [
                f"{PROFILE_KEY}.{path}",
                f"{PROFILE_KEY}:{path}",
                f"{PROFILE_KEY}[0]",
                "aitrain:presets",
                "aitrain:profile_typo",
                "aitrain:config:profile",
                "aitrain:",
                "Aitrain:profile",
                "other:key",
                "aitrain:preset.x",
                PRESET_KEY,
            ]
        )
        value = rng.choice(
            [
                values.valid(rng, path, region),
                rng.choice(preset_names()),
                None,
                [1],
                {"a": 1},
                json.dumps({"blueprint": "fixed-cluster"}),
                "{not json",
                4,
            ]
        )
        return Mutation("config", key, value, kind)
    if kind == "bad_preset":
        bad = rng.choice(
            [
                "",
                "nope",
                "medical_imaging",
                "MEDICAL-IMAGING",
                "../etc/passwd",
                "medical-imaging\n",
                "medical-imaging ",
                "é",
                "a" * 5000,
                *preset_names(),
            ]
        )
        if rng.random() < 0.5:
            case.preset = bad
            return Mutation("set", path, str(values.valid(rng, path, region)), "valid")
        return Mutation("config", PRESET_KEY, rng.choice([bad, None, 5, ["x"], {"a": 1}, Raw("&a [*a]")]), kind)
    generator = {
        "valid": lambda: values.valid(rng, path, region),
        "boundary": lambda: values.boundary(rng, path),
        "wrong_type": lambda: values.wrong_type(rng, path),
        "huge": lambda: values.huge(rng, path),
        "nasty_text": lambda: values.nasty_text(rng, path, region),
        "long_text": lambda: values.long_text(rng, path),
        "nested": lambda: values.nested(rng, path),
        "duplicates": lambda: values.duplicates(rng, path, region),
    }[kind]
    value = generator()
    if route == "set":
        return Mutation("set", path, set_text(rng, value), kind)
    return Mutation("stack", path, value, kind)


def set_text(rng: random.Random, value: Any) -> str:
    """How a person would type ``value`` after ``--set PATH=``: bare, quoted, or as flow YAML."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, str):
        return rng.choice([value, value, json.dumps(value, ensure_ascii=False), f"'{value}'"])
    return _scalar(value)


def odd_documents(rng: random.Random) -> list[str]:
    """Whole stack files that are odd as documents."""
    return [
        "",
        "\n",
        "config:\n",
        "config: []\n",
        "config: x\n",
        "- a\n",
        "config:\n  aitrain:preset: medical-imaging\nconfig:\n  aitrain:preset: x\n",
        "\ufeffconfig:\n  aitrain:preset: medical-imaging\n",
        "config:\r\n  aitrain:preset: medical-imaging\r\n",
        "config:\n\taitrain:preset: medical-imaging\n",
        "config:\n  aitrain:preset: &p medical-imaging\n  aitrain:profile: {name: *p}\n",
        "config:\n  aitrain:profile: !!python/object/apply:os.system ['true']\n",
        "config:\n  aitrain:preset: medical-imaging\n---\nconfig: {}\n",
        "config:\n  aitrain:preset: medical-imaging\n  aitrain:profile:\n    tags: " + HOSTILE_YAML[2] + "\n",
        "config:\n  aitrain:profile:\n    blueprint: fixed-cluster\n    "
        "compute: {nodes: 1}\n  aitrain:profile.compute.nodes: 4\n",
        "\x00",
        "config: {aitrain:preset: medical-imaging}\n",
        "config:\n  aitrain:preset: medical-imaging\n  aitrain:profile:\n    " + "a: {" * 40 + "}" * 40 + "\n",
    ]
