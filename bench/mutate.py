"""Mutation run: delete one statement (or one safety keyword) at a time and check that a focused test fails.

    python bench/mutate.py                    # every statement of the default targets (make mutate)
    python bench/mutate.py --must-kill-only   # only the safety-critical mutants
    python bench/mutate.py --list             # print the mutants, run nothing
    python bench/mutate.py blueprints/review/diff/compare.py --jobs 2 --timeout 120

Each mutant replaces one statement with ``pass`` (docstrings and imports are left alone), drops
one keyword argument (``protect``, ``retain_on_delete``, ``depends_on``, ``delete_before_replace``,
``ignore_changes``, ``opts=stateful(...)``) or drops one rule from ``guardrails.RULES``. Mutants run in private
copies of the repository (one per worker), never in the working tree. A mutant is *killed* when its focused
pytest subset (``-x -q``) fails or times out. "Must-kill" mutants — a guardrail rule, a ``register_outputs``,
a ``depends_on``/``protect``/``retain_on_delete``, a catalog loader cross-check, a diff risk — must all be
killed: the exit status is 1 when one survives.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The node and bucket settings that keep data and nodes safe count too: dropping one falls back to an unsafe default.
NODE_AND_BUCKET_SAFETY = (
    "http_tokens",
    "encrypted",
    "system_disk_encrypted",
    "block_public_access",
    "acl",
    "sse_algorithm",
    "network_interface_traffic_mode",
)
SAFETY_KEYWORDS = (
    "protect",
    "retain_on_delete",
    "depends_on",
    "delete_before_replace",
    "ignore_changes",
    *NODE_AND_BUCKET_SAFETY,
)
MUST_KILL_KEYWORDS = ("protect", "retain_on_delete", "depends_on", *NODE_AND_BUCKET_SAFETY)

# Focused tests per target (first match wins); fastest and most sensitive first, so -x stops early.
TESTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # The lingjun-cluster blueprint (before the packages' catch-all entries below).
    (
        "blueprints/architectures/lingjun_cluster/",
        ("tests/test_lingjun_cluster.py", "tests/test_registry.py", "tests/test_program.py"),
    ),
    ("blueprints/components/lingjun.py", ("tests/test_lingjun_cluster.py",)),
    ("blueprints/kinds/eflo.py", ("tests/test_lingjun_cluster.py", "tests/test_kinds.py")),
    ("blueprints/catalog/lingjun.py", ("tests/test_lingjun_cluster.py", "tests/catalog/test_lingjun_catalog.py")),
    ("blueprints/advisor/lingjun.py", ("tests/advisor/test_lingjun.py",)),
    # Kueue, Kubeflow Trainer v2 and the queue commands (before the packages' catch-all entries below).
    ("blueprints/launch/kubernetes", ("tests/test_launch_kubernetes.py", "tests/test_launch_trainjob.py")),
    ("blueprints/launch/pytorchjob.py", ("tests/test_launch_kubernetes.py",)),
    ("blueprints/launch/trainjob.py", ("tests/test_launch_trainjob.py", "tests/test_kubernetes_workloads.py")),
    ("blueprints/launch/queue", ("tests/test_queue_cli.py",)),
    ("blueprints/cli/queue.py", ("tests/test_queue_cli.py",)),
    ("blueprints/architectures/kubernetes_pool/queues.py", ("tests/test_queue_profile.py",)),
    (
        "blueprints/architectures/kubernetes_pool/kueue.py",
        ("tests/test_kueue_objects.py", "tests/test_queue_profile.py"),
    ),
    ("blueprints/review/diff/quota.py", ("tests/test_plandiff_quota.py",)),
    (
        "blueprints/components/job_queue.py",
        ("tests/test_kubernetes_workloads.py", "tests/test_kubernetes_queue.py"),
    ),
    ("blueprints/components/vendored.py", ("tests/test_kubernetes_workloads.py", "tests/test_kubernetes_queue.py")),
    (
        "blueprints/review/guardrails/kubernetes.py",
        ("tests/test_guardrails_kubernetes.py", "tests/test_cli_guardrails.py"),
    ),
    ("blueprints/review/guardrails/metrics.py", ("tests/test_metrics.py", "tests/test_guardrails.py")),
    ("blueprints/review/guardrails/capacity.py", ("tests/test_capacity_cluster.py", "tests/test_guardrails.py")),
    (
        "blueprints/review/guardrails/",
        (
            "tests/test_guardrails_kubernetes.py",
            "tests/test_guardrails.py",
            "tests/test_guardrails_nodes.py",
            "tests/test_guardrails_data.py",
            "tests/test_egress_guardrails.py",
            "tests/test_share_access.py",
            "tests/test_backups_and_trail.py",
            "tests/test_cli_guardrails.py",
            "tests/test_testing_kit.py",
            "tests/test_program.py",
        ),
    ),
    ("blueprints/review/diff/guardrails.py", ("tests/test_plandiff_guardrails.py",)),
    (
        "blueprints/export/",
        (
            "tests/test_export_terraform.py",
            "tests/test_export_kubernetes.py",
            "tests/test_scan_compare.py",
            "tests/test_kinds_reservation.py",
        ),
    ),
    (
        "blueprints/policy/",
        ("tests/test_policy_pack.py", "tests/test_policy_config.py", "tests/test_policy_analyzer.py"),
    ),
    ("blueprints/core/layout.py", ("tests/test_layout.py", "tests/test_properties.py")),
    ("blueprints/profile/guardrails.py", ("tests/test_cli_guardrails.py",)),
    (
        "blueprints/profile/security.py",
        ("tests/test_profile.py", "tests/test_ready_security.py", "tests/test_components.py"),
    ),
    ("blueprints/review/diff/reimage.py", ("tests/test_diff_reimage.py", "tests/test_image_pin.py")),
    ("blueprints/review/diff/reboot.py", ("tests/test_diff_reboot.py",)),
    ("blueprints/profile/image.py", ("tests/test_image_pin.py", "tests/test_boot_path.py")),
    ("blueprints/components/bake.py", ("tests/test_boot_path.py",)),
    ("blueprints/bootstrap/bake.py", ("tests/test_boot_path.py",)),
    ("blueprints/cli/image.py", ("tests/test_image_pin.py",)),
    (
        "blueprints/review/diff/replacement.py",
        ("tests/test_replacement.py", "tests/test_replacement_kubernetes.py", "tests/test_plandiff.py"),
    ),
    (
        "blueprints/review/diff/",
        (
            "tests/test_plandiff.py",
            "tests/test_replace_node.py",
            "tests/test_backups_and_trail.py",
            "tests/test_review_inputs.py",
            "tests/test_render_diff.py",
        ),
    ),
    ("blueprints/review/costing_capacity.py", ("tests/test_capacity_cluster.py",)),
    (
        "blueprints/review/costing",
        (
            "tests/test_costing.py",
            "tests/test_costing_kubernetes.py",
            "tests/test_costing_audit.py",
            "tests/test_money.py",
            "tests/test_kinds_reservation.py",
        ),
    ),
    ("blueprints/review/render/diff.py", ("tests/test_render_diff.py", "tests/test_plandiff.py")),
    (
        "blueprints/review/render/",
        ("tests/test_render_fit.py", "tests/test_render_structure.py", "tests/test_render.py", "tests/test_diagram.py"),
    ),
    ("blueprints/ci/goldenplans.py", ("tests/test_goldenplans.py", "tests/test_ci_comment.py")),
    ("blueprints/ci/", ("tests/test_ci_comment.py", "tests/test_ci_workflow.py")),
    ("blueprints/core/objectstore.py", ("tests/test_objectstore.py", "tests/test_ready_plan.py")),
    ("blueprints/components/kubernetes_cluster.py", ("tests/test_kubernetes_cluster.py", "tests/test_repair.py")),
    (
        "blueprints/components/compute.py",
        (
            "tests/test_replace_node.py",
            "tests/test_plan_graph.py",
            "tests/test_components.py",
            "tests/test_golden.py",
            "tests/test_erdma_fabric.py",
            "tests/test_capacity_cluster.py",
        ),
    ),
    (
        "blueprints/components/pool.py",
        (
            "tests/test_repair.py",
            "tests/test_plan_graph.py",
            "tests/test_components.py",
            "tests/test_golden.py",
            "tests/test_erdma_fabric.py",
        ),
    ),
    (
        "blueprints/components/kubernetes_workloads.py",
        ("tests/test_kubernetes_workloads.py", "tests/test_launch_kubernetes.py"),
    ),
    (
        "blueprints/architectures/kubernetes_pool/profile.py",
        ("tests/test_kubernetes_profile.py", "tests/test_kubernetes_workloads.py", "tests/test_registry.py"),
    ),
    (
        "blueprints/architectures/kubernetes_pool/",
        (
            "tests/test_kubernetes_profile.py",
            "tests/test_kubernetes_cluster.py",
            "tests/test_kubernetes_workloads.py",
            "tests/test_registry.py",
            "tests/advisor/test_parallel_jobs.py",
        ),
    ),
    (
        "blueprints/catalog/kubernetes.py",
        ("tests/catalog/test_kubernetes_catalog.py", "tests/test_kubernetes_profile.py"),
    ),
    ("blueprints/components/preprocess.py", ("tests/test_preprocess_group.py",)),
    ("blueprints/components/reservation.py", ("tests/test_capacity_cluster.py",)),
    (
        "blueprints/profile/capacity.py",
        ("tests/test_capacity_profile.py", "tests/test_capacity_cluster.py", "tests/preflight/test_choose.py"),
    ),
    (
        "blueprints/components/",
        (
            "tests/test_plan_graph.py",
            "tests/test_guardrails.py",
            "tests/test_components.py",
            "tests/test_bucket.py",
            "tests/test_access.py",
            "tests/test_share_access.py",
            "tests/test_backups_and_trail.py",
            "tests/test_ready_plan.py",
            "tests/test_ready_security.py",
            "tests/test_golden.py",
        ),
    ),
    ("blueprints/catalog/pricing.py", ("tests/test_costing.py", "tests/advisor/test_yearly.py", "tests/catalog")),
    ("blueprints/catalog/metrics.py", ("tests/test_metrics.py", "tests/catalog")),
    ("blueprints/bootstrap/monitoring.py", ("tests/test_metrics.py", "tests/test_bootstrap.py")),
    ("blueprints/bootstrap/fabric.py", ("tests/test_erdma_fabric.py", "tests/test_bootstrap.py")),
    ("blueprints/catalog/", ("tests/catalog",)),
    ("blueprints/advisor/", ("tests/advisor",)),
    ("blueprints/preflight/zones", ("tests/zones",)),
    ("blueprints/preflight/", ("tests/preflight", "tests/zones")),
    ("blueprints/core/files.py", ("tests/test_stackfile.py", "tests/zones")),
    ("blueprints/cli/zones.py", ("tests/zones",)),
    ("blueprints/cli/preflight.py", ("tests/preflight",)),
    (
        "blueprints/health/",
        ("tests/test_health_verdict.py", "tests/test_health_script.py", "tests/test_health_cli.py"),
    ),
    ("blueprints/cli/check.py", ("tests/test_health_cli.py",)),
    (
        "blueprints/kinds/",
        (
            "tests/test_kinds.py",
            "tests/test_kinds_consumers.py",
            "tests/test_kinds_reservation.py",
            "tests/test_costing.py",
            "tests/test_costing_kubernetes.py",
            "tests/test_guardrails.py",
            "tests/test_guardrails_data.py",
            "tests/test_guardrails_nodes.py",
            "tests/test_plandiff.py",
            "tests/test_backups_and_trail.py",
            "tests/test_diagram.py",
            "tests/preflight",
            "tests/test_export_terraform.py",
        ),
    ),
    ("", ("tests",)),
)


def default_targets() -> list[str]:
    """guardrails, every component module, objectstore, plandiff
    and the catalog loader (split out or still in the package)."""
    loader = (
        "blueprints/catalog/loader.py"
        if (ROOT / "blueprints/catalog/loader.py").exists()
        else "blueprints/catalog/__init__.py"
    )
    components = sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "blueprints/components").glob("*.py") if p.name != "__init__.py"
    )
    rules = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "blueprints/review/guardrails").glob("*.py"))
    return [
        *rules,
        "blueprints/profile/guardrails.py",
        "blueprints/review/diff/guardrails.py",
        *components,
        "blueprints/core/objectstore.py",
        "blueprints/review/diff/compare.py",
        "blueprints/review/diff/costs.py",
        "blueprints/review/diff/replacement.py",
        "blueprints/review/diff/reimage.py",
        "blueprints/review/costing.py",
        loader,
        "blueprints/catalog/software.py",
    ]


@dataclass(frozen=True)
class Mutant:
    """One mutated copy of one file: where, what was removed, and why it must be killed (empty: it need not)."""

    path: str
    line: int
    kind: str  # statement | keyword | rule
    what: str
    source: str  # the whole mutated file
    must_kill: str = ""


@dataclass(frozen=True)
class Result:
    """The outcome of one mutant."""

    mutant: Mutant
    killed: bool
    seconds: float
    timed_out: bool = False


# ---------------------------------------------------------------- which mutants are safety-critical


def _rule_functions(tree: ast.Module) -> set[str]:
    """Names of the check functions listed in ``RULES = (Rule(id, level, title, check), ...)``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Rule":
            names |= {a.id for a in node.args if isinstance(a, ast.Name)}
    return names


