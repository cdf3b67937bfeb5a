"""The CI workflow: its YAML, and its `run:` steps executed with bash against a two-commit repository and a fake `gh`.

`uses:` steps (checkout, setup-python) and the `install` step are skipped: the repository is already checked out
at the head and aitrain is this worktree, reached through an `aitrain` shim first on PATH.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from blueprints.ci.comment import MARKER
from blueprints.ci.workflow import ACTIONS, workflow_yaml
from blueprints.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "aitrain-plan.yml"
THIS_REPO = {"stacks": "examples/stacks", "install": "python -m pip install ."}
TODAY = "2026-12-01"

TRAIN = "config:\n  aitrain:preset: medical-imaging\n  aitrain:profile:\n    compute:\n      nodes: {nodes}\n"
DATA = (
    "config:\n  aitrain:preset: medical-imaging\n  aitrain:profile:\n    "
    "storage:\n      kind: {kind}\n      throughput_tier: {tier}\n"
)
POOL = "config:\n  aitrain:preset: autoscaling-training\n"

FAKE_GH = """\
#!{python}
# A stand-in for the GitHub CLI: records its arguments and any body file, answers the comment listing.
import json, os, shutil, sys
log = os.environ["FAKE_GH_LOG"]
args = sys.argv[1:]
calls = [json.loads(line) for line in open(log)] if os.path.exists(log) else []
for a in args:
    if a.startswith("body=@"):
        shutil.copy(a[len("body=@"):], f"{{log}}.body{{len(calls)}}.md")
with open(log, "a") as f:
    f.write(json.dumps(args) + "\\n")
if "--method" in args and os.environ.get("FAKE_GH_FAIL"):
    sys.exit("HTTP 403: Resource not accessible by integration")
if "--paginate" in args and os.environ.get("FAKE_GH_EXISTING"):
    print(os.environ["FAKE_GH_EXISTING"])
