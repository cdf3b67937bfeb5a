"""The GitHub Actions workflow that plans every stack on a pull request's base and head and posts one comment.

``aitrain ci github`` writes it; this repository's ``.github/workflows/aitrain-plan.yml`` is its output for
``--stacks examples/stacks --install "python -m pip install ."`` (a test keeps them equal). The logic lives in
``aitrain ci comment``; the steps only check out the base, run it, upsert the comment with ``gh api`` (or, on a
fork's read-only token, write it to the job summary) and fail.
Every action is pinned by commit (``ACTIONS``) and aitrain is installed from a source the user pins (``ci.install``).
"""

from __future__ import annotations

import json

from blueprints.ci.comment import MARKER
from blueprints.ci.install import check_install
from blueprints.core.errors import Problem, UserInputError
from blueprints.review.diff.compare import FAIL_ON

# The author of comments posted with the job's GITHUB_TOKEN: the only author whose marked comment is updated.
COMMENT_AUTHOR = "github-actions[bot]"

DEFAULT_STACKS = "."
# The Python the project tests: the lower bound of pyproject's requires-python (a test keeps them equal), so the
# workflow plans on the Python the golden plans were written and checked on.
PYTHON_VERSION = "3.11"
# Each action at the commit its release tag points to, never a movable tag. Read from the actions' own repositories
# (`git rev-parse <tag>^{commit}` in clones of github.com/actions/checkout and github.com/actions/setup-python):
# checkout v7.0.1 is 3d3c42e5 "prep v7.0.1 release (#2531)" (2026-07-17); setup-python v7.0.0 is 5fda3b95
# "Pin SHA commits and update docs with latest versions (#1338)"
# (2026-07-19). To update: the new tag's commit, and its tag.
ACTIONS = {
    "checkout": ("actions/checkout", "3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1"),
    "setup-python": ("actions/setup-python", "5fda3b95a4ea91299a34e894583c3862153e4b97", "v7.0.0"),
}

# The pull request's comments in the GitHub API, and the verdict step's two error annotations: template fields
# only because they do not fit a line of it.
_COMMENTS_API = '"repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments"'
_BLOCKED = (
    "::error::blocked: an error-level guardrail finding in a head plan or a change of class $AITRAIN_FAIL_ON; "
    "see the pull-request comment (or the job summary)"
)
_FAILED = "::error::aitrain ci comment exited $STATUS (2: a stack could not be planned); see the comment and the log"