# The functions that decide what `pulumi up` would do to a
# resource (create … refused): a wrong answer hides a replacement.
_DIFF_CLASSIFIERS = {"_own_changes", "_propagate", "_update_or_replace", "_deletion", "fails_on", "diff_plans"}


def _must_kill_statement(path: str, stmt: ast.stmt, functions: list[str], tree: ast.Module) -> str:
    """Why deleting ``stmt`` must be caught, or '' (``functions``: the enclosing function names, outermost first)."""
    text = ast.unparse(stmt)
    inside = set(functions)
    if "/guardrails/" in path:
        if inside & (
            _rule_functions(tree) | {"check", "_skipped_ids", "with_findings", "at_or_above"}
        ) or text.startswith("RULES"):
            return "guardrail rule"
    elif path.endswith(("profile_guardrails.py", "plandiff_guardrails.py")):
        if (
            isinstance(stmt, ast.Raise)
            or (isinstance(stmt, ast.If) and any(isinstance(s, ast.Raise) for s in stmt.body))
            or "skip" in text
        ):
            return "guardrail skip shown or checked"
    elif "/components/" in path:
        if isinstance(stmt, ast.Expr) and "register_outputs(" in text:
            return "register_outputs"
        if "stateful" in inside:
            return "protect/retain_on_delete"
        if isinstance(stmt, ast.Expr) and text.startswith(
            ("alicloud.oss.", "attach_bucket_policy(", "network.admit_ssh_from(")
        ):
            return "bucket or access safety resource"
    elif path.endswith("objectstore.py"):
        if isinstance(stmt, ast.Raise) or (
            isinstance(stmt, ast.If) and any(isinstance(s, ast.Raise) for s in stmt.body)
        ):
            return "bucket-name or policy check"
    elif path.endswith("plandiff.py"):
        if "risk" in text or any("risk" in f for f in inside):
            return "diff risk"
        # An assert there only narrows a type for mypy: deleting it changes nothing at run time.
        if inside & _DIFF_CLASSIFIERS and not isinstance(stmt, ast.Assert):
            return "diff classification"
    elif path.endswith("costing.py"):
        if inside & {"_totals", "_unknown_items"}:
            return "unknown price counted or hidden"
    elif path.endswith("replacement.py"):
        if isinstance(stmt, ast.Raise) or (
            isinstance(stmt, ast.If) and any(isinstance(s, ast.Raise) for s in stmt.body)
        ):
            return "replacement table check"
    elif "/catalog/" in path:
        checker = any(f == "_load" or f.startswith(("_check", "_unique", "_cross")) for f in inside)
        raises = isinstance(stmt, ast.Raise) or (
            isinstance(stmt, ast.If) and any(isinstance(s, ast.Raise) for s in stmt.body)
        )
        calls_check = (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and ast.unparse(stmt.value.func).startswith(("_check", "_unique"))
        )
        if checker and (raises or calls_check):
            return "loader cross-check"
    return ""


