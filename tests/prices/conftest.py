"""Recorded DescribePrice answers as a CloudReader, and a fresh catalog copy per test (writes go to copies only)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Mapping

import pytest

from blueprints.catalog.loader import CATALOG_DIR
from blueprints.preflight.checks import CloudError
from blueprints.preflight.prices import DESCRIBE_PRICE

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "prices" / "describe_price.json"


class PriceReplay:
    """Answers a call with the recorded response whose ``request`` equals the call's parameters exactly."""

    def __init__(self, failing: Mapping[tuple[str, str], CloudError] | None = None):
        self.calls: list[dict[str, Any]] = []
        self.readers_built: list[str] = []
        self.failing = dict(failing or {})  # (region, type) → the error its call raises
        self.recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))["responses"]

    def call(self, api: str, params: Mapping[str, Any]) -> dict[str, Any]:
        assert api == DESCRIBE_PRICE
        self.calls.append(dict(params))
        key = (str(params.get("RegionId")), str(params.get("InstanceType")))
        if key in self.failing:
            raise self.failing[key]
        for recorded in self.recorded:
            if recorded["request"] == dict(params):
                if "error" in recorded:
                    raise CloudError(api, recorded["error"]["code"], recorded["error"]["message"])
                return dict(recorded["body"])
        raise CloudError(api, "NoRecording", f"no recorded response for {dict(params)}")


@pytest.fixture
def catalog_copy(tmp_path: Path) -> Path:
    target = tmp_path / "my-catalog"
    shutil.copytree(CATALOG_DIR, target)
    return target
