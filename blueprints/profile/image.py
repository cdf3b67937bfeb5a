"""The node image: the ``node_image`` stack output, the plan's note when it is not pinned, and what `aitrain image pin`
reads and checks before it writes ``compute.image_id`` into a stack config.

Left empty, ``compute.image_id`` is resolved on every `pulumi up` as the newest system image matching the catalog's
pattern, so a newer Alibaba image re-images every running node at the next routine deploy. Pinning records the image
the nodes run; a newer one is then a deliberate change that `aitrain diff` shows as "stops and re-images N nodes".
Pure: no Pulumi.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from blueprints.core.errors import MISSING, Problem, UserInputError

OUTPUT_KEY = "node_image"
PINNED_SOURCE, NEWEST_SOURCE = "profile", "newest-at-plan"
# The platform (ACK) chooses the nodes' image: there is no ECS image to pin.
PLATFORM_SOURCE = "ack-image-type"
# An ECS image ID as the profile's compute.image_id accepts it: custom and shared images are m-…, public ones named
# like ubuntu_22_04_x64_20G_alibase_20230815.vhd (blueprints/catalog/data/images.csv); at most 128 characters.
IMAGE_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
IMAGE_ID_ALLOWED = (
    "an ECS image ID: 1–128 letters, digits, '.', '_' or '-', starting with a letter or digit (e.g. m-uf6abc… or "
    "ubuntu_22_04_x64_20G_alibase_20230815.vhd)"
)


def node_image_output(image_id: str, pinned: bool, applies_to: str | None = None) -> dict[str, object]:
    """``{"image_id", "pinned", "source"}``: the image the nodes boot and whether the profile pins it (``applies_to``
    says which nodes, where not all of them boot it)."""
    out: dict[str, object] = {
        "image_id": image_id,
        "pinned": pinned,
        "source": PINNED_SOURCE if pinned else NEWEST_SOURCE,
    }
    if applies_to:
        out["applies_to"] = applies_to
    return out


def platform_image_output(applies_to: str) -> dict[str, object]:
    """``node_image`` where the platform picks the image (no ID, nothing to pin): ``applies_to`` says what it does."""
    return {"image_id": None, "pinned": None, "source": PLATFORM_SOURCE, "applies_to": applies_to}


def unpinned_note(node_image: Any, name_regex: str | None, effect: str) -> str | None:
    """The plan's note when the stack outputs say the image is not pinned (None when it is, or there is none).

    ``effect``: what a newer image does at the next `pulumi up` (``blueprints.review.diff.reimage.newer_image_effect``).
    """
    if not isinstance(node_image, Mapping) or node_image.get("pinned") is not False:
        return None
    pattern = f"matching {name_regex} " if name_regex else ""
    return (
        "compute.image_id is not pinned: every `pulumi up` resolves the newest system image "
        f"{pattern}(this offline plan shows {node_image.get('image_id')}), so once Alibaba publishes a newer one a "
        f"routine `pulumi up` {effect or 'moves the nodes to it'}. The first deploy works as it is; right after it run "
        "`pulumi stack output --json > outputs.json && aitrain image pin --stack-config Pulumi.<stack>.yaml "
        "--from-outputs outputs.json --write`, and a newer image becomes a change you make on purpose."
    )


def image_region_problem(image_id: str | None, region: str, catalog: Any) -> str | None:
    """Why ``image_id`` cannot boot in ``region``, judged offline from the catalog's images.csv: an ID of a pattern the
    catalog records only for other regions (a ``*`` row covers every region). None when it can, or when no pattern
    matches (a custom ``m-…`` image, whose region only the account knows: ``pulumi up`` finds out)."""
    if not image_id:
        return None
    found = catalog.image_regions(image_id)
    if found is None:
        return None
    regions, image = found
    if region in regions or "*" in regions:
        return None
    return (
        f"is an image of pattern {image.name_regex} that the catalog (images.csv) records only in "
        f"{', '.join(sorted(regions))}, not in region {region}: ECS boots an image only in a region that has it; "
        f"allowed: an image of {region} (`aitrain image pin --newest` looks it up), a custom image copied to {region}, "
        "empty (the newest matching image at `pulumi up`), or, where your account has it there, a row for {region} in "
        "your catalog copy's images.csv (AITRAIN_CATALOG_DIR)"
    )


def checked_image_id(value: str, where: str) -> str:
    """``value`` when it is an ECS image ID; exit 2 naming ``where`` otherwise."""
    if not IMAGE_ID_RE.fullmatch(value):
        raise UserInputError("invalid image ID", [Problem(where, value, f"must be {IMAGE_ID_ALLOWED}")])
    return value


def image_from_outputs(data: Any, source: str, *, blueprint: str, profile_name: str, region: str) -> str:
    """The image the stack's nodes were built from, out of its saved outputs (``pulumi stack output --json``).

    The outputs must be this stack's: the same blueprint, profile name and region as the stack config, else exit 2
    (outputs of another stack would pin another stack's image). A missing ``node_image`` (outputs of an older aitrain)
    is exit 2 with the two ways out.
    """
    if not isinstance(data, dict) or "aitrain_outputs" not in data:
        raise UserInputError(
            f"these are not aitrain stack outputs: {source}",
            [
                Problem(
                    f"{source}: aitrain_outputs",
                    MISSING,
                    "missing; save the outputs of the stack `pulumi up` built with `pulumi stack output --json`",
                )
            ],
        )
    expected = {"blueprint": blueprint, "profile_name": profile_name, "region": region}
    wrong = [
        Problem(
            f"{source}: {key}",
            data.get(key, MISSING),
            f"the stack config is {key} {want!r}: these are the outputs of another stack; save this stack's "
            "outputs (`pulumi stack select <stack> && pulumi stack output --json`)",
        )
        for key, want in expected.items()
        if data.get(key) != want
    ]
    if wrong:
        raise UserInputError(f"outputs of another stack: {source}", wrong)
    node_image = data.get(OUTPUT_KEY)
    if not isinstance(node_image, dict) or not isinstance(node_image.get("image_id"), str):
        raise UserInputError(
            f"no node image in {source}",
            [
                Problem(
                    f"{source}: {OUTPUT_KEY}.image_id",
                    node_image.get("image_id", MISSING) if isinstance(node_image, dict) else MISSING,
                    "missing: these outputs come from an aitrain without it, or a blueprint whose nodes boot no "
                    "image aitrain resolves; run `pulumi up` with this aitrain and save the outputs again, or pass "
                    "--image-id with the ID the nodes run (ECS console, or `aliyun ecs DescribeInstances`)",
                )
            ],
        )
    return checked_image_id(node_image["image_id"], f"{source}: {OUTPUT_KEY}.image_id")


# `aitrain image pin --newest`: the same lookup as the program's get_images(name_regex, owners="system",
# instance_type, most_recent=True), through the aliyun CLI. The provider's data source pages DescribeImages with
# ImageOwnerAlias and InstanceType, keeps the names matching name_regex and takes the latest CreationTime
# (aliyun/terraform-provider-alicloud@81c43b6727a09e9da37b3d88818c3ba5fa17fa14:alicloud/data_source_alicloud_images.go
# L247-L400, L466-L475); DescribeImages: https://www.alibabacloud.com/help/en/ecs/developer-reference/
# api-ecs-2014-05-26-describeimages (paged; PageSize at most 100).
DESCRIBE_PAGE_SIZE = 100


def describe_images_argv(region: str, instance_type: str, page: int) -> list[str]:
    """One page of ``aliyun ecs DescribeImages`` with the program's filter (owners system, the nodes' type)."""
    return [
        "aliyun",
        "ecs",
        "DescribeImages",
        "--RegionId",
        region,
        "--ImageOwnerAlias",
        "system",
        "--InstanceType",
        instance_type,
        "--PageSize",
        str(DESCRIBE_PAGE_SIZE),
        "--PageNumber",
        str(page),
    ]


def described_images(stdout: str) -> tuple[list[dict[str, Any]], int]:
    """The images of one DescribeImages answer and its TotalCount; ValueError when it is not such an answer."""
    import json

    data = json.loads(stdout)
    images = (data.get("Images") or {}).get("Image") if isinstance(data, dict) else None
    total = data.get("TotalCount") if isinstance(data, dict) else None
    if not isinstance(images, list) or not all(isinstance(i, dict) for i in images) or not isinstance(total, int):
        raise ValueError("expected {'TotalCount': N, 'Images': {'Image': [...]}}")
    return images, total


def newest_matching(images: list[dict[str, Any]], name_regex: str) -> dict[str, Any] | None:
    """The image with the latest CreationTime whose ImageName matches ``name_regex`` (as the provider picks it)."""
    pattern = re.compile(name_regex)
    found = [
        i for i in images if isinstance(i.get("ImageName"), str) and i["ImageName"] and pattern.search(i["ImageName"])
    ]
    # CreationTime is RFC 3339 UTC (2023-08-15T06:49:06Z): its text orders as its time does.
    return max(found, key=lambda i: str(i.get("CreationTime") or ""), default=None)
