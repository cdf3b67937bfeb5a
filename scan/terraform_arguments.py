r"""Regenerate tests/data/terraform_arguments.json: the argument names terraform-provider-alicloud documents for
each Terraform type in blueprints/data/terraform_names.json (a tool, not runtime; the export test checks every
exported attribute against it, so a wrong name from the default rule shows up offline).

Usage:
    python scan/terraform_arguments.py GIT_DIR_OF_terraform-provider-alicloud COMMIT \
        > tests/data/terraform_arguments.json

Arguments are the bullet names (`* `name``) of website/docs/r/<type without alicloud_>.html.markdown, nested
block arguments included (their names are documented under the block's own heading).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_BULLET = re.compile(r"^\s*\*\s*`([a-z0-9_]+)`", re.M)


def arguments(git_dir: str, commit: str) -> dict[str, list[str]]:
    """Per Terraform type, the sorted documented names."""
    names = json.loads((ROOT / "blueprints" / "data" / "terraform_names.json").read_text(encoding="utf-8"))
    result = {}
    for entry in sorted(names["resources"].values(), key=lambda e: str(e["type"])):
        tf_type = entry["type"]
        doc = f"{commit}:website/docs/r/{tf_type.removeprefix('alicloud_')}.html.markdown"
        text = subprocess.run(
            ["git", "--git-dir", git_dir, "show", doc], capture_output=True, text=True, check=True
        ).stdout
        result[tf_type] = sorted(set(_BULLET.findall(text)))
    return result


if __name__ == "__main__":
    data = {
        "source": {
            "repository": "https://github.com/aliyun/terraform-provider-alicloud",
            "commit": sys.argv[2],
            "path": "website/docs/r/<type>.html.markdown",
        },
        "arguments": arguments(sys.argv[1], sys.argv[2]),
    }
    sys.stdout.write(json.dumps(data, indent=1, sort_keys=True) + "\n")