"""


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def test_repo_workflow_is_the_commands_output_for_this_repo(tmp_path):
    assert WORKFLOW.read_text(encoding="utf-8") == workflow_yaml(**THIS_REPO)
    out = tmp_path / "w.yml"
    result = CliRunner().invoke(
        app, ["ci", "github", "--out", str(out), "--stacks", THIS_REPO["stacks"], "--install", THIS_REPO["install"]]
    )
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8") == WORKFLOW.read_text(encoding="utf-8")


def test_workflow_triggers_permissions_and_checkout():
    wf = _workflow()
    assert set(wf.get("on", wf.get(True))) == {"pull_request"}  # YAML 1.1 reads a bare `on` as True
    assert wf["permissions"] == {"contents": "read", "pull-requests": "write"}
    job = wf["jobs"]["plan"]
    assert job["env"]["AITRAIN_STACKS"] == "examples/stacks" and job["env"]["AITRAIN_FAIL_ON"] == "data-risk"
    checkout = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout"))
    assert checkout["with"]["fetch-depth"] == 0
    scripts = [s["run"] for s in job["steps"] if "run" in s]
    assert not any("${{" in text for text in scripts), "expressions belong in env:, not inside scripts"
    assert any("git worktree add" in text for text in scripts)


PINNED = f'python -m pip install "aitrain @ git+https://github.com/octo/aitrain@{"a" * 40}"'


def test_user_workflow_takes_the_stack_folder_and_install_command():
    wf = yaml.safe_load(workflow_yaml(stacks="infra/stacks: prod", install=PINNED))
    job = wf["jobs"]["plan"]
    assert job["env"]["AITRAIN_STACKS"] == "infra/stacks: prod"
    assert next(s for s in job["steps"] if s.get("id") == "install")["run"].strip() == PINNED


def test_bad_workflow_settings_exit_2(tmp_path):
    result = CliRunner().invoke(app, ["ci", "github", "--stacks", "", "--install", " "])
    assert result.exit_code == 2
    assert "--stacks" in result.output and "--install" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    "command, why",
    [
        ("python -m pip install aitrain", "no package of that name is published"),
        ("pip install --upgrade pip && pip install 'aitrain[preflight]'", "no package of that name is published"),
        ("pip install aitrain==0.1.0", "an exact version is accepted only with --index-url"),
        ("pip install 'aitrain @ git+https://github.com/octo/aitrain'", "without @<commit>"),
        ("pip install 'aitrain @ git+https://github.com/octo/aitrain@main'", "a branch or moving tag"),
        ("pip install git+ssh://git@github.com/octo/aitrain.git@v1", "a branch or moving tag"),
        ("pip install 'aitrain @ git+https://github.com/octo/aitrain@3d3c42e'", "give all 40 hex digits"),
        ("pip install https://example.com/aitrain-0.1.tar.gz", "without #sha256="),
    ],
)
def test_install_from_a_name_or_an_unpinned_url_is_refused(command, why):
    result = CliRunner().invoke(app, ["ci", "github", "--install", command], terminal_width=400)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "--install" in text and why in text and "@<40-hex commit>" in text and "./vendor/aitrain" in text
    assert "Traceback" not in result.output and "name: aitrain plan" not in result.output  # nothing half-written


@pytest.mark.parametrize(
    "command",
    [
        "python -m pip install .",
        "python -m pip install ./vendor/aitrain",
        "python -m pip install -e '.[test]'",
        f"pip install --upgrade pip\npip install 'aitrain @ git+https://github.com/octo/aitrain@{'0' * 40}'",
        "pip install git+ssh://git@github.com/octo/aitrain.git@v0.4.2",
        "pip install 'aitrain[preflight] @ https://example.com/aitrain-0.1.tar.gz#sha256=" + "f" * 64 + "'",
        "pip install --index-url https://pypi.example.com/simple aitrain==0.1.0",
        "make ci-install",
    ],
)
def test_install_from_a_pinned_source_is_accepted(command):
    assert yaml.safe_load(workflow_yaml(install=command))["jobs"]["plan"]["steps"][2]["run"].strip() == command


def test_without_install_the_running_commit_is_pinned_or_the_option_is_required(monkeypatch, tmp_path):
    """The default is never the bare name: the aitrain pip installed
    from a git commit, else exit 2 asking for --install."""
    from blueprints.ci import install

    monkeypatch.setattr(
        install, "running_direct_url", lambda: {"url": "file:///home/me/aitrain", "dir_info": {"editable": True}}
    )
    out = tmp_path / "w.yml"
    result = CliRunner().invoke(app, ["ci", "github", "--out", str(out)], terminal_width=400)
    assert (
        result.exit_code == 2
        and "--install" in result.output
        and "is required" in result.output
        and "not published on PyPI" in result.output
    )
    assert not out.exists()
    sha = "1" * 40
    monkeypatch.setattr(
        install,
        "running_direct_url",
        lambda: {
            "url": "https://github.com/octo/aitrain.git",
            "vcs_info": {"vcs": "git", "commit_id": sha, "requested_revision": "v0.4.2"},
        },
    )
    result = CliRunner().invoke(app, ["ci", "github"])
    assert result.exit_code == 0, result.output
    step = next(s for s in yaml.safe_load(result.output)["jobs"]["plan"]["steps"] if s.get("id") == "install")
    assert step["run"].strip() == f'python -m pip install "aitrain @ git+https://github.com/octo/aitrain.git@{sha}"'
    archive = {"url": "https://example.com/aitrain-0.4.2.tar.gz", "archive_info": {"hashes": {"sha256": "e" * 64}}}
    assert (
        install.derived_install(archive)
        == f'python -m pip install "aitrain @ https://example.com/aitrain-0.4.2.tar.gz#sha256={"e" * 64}"'
    )
    assert (
        install.derived_install(
            {"url": "https://github.com/octo/aitrain.git", "vcs_info": {"vcs": "git", "commit_id": "abc"}}
        )
        is None
    )


def test_every_action_is_pinned_by_commit():
    """`uses: owner/action@<40 hex> # vX.Y.Z`, in the command's output and in this repository's workflow."""
    for text in (workflow_yaml(install="pip install ."), WORKFLOW.read_text(encoding="utf-8")):
        uses = re.findall(r"^\s*(?:- )?uses: (.+)$", text, flags=re.M)
        assert len(uses) == 2
        for line in uses:
            assert re.fullmatch(r"actions/(checkout|setup-python)@[0-9a-f]{40} # v\d+\.\d+\.\d+", line), line
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for repo, sha, tag in ACTIONS.values():
        assert f"{repo}@{sha} # {tag}" in readme  # the README quotes the pins the command writes


def test_out_creates_the_workflows_folder(tmp_path):
    out = tmp_path / "repo" / ".github" / "workflows" / "aitrain-plan.yml"
    result = CliRunner().invoke(
        app, ["ci", "github", "--out", str(out), "--install", "python -m pip install ./vendor/aitrain"]
    )
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8") == workflow_yaml(install="python -m pip install ./vendor/aitrain")
    blocked = tmp_path / "file"
    blocked.write_text("")
    result = CliRunner().invoke(app, ["ci", "github", "--out", str(blocked / "w.yml"), "--install", "pip install ."])
    assert result.exit_code == 2 and "--out" in result.output and "Traceback" not in result.output


def test_workflow_python_is_the_python_the_project_tests():
    """One version: the lower bound of pyproject's requires-python,
    which `make` and CI test on; the workflow plans on it."""
    import tomllib

    from blueprints.ci.workflow import PYTHON_VERSION

    requires = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    assert re.fullmatch(r">=\s*(\d+\.\d+)(,.*)?", requires), requires
    assert PYTHON_VERSION == re.match(r">=\s*(\d+\.\d+)", requires).group(1)
    setup = next(
        s for s in _workflow()["jobs"]["plan"]["steps"] if str(s.get("uses", "")).startswith("actions/setup-python")
    )
    assert setup["with"]["python-version"] == PYTHON_VERSION


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def _resolve(value: str, context: dict) -> str:
    """Evaluate the `${{ a.b.c }}` expressions the workflow uses, from a context dict (github.*, steps.*)."""

    def lookup(match: re.Match[str]) -> str:
        node: object = context
        for part in match.group(1).split("."):
            assert isinstance(node, dict) and part in node, f"unknown expression {match.group(0)}"
            node = node[part]
        return str(node)

    return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", lookup, str(value))


class Runner:
    """Runs one workflow step's script as GitHub would (bash -eo pipefail) with the job's and step's env."""

    def __init__(self, repo: Path, tmp: Path, event: dict):
        self.repo, self.tmp = repo, tmp
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        (bin_dir / "gh").write_text(FAKE_GH.format(python=sys.executable))
        (bin_dir / "aitrain").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m blueprints.cli.main "$@"\n')
        for tool in ("gh", "aitrain"):
            (bin_dir / tool).chmod(0o755)
        (tmp / "event.json").write_text(json.dumps(event))
        (tmp / "runner").mkdir()
        self.output = tmp / "github_output"
        self.output.write_text("")
        self.env = {
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(tmp),
            "PYTHONPATH": str(ROOT),
            "GITHUB_EVENT_PATH": str(tmp / "event.json"),
            "GITHUB_REPOSITORY": "octo/infra",
            "GITHUB_BASE_REF": "main",
            "GITHUB_OUTPUT": str(self.output),
            "GITHUB_STEP_SUMMARY": str(tmp / "step_summary.md"),
            "RUNNER_TEMP": str(tmp / "runner"),
            "AITRAIN_TODAY": TODAY,
            "FAKE_GH_LOG": str(tmp / "gh.log"),
        }
        self.context = {"github": {"event": event, "token": "fake-token", "repository": "octo/infra"}, "steps": {}}
        wf = _workflow()
        self.job_env = {k: str(v) for k, v in wf["jobs"]["plan"]["env"].items()}
        self.steps = {s["id"]: s for s in wf["jobs"]["plan"]["steps"] if "id" in s}

    def run(self, step_id: str, **extra: str) -> subprocess.CompletedProcess[str]:
        step = self.steps[step_id]
        outputs = dict(line.split("=", 1) for line in self.output.read_text().splitlines() if "=" in line)
        self.context["steps"] = {"compare": {"outputs": outputs}}
        env = {
            **self.env,
            **self.job_env,
            **{k: _resolve(v, self.context) for k, v in step.get("env", {}).items()},
            **extra,
        }
        script = self.tmp / f"{step_id}.sh"
        script.write_text(step["run"])
        return subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=self.repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def gh_calls(self) -> list[list[str]]:
        log = self.tmp / "gh.log"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture(scope="module")
