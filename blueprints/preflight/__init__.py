"""Capacity preflight: what a plan needs from the cloud (quotas, stock, file-system zones) and what is short.

Pure core: ``needs`` (from the offline Plan), ``checks`` (against a ``CloudReader``), ``report`` (JSON / text),
``credentials`` (looks for credentials without calling anything). ``aliyun`` is the SDK adapter, imported lazily.
"""

from blueprints.preflight.checks import Check, CloudError, CloudReader, run_checks
from blueprints.preflight.credentials import find_credentials
from blueprints.preflight.needs import ComputeNeed, Needs, StorageNeed, needs_from_plan
from blueprints.preflight.report import SCHEMA, Report, render_text

__all__ = [
    "SCHEMA",
    "Check",
    "CloudError",
    "CloudReader",
    "ComputeNeed",
    "Needs",
    "Report",
    "StorageNeed",
    "find_credentials",
    "needs_from_plan",
    "render_text",
    "run_checks",
]
