"""Render report.html in headless Chromium and check what a reader would see.

Chromium is driven through the DevTools protocol over ``--remote-debugging-pipe`` (JSON
messages separated by NUL bytes on file descriptors 3 and 4), so no websocket client or
browser-automation package is needed.  Skipped when no chromium binary is installed
(Debian: ``apt-get install chromium``).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import io
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def _chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


class PipeBrowser:
    """Minimal DevTools-protocol client over Chromium's debugging pipe."""

    def __init__(self, binary: str, profile: Path, timeout: float = 60.0):
        self.timeout = timeout
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        # Chromium reads commands on fd 3 and writes replies on fd 4.

        def preexec() -> None:  # runs in the child: move the pipe ends to fds 3 and 4
            a = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-dev-shm-usage",
            "--remote-debugging-pipe",
            f"--user-data-dir={profile}",
            "about:blank",
        ]
        self.stderr = open(profile.parent / "chromium-stderr.log", "wb")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.stderr,
            preexec_fn=preexec,
            pass_fds=(3, 4),
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from chromium")
            ready, _, _ = select.select([self._r], [], [], left)
            if ready:
                data = os.read(self._r, 1 << 20)
                if not data:
                    raise RuntimeError("chromium closed the debugging pipe")
                self._buf += data
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str) -> dict:
        for ev in self.events:
            if ev.get("method") == method:
                return ev
        deadline = time.monotonic() + self.timeout
        while True:
            ev = self._read_message(deadline)
            self.events.append(ev)
            if ev.get("method") == method:
                return ev

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.send("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for fd in (self._r, self._w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.stderr.close()


def _render(binary: str, page: Path, tmp: Path) -> dict:
    """Load ``page``, collect console problems, image states, DOM facts and a screenshot."""
    browser = PipeBrowser(binary, tmp / "profile")
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            browser.send(f"{domain}.enable", session=session)
        browser.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        browser.send("Page.navigate", {"url": page.resolve().as_uri()}, session=session)
        browser.wait_event("Page.loadEventFired")

        def js(expr: str):
            res = browser.send(
                "Runtime.evaluate",
                {"expression": expr, "returnByValue": True, "awaitPromise": True},
                session=session,
            )
            return res["result"].get("value")

        images = js(
            "Promise.all(Array.from(document.images).map(i => i.decode().then("
            "() => [true, i.naturalWidth, i.naturalHeight], () => [false, 0, 0])))"
        )
        layout = js(
            "(() => { const w = document.querySelector('div.wide');"
            " const t = w.querySelector('table.summary');"
            " const cfg = t.querySelector('td.cfg');"
            " const before = cfg.getBoundingClientRect().left;"
            " w.scrollLeft = w.scrollWidth;"
            " const after = cfg.getBoundingClientRect().left;"
            " w.scrollLeft = 0;"
            " const vcell = t.querySelector('td.verdict'), rank = t.querySelector('th.rank');"
            " const verdictRight = vcell.getBoundingClientRect().right;"
            " const rankRight = rank.getBoundingClientRect().right;"
            " w.scrollLeft = w.scrollWidth;"
            " const wl = w.getBoundingClientRect().left;"
            " w.scrollLeft = 0;"
            " return {overflowX: getComputedStyle(w).overflowX,"
            "  scrolls: w.scrollWidth > w.clientWidth,"
            "  cfgPosition: getComputedStyle(cfg).position,"
            "  cfgBefore: before, cfgAfter: after, wrapLeft: wl,"
            "  verdictRight: verdictRight, rankRight: rankRight,"
            "  firstAnswer: document.querySelector('p.answer').innerText,"
            "  pageWidth: document.documentElement.scrollWidth,"
            "  viewWidth: window.innerWidth,"
            "  verdict: document.querySelector('section.verdict').innerText,"
            "  verdictTop: document.querySelector('section.verdict').getBoundingClientRect().top,"
            "  details: document.querySelectorAll('details.cfg').length,"
            "  openDetails: document.querySelectorAll('details.cfg[open]').length,"
            "  closedText: document.body.innerText}; })()"
        )
        # a reader opens every collapsed section (no script in the page: DevTools does it)
        js("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        facts = js(
            "({scripts: document.getElementsByTagName('script').length,"
            " text: document.body.innerText,"
            " title: document.title,"
            " marks: document.getElementsByTagName('mark').length})"
        )
        facts["layout"] = layout
        shot = browser.send("Page.captureScreenshot", {"format": "png"}, session=session)
        full = browser.send(
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=session
        )
        problems = []
        for ev in browser.events:
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
                problems.append(("console", p.get("type"), p.get("args")))
            elif m == "Runtime.exceptionThrown":
                problems.append(("exception", p.get("exceptionDetails")))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                problems.append(("log", p["entry"].get("text")))
            elif m == "Page.javascriptDialogOpening":
                problems.append(("dialog", p.get("message")))
        return {
            "images": images,
            "facts": facts,
            "problems": problems,
            "screenshot": base64.b64decode(shot["data"]),
            "full": base64.b64decode(full["data"]),
        }
    finally:
        browser.close()


@pytest.fixture(scope="module")
def chromium() -> str:
    binary = _chromium()
    if binary is None:
        pytest.skip(
            "no chromium binary on PATH (Debian: apt-get install chromium); "
            "the browser test needs a real headless browser"
        )
    return binary


def test_report_renders_in_chromium(chromium, report_folder, tmp_path):
    from PIL import Image

    report = report_folder / "report.html"
    got = _render(chromium, report, tmp_path)
    (tmp_path / "report-viewport.png").write_bytes(got["screenshot"])
    (tmp_path / "report-full.png").write_bytes(got["full"])

    assert got["problems"] == []
    # every inline chart decodes in the browser, at its real pixel size
    html_text = report.read_text(encoding="utf-8")
    n_img = html_text.count("<img ")
    assert n_img >= 6
    assert len(got["images"]) == n_img
    assert all(ok and w > 500 and h > 300 for ok, w, h in got["images"]), got["images"]
    # the screenshots are real images of a non-blank page
    for data in (got["screenshot"], got["full"]):
        img = Image.open(io.BytesIO(data)).convert("L")
        assert img.size[0] >= 1200
        lo, hi = img.getextrema()
        assert hi - lo > 100
    assert Image.open(io.BytesIO(got["full"])).size[1] > 2000

    facts = got["facts"]
    assert facts["scripts"] == 0
    # the hostile document text is shown as text, not run as markup
    assert "<script>alert(1)</script>" in facts["text"]
    assert "Alpha & Omega" in facts["text"]
    assert "<b>bold</b>" in facts["text"] or "Alpha & Omega" in facts["text"]
    assert facts["marks"] > 0

    lay = facts["layout"]
    # the recommendation is the first thing under the title, answer first
    assert lay["verdict"].startswith("Recommendation")
    assert lay["firstAnswer"].startswith("Use #4 paragraph(80): ")
    # at 1280 px the verdict's column and its metric are in view without scrolling sideways
    assert lay["verdictRight"] <= lay["viewWidth"] and lay["rankRight"] <= lay["viewWidth"]
    assert "Highest answerable@5: #4 paragraph(80) with 0.529" in lay["verdict"]
    assert "How sure:" in lay["verdict"] and lay["verdictTop"] < 300
    # the wide summary table scrolls inside its box, with the configuration column sticky;
    # the page itself does not scroll sideways
    assert lay["overflowX"] == "auto" and lay["scrolls"]
    assert lay["cfgPosition"] == "sticky"
    assert lay["cfgAfter"] == pytest.approx(lay["wrapLeft"], abs=2)
    assert lay["pageWidth"] <= lay["viewWidth"]
    # split-evidence sections: one per configuration and dataset, collapsed unless on the
    # frontier; collapsed text is hidden until opened
    assert lay["details"] == 8 and 0 < lay["openDetails"] < 8
    assert "<script>alert(1)</script>" not in lay["closedText"]


def _question_view(binary: str, page: Path, tmp: Path) -> dict:
    """Open the report at its question view and read what a reader finds there."""
    browser = PipeBrowser(binary, tmp / "profile-q")
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        browser.send("Page.enable", session=session)
        browser.send("Page.navigate", {"url": page.resolve().as_uri() + "#questions"}, session=session)
        browser.wait_event("Page.loadEventFired")
        res = browser.send(
            "Runtime.evaluate",
            {
                "expression": "(() => {"
                " const h = document.getElementById('questions');"
                " const m = document.querySelector('table.questions');"
                " document.querySelectorAll('details.misses').forEach(d => { d.open = true; });"
                " const miss = document.querySelector('li.miss');"
                " const box = miss.getBoundingClientRect();"
                " return {headTop: h.getBoundingClientRect().top,"
                "  missCells: m.querySelectorAll('td.qm').length,"
                "  hitCells: m.querySelectorAll('td.qh').length,"
                "  cellTitle: m.querySelector('td.qm').title,"
                "  missText: miss.innerText,"
                "  missMarks: miss.querySelectorAll('.snippet mark').length,"
                "  missSnippets: miss.querySelectorAll('.snippet').length,"
                "  missVisible: box.height > 0 && box.width > 0,"
                "  scripts: document.getElementsByTagName('script').length}; })()",
                "returnByValue": True,
            },
            session=session,
        )
        return res["result"]["value"]
    finally:
        browser.close()


def test_question_view_shows_a_missed_question_and_its_competing_chunk(chromium, report_folder, tmp_path):
    got = _question_view(chromium, report_folder / "report.html", tmp_path)
    assert got["scripts"] == 0
    # the fragment link lands on the question view
    assert abs(got["headTop"]) < 5
    # the matrix shows hits and misses, each miss says why on hover
    assert got["missCells"] > 0 and got["hitCells"] > 0
    assert "ranked too low" in got["cellTitle"]
    # a missed question: the chunk that held its evidence, the rank it reached, and the chunk
    # retrieved first instead, both excerpts shown with the evidence highlighted
    assert got["missVisible"]
    assert "missed by #" in got["missText"]
    assert "held by chunk" in got["missText"] and "which reached" in got["missText"]
    assert "retrieved first instead: chunk" in got["missText"]
    assert got["missSnippets"] >= 2 and got["missMarks"] >= 1