# ---------------------------------------------------------------- generating mutants


def _is_docstring(body: list[ast.stmt], index: int, owner: ast.AST) -> bool:
    stmt = body[index]
    return (
        index == 0
        and isinstance(owner, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _skip(stmt: ast.stmt) -> bool:
    # Equivalent mutants no test can kill are skipped: imports (deleting one either fails at import, a trivial
    # kill, or removes a name used only in postponed annotations), bare strings (attribute docstrings),
    # ``__all__`` and type aliases used only in annotations.
    if isinstance(stmt, (ast.Pass, ast.Import, ast.ImportFrom)):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
        return True
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        name, value = stmt.targets[0].id, stmt.value
        return name == "__all__" or (
            isinstance(value, ast.Subscript) and ast.unparse(value.value) in ("dict", "list", "tuple", "Callable")
        )
    return False


def mutants_of(path: str) -> list[Mutant]:
    """Every mutant of one file, in source order."""
    text = (ROOT / path).read_text(encoding="utf-8")
    tree = ast.parse(text)
    lines = text.splitlines()
    found: list[Mutant] = []

    def first_line(node: ast.AST) -> str:
        return lines[node.lineno - 1].strip()

    # Unsplit catalog package: only the loader (module-level code and functions), not the query classes.
    skip_classes = path.endswith("catalog/__init__.py")

    def visit(owner: ast.AST, functions: list[str]) -> None:
        if skip_classes and isinstance(owner, ast.ClassDef):
            return
        inner = functions + [owner.name] if isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)) else functions
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            body = getattr(owner, field, None)
            if not isinstance(body, list):
                continue
            for index, stmt in enumerate(list(body)):
                if not isinstance(stmt, ast.stmt):
                    visit(stmt, inner)  # except handlers and match cases hold statements
                    continue
                if not (
                    _is_docstring(body, index, owner)
                    or _skip(stmt)
                    or (skip_classes and isinstance(stmt, ast.ClassDef))
                ):
                    body[index] = ast.copy_location(ast.Pass(), stmt)
                    found.append(
                        Mutant(
                            path,
                            stmt.lineno,
                            "statement",
                            first_line(stmt),
                            ast.unparse(tree),
                            _must_kill_statement(path, stmt, inner, tree),
                        )
                    )
                    body[index] = stmt
                visit(stmt, inner)

    visit(tree, [])
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for i, kw in enumerate(list(node.keywords)):
                stateful_opts = (
                    kw.arg == "opts" and isinstance(kw.value, ast.Call) and ast.unparse(kw.value.func) == "stateful"
                )
                if kw.arg in SAFETY_KEYWORDS or stateful_opts:
                    reason = (
                        "protect/retain_on_delete"
                        if stateful_opts
                        else (
                            "depends_on" if kw.arg == "depends_on" else kw.arg if kw.arg in MUST_KILL_KEYWORDS else ""
                        )
                    )
                    del node.keywords[i]
                    found.append(
                        Mutant(path, kw.value.lineno, "keyword", f"drop {ast.unparse(kw)}", ast.unparse(tree), reason)
                    )
                    node.keywords.insert(i, kw)
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "RULES" for t in node.targets)
            or (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "RULES")
        ):
            elements = node.value.elts if isinstance(node.value, ast.Tuple) else []
            for i, element in enumerate(list(elements)):
                del elements[i]
                found.append(
                    Mutant(
                        path, element.lineno, "rule", f"drop {first_line(element)}", ast.unparse(tree), "guardrail rule"
                    )
                )
                elements.insert(i, element)
    return sorted(found, key=lambda m: (m.line, m.kind))


