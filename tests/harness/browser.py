"""A real browser for the pages' tests: Debian's `chromium`, headless, one process per page.

Installed with apt-get when missing (root only; no browser download at test time): elsewhere
the tests that need it skip with one line (fail under CI=true). `--dump-dom` prints the DOM
once the page has loaded, after any script that could run has run: a title a script changed
or an element it added shows there. `Browser.tab` drives one over the DevTools protocol on a
pipe (`--remote-debugging-pipe`: JSON messages ended by a NUL byte, the browser reading fd 3
and writing fd 4), to measure the laid-out page at a window's size: what a user's window shows.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import select
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
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

    @contextlib.contextmanager
    def tab(self, width: int = 1280, height: int = 900) -> Iterator[Tab]:
        """One page in a window of width x height CSS pixels, driven over DevTools."""
        # the shell hands the pipe's ends to chromium as fds 3 and 4
        wrapper = 'exec "$@" 3<&0 4>&1 </dev/null >/dev/null'
        args = [*FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}"]
        proc = subprocess.Popen(
            ["sh", "-c", wrapper, "sh", self.executable, *args, "--remote-debugging-pipe"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            yield Tab(DevTools(proc), width, height)
        finally:
            proc.kill()
            proc.communicate(timeout=TIMEOUT)  # reaped, its pipes closed


class DevTools:
    """Commands and their answers over the pipe; events kept until asked for."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.send, self.receive = proc.stdin, proc.stdout.fileno()
        self.buffer, self.last_id = b"", 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self.last_id += 1
        message: dict[str, Any] = {"id": self.last_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        self.send.write(json.dumps(message).encode() + b"\0")
        self.send.flush()
        answer = self.wait(lambda m: m.get("id") == self.last_id, method)
        assert "error" not in answer, (method, answer["error"])
        result: dict[str, Any] = answer.get("result", {})
        return result

    def event(self, method: str) -> dict[str, Any]:
        """The first event of that name not yet taken (waiting for it)."""
        for index, seen in enumerate(self.events):
            if seen.get("method") == method:
                return self.events.pop(index)
        found = self.wait(lambda m: m.get("method") == method, method)
        self.events.remove(found)
        return found

    def wait(self, wanted: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        while True:
            while b"\0" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\0", 1)
                message: dict[str, Any] = json.loads(raw)
                if "id" not in message:
                    self.events.append(message)
                if wanted(message):
                    return message
            left = deadline - time.monotonic()
            assert left > 0, f"no answer to {what} from chromium in {TIMEOUT}s"
            if select.select([self.receive], [], [], left)[0]:
                chunk = os.read(self.receive, 1 << 16)
                assert chunk, f"chromium closed the pipe waiting for {what}"
                self.buffer += chunk


class Tab:
    def __init__(self, tools: DevTools, width: int, height: int) -> None:
        self.tools, self.width, self.height = tools, width, height
        target = tools.call("Target.createTarget", url="about:blank")["targetId"]
        attached = tools.call("Target.attachToTarget", targetId=target, flatten=True)
        self.session: str = attached["sessionId"]
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.call("Page.enable")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        return self.tools.call(method, self.session, **params)

    def open(self, url: str) -> None:
        """Load url and wait for its load event."""
        navigated = self.call("Page.navigate", url=url)
        assert "errorText" not in navigated, (url, navigated)
        self.tools.event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of expression in the page (DevTools' own evaluation: the page's policy
        forbids scripts of its own)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in result, (expression, result["exceptionDetails"])
        return result["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        """The whole page's height at the window's width (what is past its right edge is not
        in the picture, as a user would not see it)."""
        height = self.evaluate("document.documentElement.scrollHeight")
        clip = {"x": 0, "y": 0, "width": self.width, "height": height, "scale": 1}
        shot = self.call(
            "Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True
        )
        path.write_bytes(base64.b64decode(shot["data"]))
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