def pr(tmp_path_factory):
    """A repository with a base commit and a head commit (nodes 12
    → 16, a storage-kind change, one stack added, one removed)."""
    tmp = tmp_path_factory.mktemp("pr")
    repo = tmp / "repo"
    stacks = repo / "examples" / "stacks"
    stacks.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "ci@example.com")
    _git(repo, "config", "user.name", "ci")
    (stacks / "Pulumi.train.yaml").write_text(TRAIN.format(nodes=12))
    (stacks / "Pulumi.data.yaml").write_text(DATA.format(kind="extreme_nas", tier="standard"))
    (stacks / "Pulumi.old.yaml").write_text(POOL)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    base_sha = _git(repo, "rev-parse", "HEAD")
    (stacks / "Pulumi.train.yaml").write_text(TRAIN.format(nodes=16))
    (stacks / "Pulumi.data.yaml").write_text(DATA.format(kind="nas", tier="Performance"))
    (stacks / "Pulumi.old.yaml").unlink()
    (stacks / "Pulumi.pool.yaml").write_text(POOL)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "head")
    event = {
        "pull_request": {
            "number": 42,
            "base": {"sha": base_sha, "ref": "main"},
            "head": {"sha": _git(repo, "rev-parse", "HEAD"), "repo": {"fork": False}},
        }
    }
    runner = Runner(repo, tmp, event)
    base = runner.run("base")
    assert base.returncode == 0, base.stderr
    compare = runner.run("compare")
    assert compare.returncode == 0, compare.stderr  # the step records the status; it never fails by itself
    return runner, compare


