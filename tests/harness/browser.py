"""A real browser for the pages' tests: Debian's `chromium`, headless, one process per page.

Installed with apt-get when missing (root only; no browser download at test time): elsewhere
the tests that need it skip with one line (fail under CI=true). `--dump-dom` prints the DOM
once the page has loaded, after any script that could run has run: a title a script changed
or an element it added shows there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote

from tests.harness.tiers import skip_or_fail

TIER = "browser"
FLAGS = (
    "--headless",
    "--no-sandbox",  # root in a container: no user namespace for the sandbox
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)
TIMEOUT = 60.0


def chromium() -> str:
    """The chromium executable, installed from Debian's packages when missing and root."""
    found = shutil.which("chromium")
    if found:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        skip_or_fail(TIER, "chromium is missing (as root with apt-get, the tests install it)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"]
    if subprocess.run(install, env=env, capture_output=True, check=False).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, check=False)
        done = subprocess.run(install, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            skip_or_fail(TIER, f"apt-get install chromium failed: {done.stderr.strip()[-300:]}")
    return shutil.which("chromium") or "chromium"


class Browser:
    def __init__(self, executable: str, profile: Path) -> None:
        self.executable, self.profile = executable, profile

    def _run(self, *args: str) -> str:
        done = subprocess.run(
            [self.executable, *FLAGS, f"--user-data-dir={self.profile}", *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    def dom(self, url: str) -> str:
        """The page's DOM as serialized after it loaded (scripts, had any run, included)."""
        return self._run("--dump-dom", url)

    def screenshot(self, url: str, path: Path, width: int = 1200, height: int = 900) -> Path:
        self._run(f"--window-size={width},{height}", f"--screenshot={path}", url)
        assert path.stat().st_size > 0
        return path


def links(html: str, base: str) -> list[str]:
    """The path of each href in html, resolved against the page's path `base` as a browser
    does (RFC 3986 5.2: an empty segment stays, so `a//b` is not `a/b`; urllib's urljoin drops
    it and would hide such a link)."""
    found = []
    for href in re.findall(r'href="([^"]*)"', html):
        target = unquote(href.replace("&amp;", "&")).split("?")[0]
        if target.startswith("/"):
            found.append(target)
            continue
        segments: list[str] = []
        for segment in [*base.split("/")[:-1], *target.split("/")]:
            if segment == "..":
                if len(segments) > 1:
                    segments.pop()
            elif segment != ".":
                segments.append(segment)
        found.append("/".join(segments) if len(segments) > 1 else "/")
    return found
