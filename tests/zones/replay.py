"""Replay the recorded DescribeAvailableResource answers (tests/data/zones/) as a CloudReader: no SDK, no sockets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from blueprints.preflight.checks import AVAILABLE_RESOURCE, CloudError

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "zones" / "describe_available_resource_instance_type.json"


class ZonesReplay:
    """Answers a call with the recorded response whose ``request`` equals the call's parameters exactly."""

    def __init__(self, failing: Mapping[str, CloudError] | None = None):
        self.calls: list[dict[str, Any]] = []
        self.readers_built: list[str] = []  # regions the CLI built a reader for (set by the CLI tests' stand-in)
        self.failing = dict(failing or {})  # region → the error its call raises
        self.recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))["responses"]

    def call(self, api: str, params: Mapping[str, Any]) -> dict[str, Any]:
        assert api == AVAILABLE_RESOURCE
        self.calls.append(dict(params))
        if params.get("RegionId") in self.failing:
            raise self.failing[str(params["RegionId"])]
        for recorded in self.recorded:
            if recorded["request"] == dict(params):
                return dict(recorded["body"])
        raise CloudError(api, "NoRecording", f"no recorded response for {dict(params)}")