def tests_for(path: str) -> tuple[str, ...]:
    """The focused pytest subset for a target file (only the test files that exist: a missing path would fail
    pytest and count every mutant as killed)."""
    tests = next(tests for prefix, tests in TESTS if path.startswith(prefix))
    return tuple(t for t in tests if (ROOT / t).exists())


# ---------------------------------------------------------------- running


PYTEST_ARGS = ("-x", "-q", "-p", "no:cacheprovider")
# Third-party modules every focused subset imports; a worker imports them once and forks per mutant.
PRELOAD = (
    "pytest",
    "pulumi",
    "pulumi.runtime",
    "pulumi_alicloud",
    "pulumi_alicloud.ecs",
    "pulumi_alicloud.vpc",
    "pulumi_alicloud.nas",
    "pulumi_alicloud.ess",
    "pulumi_alicloud.ram",
    "pydantic",
    "typer",
    "typer.testing",
    "jinja2",
    "yaml",
    "rich",
    "hypothesis",
)


def zygote() -> None:
    """Worker loop (``--zygote``, cwd = a repository copy): preload, then fork one pytest run per request line."""
    import importlib
    import select

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    workdir = os.getcwd()
    print("ready", flush=True)
    for line in sys.stdin:
        timeout, *tests = line.split()
        pid = os.fork()
        if pid == 0:  # child: this copy's package first on the path, quiet, exit with pytest's status
            sys.path.insert(0, workdir)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            code = 1
            try:
                import pytest

                code = int(pytest.main([*PYTEST_ARGS, *tests]))
            finally:
                os._exit(code)
        deadline = time.monotonic() + float(timeout)
        status = None
        while status is None:
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                status = "pass" if os.waitstatus_to_exitcode(raw) == 0 else "fail"
            elif time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                status = "timeout"
            else:
                select.select([], [], [], 0.02)
        print(status, flush=True)


