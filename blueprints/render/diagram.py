"""A Mermaid flowchart of a plan: region → VPC → vSwitch per zone → compute, storage, bucket, NAT/EIP.

Placeholder with the final signature (issue 8); the real drawing replaces the body.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence


def mermaid_flowchart(resources: Sequence[Mapping[str, Any]], region: str, marks: Mapping[str, str] | None = None) -> str:
    """Mermaid ``flowchart`` text for plan resources (their JSON form); ``marks`` maps a resource name to its diff
    action (create, update, replace, replace-delete-first, delete, refused) to highlight changed resources."""
    return f'flowchart TD\n  region["{region}"]\n'
