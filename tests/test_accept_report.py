"""The report says what to accept (issue 35): a checkbox per pending composition
and a button that saves accept.json, clicked in headless Chromium driven over the
DevTools protocol (``--remote-debugging-pipe``: no port, no extra package); the
downloaded file is then applied with ``nanoframes accept --list``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from scratch_project import nf, write_film
from test_hints import recorded_cli_project


def _onto_3_and_4(to_child: int, from_child: int) -> None:
    """(in the child, before exec) the pipe ends as fds 3 and 4, which Chromium reads
    and writes; by way of fresh copies, so neither clobbers the other."""
    a, b = os.dup(to_child), os.dup(from_child)
    os.dup2(a, 3)
    os.dup2(b, 4)


class Browser:
    """Headless Chromium over its DevTools pipe (fd 3 in, fd 4 out, NUL-framed JSON)."""

    def __init__(self, profile: Path) -> None:
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if exe is None:
            pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
        to_child, self._write = os.pipe()
        self._read, from_child = os.pipe()
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=lambda: _onto_3_and_4(to_child, from_child))
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._id = 0

    def call(self, method: str, session: str | None = None, **params: object) -> dict:
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._id:
                    assert "error" not in reply, reply
                    return reply.get("result", {})
            chunk = os.read(self._read, 1 << 16)
            if not chunk:
                raise AssertionError("chromium closed its DevTools pipe")
            self._buffer += chunk
        raise AssertionError(f"no reply to {method}")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)
        os.close(self._write)
        os.close(self._read)


def evaluate(browser: Browser, session: str, expression: str) -> object:
    result = browser.call("Runtime.evaluate", session, expression=expression,
                          returnByValue=True)
    return result["result"].get("value")


def click(browser: Browser, session: str, selector: str) -> None:
    """A real mouse click at the middle of the element (not a script's .click())."""
    box = evaluate(browser, session, f"(function(){{var e=document.querySelector("
                   f"{json.dumps(selector)});e.scrollIntoView({{block:'center'}});"
                   f"var r=e.getBoundingClientRect();"
                   f"return [r.left+r.width/2,r.top+r.height/2];}})()")
    assert box, selector
    for kind in ("mousePressed", "mouseReleased"):
        browser.call("Input.dispatchMouseEvent", session, type=kind, x=box[0], y=box[1],
                     button="left", buttons=1 if kind == "mousePressed" else 0,
                     clickCount=1)


def test_tick_save_and_accept_the_list(tmp_path: Path) -> None:
    root = recorded_cli_project(tmp_path)
    write_film(root, "a", "#00cc00")
    write_film(root, "b", "#00cccc")
    assert nf(root, "digest", "--check", "--html", "report.html").returncode == 1
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser = Browser(tmp_path / "profile")
    try:
        browser.call("Browser.setDownloadBehavior", behavior="allow",
                     downloadPath=str(downloads))
        target = browser.call("Target.createTarget", url=(root / "report.html").as_uri())
        session = browser.call("Target.attachToTarget", targetId=target["targetId"],
                               flatten=True)["sessionId"]
        for _ in range(200):
            if evaluate(browser, session, "location.href.endsWith('report.html') && "
                        "document.readyState") == "complete":
                break
            time.sleep(0.05)
        boxes = evaluate(browser, session, "Array.from(document.querySelectorAll("
                         "'input.nf-accept')).map(function(c){return c.value})")
        assert boxes == ["films/a.nf.svg", "films/b.nf.svg"]  # one per pending composition
        tick = 'input.nf-accept[value="films/b.nf.svg"]'
        click(browser, session, tick)
        for _ in range(100):
            if evaluate(browser, session, f"document.querySelector({json.dumps(tick)}).checked"):
                break
            time.sleep(0.05)
        click(browser, session, "#nf-save-accept")
        saved = downloads / "accept.json"
        for _ in range(200):
            if saved.is_file() and saved.stat().st_size:
                break
            time.sleep(0.05)
        shown = evaluate(browser, session, "document.body.dataset.accept")
    finally:
        browser.close()
    assert json.loads(saved.read_text()) == {"accept": ["films/b.nf.svg"]}
    assert json.loads(shown) == {"accept": ["films/b.nf.svg"]}
    done = nf(root, "accept", "--list", str(saved))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "accepted films/b.nf.svg" in done.stdout and "films/a.nf.svg" not in done.stdout
    done = nf(root, "digest", "--check")
    assert "MATCH films/b.nf.svg" in done.stdout and "CHANGED films/a.nf.svg" in done.stdout


def test_a_page_with_nothing_pending_has_no_button(tmp_path: Path) -> None:
    root = recorded_cli_project(tmp_path)
    assert nf(root, "digest", "--check", "--html", "report.html").returncode == 0
    page = (root / "report.html").read_text()
    assert "nf-save-accept" not in page and 'class="nf-accept"' not in page


def test_a_bad_list_is_one_line(tmp_path: Path) -> None:
    root = recorded_cli_project(tmp_path)
    write_film(root, "a", "#00cc00")
    nf(root, "digest", "--check")
    (root / "accept.json").write_text('{"accept": "films/a.nf.svg"}')
    done = nf(root, "accept", "--list", "accept.json")
    assert done.returncode == 2 and "error[accept-list-invalid]" in done.stderr
    assert "Traceback" not in done.stderr