class Worker:
    """One repository copy and its zygote process."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
        self.process = subprocess.Popen(
            [sys.executable, str(workdir / "bench" / "mutate.py"), "--zygote"],
            cwd=workdir,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        if self.process.stdout.readline().strip() != "ready":
            raise SystemExit(f"mutation worker in {workdir} did not start")

    def pytest(self, tests: tuple[str, ...], timeout: float) -> tuple[bool, bool]:
        """(passed, timed_out) for the subset run in this worker's copy."""
        self.process.stdin.write(f"{timeout} {' '.join(tests)}\n")
        self.process.stdin.flush()
        status = self.process.stdout.readline().strip()
        return status == "pass", status == "timeout"

    def close(self) -> None:
        """Stop the zygote (closing its input ends its loop)."""
        self.process.stdin.close()
        self.process.wait(timeout=30)


class Workers:
    """A fixed set of private repository copies; each mutant borrows one, writes its file, restores it."""

    def __init__(self, count: int, base: Path):
        dirs = [_copy_repo(base / f"worker-{i}") for i in range(count)]
        self._check_imports(dirs[0])
        self.free = [Worker(d) for d in dirs]
        self.all = list(self.free)
        self.lock = threading.Lock()

    @staticmethod
    def _check_imports(workdir: Path) -> None:
        # The mutants are worthless if the tests import the working tree's package instead of the copy's.
        code = "import sys; sys.path.insert(0, '.'); import blueprints; print(blueprints.__file__)"
        out = subprocess.run([sys.executable, "-c", code], cwd=workdir, capture_output=True, text=True, check=True)
        if not Path(out.stdout.strip()).resolve().is_relative_to(workdir.resolve()):
            raise SystemExit(f"tests in {workdir} import blueprints from {out.stdout.strip()}; cannot mutate safely")

    def run(self, mutant: Mutant, timeout: float) -> Result:
        """Write the mutant into a free copy, run its focused tests, restore the file whatever happens."""
        with self.lock:
            worker = self.free.pop()
        target = worker.workdir / mutant.path
        original = target.read_text(encoding="utf-8")
        start = time.monotonic()
        try:
            target.write_text(mutant.source, encoding="utf-8")
            passed, timed_out = worker.pytest(tests_for(mutant.path), timeout)
        finally:
            target.write_text(original, encoding="utf-8")
            with self.lock:
                self.free.append(worker)
        return Result(mutant, killed=not passed, seconds=time.monotonic() - start, timed_out=timed_out)

    def baseline(self, paths: list[str], timeout: float) -> None:
        """Every focused subset must pass unmutated, or every mutant would look killed."""
        for tests in sorted({tests_for(p) for p in paths}):
            passed, _ = self.free[0].pytest(tests, timeout)
            if not passed:
                raise SystemExit(f"baseline failed: {' '.join(tests)} is red without any mutation; fix it first")

    def close(self) -> None:
        """Stop every zygote."""
        for worker in self.all:
            worker.close()