# `${{ … }}` expressions appear only in `env:` entries, never inside a `run:` script: the scripts read plain
# environment variables, which keeps untrusted PR text out of the shell and lets a test run them with bash.
_TEMPLATE = """\
# Written by `aitrain ci github`; regenerate it with that command rather than editing it.
# On every pull request: plan each Pulumi.<stack>.yaml under AITRAIN_STACKS on the head (offline, under Pulumi
# mocks) and compare with the base commit's committed plans (<stacks>/plans/, else the base's stack files), upsert
# one sticky comment with the diffs, and fail when a head plan has an error-level guardrail finding or a diff
# holds a change of class AITRAIN_FAIL_ON (data-risk, replace or any).
# Each action is pinned to the commit its release tag (in the comment) points to in github.com/actions/<action>;
# aitrain is installed from the source the install step pins. Review a change to either like a code change.
name: aitrain plan

on:
  pull_request:

permissions:
  contents: read
  pull-requests: write

concurrency:
  group: aitrain-plan-${{{{ github.event.pull_request.number }}}}
  cancel-in-progress: true

jobs:
  plan:
    name: Plan stacks on base and head
    runs-on: ubuntu-latest
    env:
      AITRAIN_STACKS: {stacks}
      AITRAIN_FAIL_ON: {fail_on}
    defaults:
      run:
        shell: bash
    steps:
      - name: Check out the pull request's head (with history, for the base commit)
        uses: {checkout}
        with:
          fetch-depth: 0

      - uses: {setup_python}
        with:
          python-version: "{python}"

      - id: install
        name: Install aitrain
        run: |
{install}
      - id: base
        name: Check out the base commit beside the head
        env:
          BASE_SHA: ${{{{ github.event.pull_request.base.sha }}}}
        run: |
          git worktree add --detach "$RUNNER_TEMP/aitrain-base" "$BASE_SHA"

      - id: compare
        name: Plan every stack on base and head and write the comment
        run: |
          # The base side is the base commit's own committed plans (<stacks>/plans/*.plan.json, written by the
          # base's aitrain with `aitrain plan --update`) when it has them: planning the base's stack files with the
          # head's code would hide a change to the code itself. Without them the comment says so.
          base_plans=()
          if [ -d "$RUNNER_TEMP/aitrain-base/$AITRAIN_STACKS/plans" ]; then
            base_plans=(--base-plans "$RUNNER_TEMP/aitrain-base/$AITRAIN_STACKS/plans")
          fi
          status=0
          aitrain ci comment --base "$RUNNER_TEMP/aitrain-base" --head . --stacks "$AITRAIN_STACKS" \\
            "${{base_plans[@]}}" --today "${{AITRAIN_TODAY:-$(date -u +%F)}}" --fail-on "$AITRAIN_FAIL_ON" \\
            --out "$RUNNER_TEMP/aitrain-comment.md" || status=$?
          echo "status=$status" >> "$GITHUB_OUTPUT"

      - id: comment
        name: Upsert the sticky pull-request comment
        env:
          GH_TOKEN: ${{{{ github.token }}}}
          PR_NUMBER: ${{{{ github.event.pull_request.number }}}}
          FROM_FORK: ${{{{ github.event.pull_request.head.repo.fork }}}}
        run: |
          body="$RUNNER_TEMP/aitrain-comment.md"
          if [ ! -s "$body" ]; then
            echo "::warning::aitrain wrote no comment body; see the compare step"
            exit 0
          fi
          summary() {{
            echo "::warning::$1; the plan is in this run's job summary instead, and the verdict step still decides"
            cat "$body" >> "$GITHUB_STEP_SUMMARY"
          }}
          # A pull request from a fork gets a read-only token: it cannot comment, so say so and use the summary.
          if [ "$FROM_FORK" = "true" ]; then
            summary "pull request from a fork: GitHub gives its workflow a read-only token, so no comment is posted"
            exit 0
          fi
          # Only this workflow's own comment (posted with the job token, so by {author}) is updated: anyone
          # can write a comment holding the marker.
          if ! id=$(gh api {comments} --paginate \\
            --jq '.[] | select(.user.login == "{author}" and (.body | contains("{marker}"))) | .id' | sed -n 1p); then
            summary "could not list the pull request's comments"
            exit 0
          fi
          if [ -n "$id" ]; then
            if gh api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$id" -F body=@"$body" > /dev/null; then
              echo "updated comment $id"
            else
              summary "could not update comment $id (the token may be read-only)"
            fi
          elif gh api --method POST {comments} -F body=@"$body" > /dev/null; then
            echo "posted a new comment"
          else
            summary "could not post the comment (the token may be read-only)"
          fi

      - id: verdict
        name: Fail on an error-level finding in a head plan or a change of the fail-on class
        if: ${{{{ !cancelled() }}}}
        env:
          STATUS: ${{{{ steps.compare.outputs.status }}}}
        run: |
          case "$STATUS" in
            0) echo "no error-level finding in a head plan and no change of class $AITRAIN_FAIL_ON" ;;
            1) echo "{blocked}"; exit 1 ;;
            *) echo "{failed}"; exit 2 ;;
          esac
"""


def workflow_yaml(
    *, install: str, stacks: str = DEFAULT_STACKS, fail_on: str = "data-risk", python: str = PYTHON_VERSION
) -> str:
    """The workflow text for a repository whose stack files are
    under ``stacks`` and which installs aitrain with ``install``.

    ``install`` has no default: it must install a source the user pins (``ci.install.check_install``).
    """
    problems = []
    if not stacks.strip() or "\n" in stacks:
        problems.append(
            Problem(
                "--stacks",
                stacks,
                "must be one folder path relative to the repository root (e.g. examples/stacks or .)",
            )
        )
    if fail_on not in FAIL_ON:
        problems.append(Problem("--fail-on", fail_on, f"must be one of {', '.join(FAIL_ON)}"))
    problems.extend(check_install(install))
    if problems:
        raise UserInputError("invalid workflow settings", problems)
    install_lines = "".join(f"          {line}\n" if line.strip() else "\n" for line in install.strip("\n").split("\n"))
    # JSON strings are valid YAML double-quoted scalars: any folder name stays one string.
    checkout, setup_python = (
        f"{repo}@{sha} # {tag}" for repo, sha, tag in (ACTIONS["checkout"], ACTIONS["setup-python"])
    )
    return _TEMPLATE.format(
        stacks=json.dumps(stacks),
        fail_on=json.dumps(fail_on),
        python=python,
        install=install_lines,
        marker=MARKER,
        author=COMMENT_AUTHOR,
        checkout=checkout,
        setup_python=setup_python,
        comments=_COMMENTS_API,
        blocked=_BLOCKED,
        failed=_FAILED,
    )
