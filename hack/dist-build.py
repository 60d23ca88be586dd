#!/usr/bin/env python3
"""Build the single-file executable for this machine's os/arch and pack it for Krew.

    python3 hack/dist-build.py            # what `make dist` runs
    python3 hack/dist-build.py --fresh    # recreate the build venv first
    python3 hack/dist-build.py --print-archive   # the archive's path for this machine

Steps: a venv with exactly requirements-dist.txt (nothing else: not the dev tools, not the
project's own editable install), PyInstaller with kubectl-terminating.spec, then a
deterministic tar.gz plus its .sha256 in dist/. Standard library only, so the release
workflow runs the very same script on Linux, macOS and Windows runners.

Reproducible: PYTHONHASHSEED=0 (module order), SOURCE_DATE_EPOCH (Windows PE timestamp and
the archive's mtimes: the last commit's time), sorted archive members with uid/gid 0, and a
gzip header without name or time. Prints the archive's path on the last line.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "requirements-dist.txt"
SPEC = ROOT / "kubectl-terminating.spec"
COMPLETION_HELPER = ROOT / "krew" / "kubectl_complete-terminating"
BUILD = ROOT / "build"
VENV = BUILD / "dist-venv"
DIST = ROOT / "dist"
NAME = "kubectl-terminating"


def log(message: str) -> None:
    print(f"dist-build: {message}", file=sys.stderr, flush=True)


def run(*args: str | Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [str(a) for a in args], env=env, check=False, stdout=subprocess.PIPE, text=True
    )
    if result.returncode != 0:
        sys.exit(f"dist-build: {' '.join(map(str, args))} failed ({result.returncode})")
    return result.stdout


def version() -> str:
    """__version__ from the source, without importing the package."""
    text = (ROOT / "kubectl_terminating" / "__init__.py").read_text()
    match = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    if not match:
        sys.exit("dist-build: no __version__ in kubectl_terminating/__init__.py")
    return match.group(1)


def os_arch() -> tuple[str, str]:
    """Krew's names for the os and arch this interpreter (and so the build) targets."""
    system = {"linux": "linux", "darwin": "darwin", "windows": "windows"}[platform.system().lower()]
    # The interpreter's own arch, not the machine's: an x64 Python on Windows arm64 builds x64.
    machine = sysconfig.get_platform().rsplit("-", 1)[-1].lower()
    if machine in ("universal2", "intel"):
        machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    if arch is None:
        sys.exit(f"dist-build: unsupported architecture {machine!r}")
    return system, arch


def source_date_epoch() -> int:
    """SOURCE_DATE_EPOCH if set, else the last commit's time (same commit, same archive)."""
    if "SOURCE_DATE_EPOCH" in os.environ:
        return int(os.environ["SOURCE_DATE_EPOCH"])
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%ct"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        return int(out)
    except (OSError, subprocess.CalledProcessError, ValueError):
        return 0


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict[str, str]:
    """{name: version} from requirements-dist.txt (environment markers ignored)."""
    found = {}
    for raw in REQUIREMENTS.read_text().splitlines():
        line = raw.split("#", 1)[0].split(";", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            found[canonical(name)] = version.strip()
    return found


def ensure_venv(fresh: bool) -> Path:
    """A venv holding exactly the pins; rebuilt when the pins or the interpreter change."""
    key = hashlib.sha256(REQUIREMENTS.read_bytes() + sys.version.encode()).hexdigest()
    stamp = VENV / ".requirements-dist.sha256"
    python = venv_python()
    pip = [python, "-m", "pip", "--disable-pip-version-check", "--no-input", "--quiet"]
    if fresh or not stamp.is_file() or stamp.read_text() != key:
        log(f"creating a clean build venv in {VENV.relative_to(ROOT)}")
        shutil.rmtree(VENV, ignore_errors=True)
        venv.create(VENV, with_pip=True, clear=True)
        run(*pip, "install", "--no-cache-dir", "-r", REQUIREMENTS)
        stamp.write_text(key)
    # Checked on every build, the reused venv too: every installed distribution is pinned
    # (an unpinned one would drift silently) and nothing else was installed by hand.
    run(*pip, "check")
    wanted = pins()
    drift = []
    for line in run(*pip, "freeze", "--all").splitlines():
        name, _, version = line.partition("==")
        if canonical(name) != "pip" and wanted.get(canonical(name)) != version:
            drift.append(line)
    if drift:
        sys.exit(f"dist-build: {VENV.name} differs from requirements-dist.txt: {drift}")
    return python


def clean_env(epoch: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(PYTHONHASHSEED="0", SOURCE_DATE_EPOCH=str(epoch), PYTHONDONTWRITEBYTECODE="1")
    return env


def build_executable(python: Path, env: dict[str, str]) -> Path:
    work = BUILD / "pyinstaller"
    shutil.rmtree(work, ignore_errors=True)
    log("running PyInstaller (single file, no UPX)")
    run(
        python, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level=WARN",
        "--distpath", work / "dist", "--workpath", work / "work", SPEC,
        env=env,
    )  # fmt: skip
    exe = work / "dist" / (NAME + (".exe" if os.name == "nt" else ""))
    if not exe.is_file():
        sys.exit(f"dist-build: PyInstaller produced no {exe}")
    return exe


def check_executable(exe: Path, expected_version: str) -> None:
    """The binary must start and know its version before it is packed."""
    out = run(exe, "--version").strip()
    if out != f"kubectl terminating {expected_version}":
        sys.exit(f"dist-build: {exe.name} --version printed {out!r}")


def add(tar: tarfile.TarFile, name: str, data: bytes, mode: int, epoch: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), mode, epoch
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    tar.addfile(info, io.BytesIO(data))


def pack(exe: Path, archive: Path, epoch: int, windows: bool) -> None:
    """A flat tar.gz (krew's `files` copy from its top level), the same bytes every time."""
    members = {
        exe.name: (exe.read_bytes(), 0o755),
        "LICENSE": ((ROOT / "LICENSE").read_bytes(), 0o644),
    }
    if not windows:  # the helper is a shell script; kubectl on Windows does not run it
        members[COMPLETION_HELPER.name] = (COMPLETION_HELPER.read_bytes(), 0o755)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name in sorted(members):
            data, mode = members[name]
            add(tar, name, data, mode, epoch)
    with (
        open(archive, "wb") as out,
        gzip.GzipFile(filename="", fileobj=out, mode="wb", compresslevel=9, mtime=0) as gz,
    ):
        gz.write(raw.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fresh", action="store_true", help="recreate the build venv")
    parser.add_argument(
        "--print-archive", action="store_true", help="print the archive's path; build nothing"
    )
    args = parser.parse_args()

    ver, (os_name, arch) = version(), os_arch()
    archive = DIST / f"{NAME}_{ver}_{os_name}_{arch}.tar.gz"
    if args.print_archive:
        print(archive.relative_to(ROOT))
        return
    epoch = source_date_epoch()
    python = ensure_venv(args.fresh)
    exe = build_executable(python, clean_env(epoch))
    check_executable(exe, ver)

    DIST.mkdir(exist_ok=True)
    pack(exe, archive, epoch, windows=os_name == "windows")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    # sha256sum's format, with "\n" on Windows too (the release job checks it on Linux).
    Path(f"{archive}.sha256").write_text(f"{digest}  {archive.name}\n", newline="\n")
    log(f"{archive.relative_to(ROOT)}: {archive.stat().st_size / 1e6:.1f} MB, sha256 {digest}")
    print(archive)


if __name__ == "__main__":
    main()