def _copy_repo(destination: Path) -> Path:
    ignore = shutil.ignore_patterns(
        ".git", ".venv", "__pycache__", ".pytest_cache", "*.egg-info", "build", ".hypothesis"
    )
    shutil.copytree(ROOT, destination, ignore=ignore)
    return destination


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Run the mutants; print survivors and figures; exit 1 when a must-kill mutant survives."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "targets",
        nargs="*",
        help="files relative to the repository root (default: %(default)s)",
        default=default_targets(),
    )
    parser.add_argument("--must-kill-only", action="store_true", help="run only the safety-critical mutants")
    parser.add_argument("--jobs", type=int, default=2, help="parallel workers (repository copies)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per mutant; a timeout counts as killed")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--zygote", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.zygote:
        zygote()
        return 0
    # SIGTERM ends the run like Ctrl-C, so the repository copies are removed.
    signal.signal(signal.SIGTERM, _interrupt)

    targets = [t for t in args.targets if (ROOT / t).exists()]
    for missing in sorted(set(args.targets) - set(targets)):
        print(f"skipping {missing}: not in this checkout", file=sys.stderr)
    mutants = [m for t in targets for m in mutants_of(t) if m.must_kill or not args.must_kill_only]
    if args.list:
        for m in mutants:
            print(f"{m.path}:{m.line}: [{m.kind}{', must-kill: ' + m.must_kill if m.must_kill else ''}] {m.what}")
        print(f"{len(mutants)} mutants, {sum(1 for m in mutants if m.must_kill)} must-kill")
        return 0

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="aitrain-mutate-") as tmp:
        workers = Workers(max(1, args.jobs), Path(tmp))
        results: list[Result] = []
        try:
            workers.baseline(targets, args.timeout)
            print(f"{len(mutants)} mutants over {len(targets)} files, {args.jobs} workers", flush=True)
            with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                for n, result in enumerate(pool.map(lambda m: workers.run(m, args.timeout), mutants), 1):
                    results.append(result)
                    if not result.killed:
                        flag = " [MUST-KILL: " + result.mutant.must_kill + "]" if result.mutant.must_kill else ""
                        print(
                            f"survived {result.mutant.path}:{result.mutant.line}: {result.mutant.what}{flag}",
                            flush=True,
                        )
                    if n % 50 == 0:
                        print(f"  … {n}/{len(mutants)} ({time.monotonic() - start:.0f} s)", flush=True)
        finally:
            workers.close()
    return report(results, time.monotonic() - start)