def _sections(body: str) -> dict[str, str]:
    parts = re.split(r"^### `([^`]+)` — ", body, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def test_compare_step_writes_one_comment_with_a_section_per_stack(pr):
    runner, compare = pr
    body = (runner.tmp / "runner" / "aitrain-comment.md").read_text()
    (runner.tmp / "comment.md").write_text(body)  # kept for the report
    assert body.startswith(MARKER + "\n## aitrain plan\n")
    assert "**Blocked: a change of class `data-risk`** in `data`, `old`." in body
    assert f"--today {TODAY}" in body
    sections = _sections(body)
    assert list(sections) == ["data", "old", "pool", "train"]
    assert (
        sections["train"].startswith("changed")
        and "| replace-delete-first | `medical-imaging-cluster-nodes-0` |" in sections["train"]
    )
    assert "amount 12 → 16 forces replacement" in sections["train"]
    assert sections["data"].startswith("changed") and "fileSystemType" in sections["data"]
    assert sections["pool"].startswith("new") and "New stack file" in sections["pool"]
    assert sections["old"].startswith("removed") and "Stack file removed" in sections["old"]
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `(\w+)` \|.*$", body, flags=re.M)}
    assert "| 0 |" in rows["train"] and "| 0 |" in rows["pool"]
    assert "⚠" in rows["data"] and "⚠" in rows["old"]
    assert len(body) < 65_536
    assert "status=1" in runner.output.read_text().splitlines()


def test_comment_step_posts_first_then_patches_the_marked_comment(pr):
    runner, _ = pr
    body = (runner.tmp / "runner" / "aitrain-comment.md").read_text()
    first = runner.run("comment")
    assert first.returncode == 0, first.stderr
    listing, post = runner.gh_calls()
    assert listing[:2] == ["api", "repos/octo/infra/issues/42/comments"] and "--paginate" in listing
    assert MARKER in listing[listing.index("--jq") + 1]
    assert post[:4] == ["api", "--method", "POST", "repos/octo/infra/issues/42/comments"]
    assert (runner.tmp / "gh.log.body1.md").read_text() == body

    second = runner.run("comment", FAKE_GH_EXISTING="987654")
    assert second.returncode == 0, second.stderr
    patch = runner.gh_calls()[3]
    assert patch[:4] == ["api", "--method", "PATCH", "repos/octo/infra/issues/comments/987654"]
    assert (runner.tmp / "gh.log.body3.md").read_text() == body
    assert "updated comment 987654" in second.stdout


def test_verdict_step_fails_the_job_on_a_data_risk(pr):
    runner, _ = pr
    verdict = runner.run("verdict")
    assert verdict.returncode == 1
    assert (
        "::error::blocked: an error-level guardrail finding in a head plan or a change of class data-risk"
        in verdict.stdout
    )


def test_verdict_step_passes_without_a_change_of_the_class(pr, tmp_path):
    runner, _ = pr
    assert runner.run("verdict", STATUS="0").returncode == 0
    assert runner.run("verdict", STATUS="2").returncode == 2


def test_comment_step_posts_nothing_without_a_body(tmp_path):
    runner = Runner(
        tmp_path, tmp_path, {"pull_request": {"number": 1, "base": {"sha": "0"}, "head": {"repo": {"fork": False}}}}
    )
    result = runner.run("comment")
    assert result.returncode == 0 and "no comment body" in result.stdout
    assert runner.gh_calls() == []


def test_workflow_header_says_how_to_regenerate():
    assert WORKFLOW.read_text().startswith(textwrap.dedent("# Written by `aitrain ci github`"))


def test_stack_files_pulumi_up_reads_are_not_git_ignored():
    """A Pulumi.<stack>.yaml beside Pulumi.yaml (where `pulumi up` reads it) can be committed, and so reviewed."""
    if subprocess.run(["git", "rev-parse", "--git-dir"], cwd=ROOT, capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    for path in ("Pulumi.dev.yaml", "Pulumi.prod.yaml", "examples/stacks/Pulumi.new.yaml"):
        ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=ROOT, capture_output=True)
        assert ignored.returncode == 1, f"{path} is git-ignored, so the workflow never sees it"


def test_comment_lookup_takes_only_the_workflows_own_comment(pr):
    """Anyone can write the marker: the listing filter (run with
    jq, the language `gh --jq` takes) keeps the bot's only."""
    runner, _ = pr
    script = runner.steps["comment"]["run"]
    jq_filter = re.search(r"--jq '([^']+)'", script).group(1)
    listing = [
        {"id": 1, "user": {"login": "mallory"}, "body": f"{MARKER}\nlooks fine to me"},
        {"id": 2, "user": {"login": "github-actions[bot]"}, "body": "an unrelated bot comment"},
        {"id": 3, "user": {"login": "github-actions[bot]"}, "body": f"{MARKER}\n## aitrain plan"},
    ]
    found = subprocess.run(
        ["jq", jq_filter], input=json.dumps(listing), capture_output=True, text=True, check=True
    ).stdout.split()
    assert found == ["3"]


def test_a_fork_pull_request_writes_the_job_summary_with_a_clear_line(pr):
    runner, _ = pr
    body = (runner.tmp / "runner" / "aitrain-comment.md").read_text()
    before = len(runner.gh_calls())
    result = runner.run("comment", FROM_FORK="true")
    assert result.returncode == 0, result.stderr
    assert (
        "::warning::pull request from a fork: GitHub gives its workflow a read-only token, so no comment is posted"
        in result.stdout
    )
    assert "the plan is in this run's job summary instead" in result.stdout
    assert len(runner.gh_calls()) == before  # no API call that would fail with 403
    assert (runner.tmp / "step_summary.md").read_text().endswith(body)


def test_a_refused_post_falls_back_to_the_summary_and_the_verdict_still_runs(pr):
    runner, _ = pr
    (runner.tmp / "step_summary.md").unlink(missing_ok=True)
    result = runner.run("comment", FAKE_GH_FAIL="1")
    assert result.returncode == 0, result.stderr
    assert "::warning::could not post the comment (the token may be read-only)" in result.stdout
    assert MARKER in (runner.tmp / "step_summary.md").read_text()
    assert _workflow()["jobs"]["plan"]["steps"][-1]["if"] == "${{ !cancelled() }}"


def test_the_base_side_is_the_base_commits_committed_plans_when_it_has_them(tmp_path):
    """With <stacks>/plans/ on the base, the compare step passes --base-plans: the base is what its own code wrote."""
    repo = tmp_path / "repo"
    stacks = repo / "examples" / "stacks"
    (stacks / "plans").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "ci@example.com")
    _git(repo, "config", "user.name", "ci")
    (stacks / "Pulumi.train.yaml").write_text(TRAIN.format(nodes=12))
    plan = json.loads(
        subprocess.run(
            [
                sys.executable,
                "-m",
                "blueprints.cli.main",
                "plan",
                "--stack-config",
                str(stacks / "Pulumi.train.yaml"),
                "--format",
                "json",
                "--today",
                TODAY,
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        ).stdout
    )
    for r in plan["resources"]:
        if r["name"] == "medical-imaging-storage-fs":
            r["inputs"]["fileSystemType"] = "standard"  # what the base's own (older) code planned
    (stacks / "plans" / "train.plan.json").write_text(json.dumps(plan))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    base_sha = _git(repo, "rev-parse", "HEAD")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "head")
    runner = Runner(
        repo, tmp_path, {"pull_request": {"number": 7, "base": {"sha": base_sha}, "head": {"repo": {"fork": False}}}}
    )
    assert runner.run("base").returncode == 0
    compare = runner.run("compare")
    assert compare.returncode == 0, compare.stderr
    body = (tmp_path / "runner" / "aitrain-comment.md").read_text()
    assert "fileSystemType" in body  # the stack file did not change; the base's committed plan differs
    assert (
        "base: the base commit's committed plans (`examples/stacks/plans/`, written by the base's own aitrain)._"
        in body
    )
