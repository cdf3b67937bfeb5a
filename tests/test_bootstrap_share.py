"""The share under root_squash: the job user every node creates, and that every write to /mnt/shared is made as it.

The node script runs for real, with fakes for what only a node has (setpriv, mountpoint, curl, groupadd, useradd):
the fake setpriv records who each command runs as before running it, so a write to the share that root makes
(nobody there, under root_squash) shows up as a write outside setpriv.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml

from blueprints import bootstrap as b
from tests.test_bootstrap import files, spec

FAKES = {
    # Records its options, then runs the command after them: the job user's view is the recorded --reuid. With DENY
    # set, the share refuses the job user's mkdir (a share root that only root may write, root being squashed).
    "setpriv": (
        '#!/bin/sh\nopts=; while [ "${1#--}" != "$1" ]; do opts="$opts '
        '$1"; shift; done\necho "setpriv$opts: $*" >>"$LOG"\n'
        '[ -n "${DENY:-}" ] && [ "$1" = mkdir ] && { echo "mkdir: Permission denied" >&2; exit 1; }\nexec "$@"\n'
    ),
    "mountpoint": "#!/bin/sh\nexit 0\n",
    "curl": (
        "#!/bin/sh\nfor a; do last=$a; done\ncase $last in */instance-id) echo i-uf6node0001 ;; */private-ipv4) echo "
        "10.20.0.11 ;; *) echo token ;; esac\n"
    ),
    "getent": "#!/bin/sh\nexit 2\n",
    "id": '#!/bin/sh\n[ -f "$STATE/user" ] || exit 1\necho 2000\n',
    "groupadd": '#!/bin/sh\necho "groupadd $*" >>"$LOG"\n',
    "useradd": '#!/bin/sh\necho "useradd $*" >>"$LOG"\ntouch "$STATE/user"\n',
}


class NodeScript:
    """The rendered aitrain-node with the share and /run moved under tmp, and the fakes first on PATH."""

    def __init__(self, tmp: Path) -> None:
        self.share = tmp / "shared"
        self.share.mkdir()
        self.run_dir = tmp / "run"
        self.run_dir.mkdir()
        text = files(yaml.safe_load(b.render_user_data(spec())))[b.NODE_SCRIPT_PATH]
        text = text.replace(b.SHARED_MOUNT, str(self.share)).replace(
            "/run/aitrain-instance-id", str(self.run_dir / "aitrain-instance-id")
        )
        self.script = tmp / "aitrain-node"
        self.script.write_text(text)
        self.script.chmod(0o755)
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        for name, body in FAKES.items():
            (bin_dir / name).write_text(body)
            (bin_dir / name).chmod(0o755)
        self.log = tmp / "log"
        self.env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "LOG": str(self.log), "STATE": str(tmp)}

    def __call__(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.script), *args], env={**self.env, **env}, capture_output=True, text=True, timeout=30
        )

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


def test_the_job_user_has_the_same_fixed_uid_and_gid_on_every_node_and_is_made_first(tmp_path):
    node = NodeScript(tmp_path)
    run = node("user")
    assert run.returncode == 0, run.stderr
    assert node.calls() == [
        "groupadd -g 2000 aitrain",
        "useradd -u 2000 -g 2000 -m -d /home/aitrain -s /usr/sbin/nologin aitrain",
    ]
    runcmd = yaml.safe_load(b.render_user_data(spec()))["runcmd"]
    # Made before anything mounts the share or starts the units that write to it.
    assert runcmd[0] == f"{b.NODE_SCRIPT_PATH} user"
    assert (b.JOB_USER, b.JOB_UID, b.JOB_HOME) == ("aitrain", 2000, "/home/aitrain")


def test_registration_creates_the_share_directories_and_writes_the_entry_as_the_job_user(tmp_path):
    node = NodeScript(tmp_path)
    run = node("register")
    assert run.returncode == 0, run.stderr
    hosts, runs = node.share / ".aitrain" / "hosts", node.share / ".aitrain" / "runs"
    assert hosts.is_dir() and runs.is_dir()
    assert (hosts / "i-uf6node0001").read_text() == "10.20.0.11\n"
    job = "setpriv --reuid=2000 --regid=2000 --init-groups"
    assert node.calls() == [
        f"{job}: mkdir -p {hosts} {runs}",
        f'{job}: sh -c cat >"$1/.$2" && mv "$1/.$2" "$1/$2" - {hosts} i-uf6node0001',
    ]
    run = node("deregister")
    assert run.returncode == 0, run.stderr
    assert not (hosts / "i-uf6node0001").exists()
    assert node.calls()[-1] == f"{job}: rm -f {hosts}/i-uf6node0001"


def test_a_share_root_the_job_user_may_not_write_stops_the_registration_with_what_to_do(tmp_path):
    node = NodeScript(tmp_path)
    run = node("register", DENY="1")
    assert run.returncode == 1
    assert (
        "aitrain-node: aitrain (uid 2000) cannot create" in run.stderr
        and "README 'The share under root_squash'" in run.stderr
    )
    assert not (node.share / ".aitrain").exists()


def test_no_line_of_the_node_script_writes_to_the_share_as_root():
    text = b.render_node_script(spec())
    writes = [
        line for line in text.splitlines() if "$REG" in line and any(op in line for op in ("mkdir", ">", "mv ", "rm "))
    ]
    assert writes and all("$J " in line for line in writes), writes
    assert 'J="setpriv --reuid=2000 --regid=2000 --init-groups"' in text


def test_scratch_belongs_to_the_job_user():
    text = b.render_node_script(spec())
    assert "mount /mnt/scratch; } && chown 2000:2000 /mnt/scratch ;;" in text
    assert "chown" not in b.render_node_script(spec(scratch_gib=0))