def report(results: list[Result], seconds: float) -> int:
    """Per-file and total figures; 1 when a must-kill mutant survived."""
    print("\nfile                                   mutants  killed  survived  must-kill survived")
    for path in sorted({r.mutant.path for r in results}):
        rs = [r for r in results if r.mutant.path == path]
        survived = [r for r in rs if not r.killed]
        print(
            f"{path:38} {len(rs):7} {len(rs) - len(survived):7} {len(survived):9} "
            f"{sum(1 for r in survived if r.mutant.must_kill):19}"
        )
    total = len(results)
    killed = sum(1 for r in results if r.killed)
    must = [r for r in results if r.mutant.must_kill]
    must_survived = [r for r in must if not r.killed]
    ratio = f"{killed / total:.1%}" if total else "n/a"
    print(
        f"\ntotal {total}, killed {killed} ({ratio}; "
        f"{sum(1 for r in results if r.timed_out)} by timeout), survived {total - killed}"
    )
    print(f"must-kill {len(must)}, killed {len(must) - len(must_survived)}, survived {len(must_survived)}")
    print(f"wall time {seconds:.0f} s")
    for r in must_survived:
        print(f"MUST-KILL SURVIVOR {r.mutant.path}:{r.mutant.line}: {r.mutant.what} ({r.mutant.must_kill})")
    return 1 if must_survived else 0


if __name__ == "__main__":
    sys.exit(main())
