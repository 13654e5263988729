"""The site from a hostile record, read in a browser: no script of the record's runs, and no
request leaves the site (Mermaid included)."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from recordtool.cli import cli
from recordtool.record.config import load_config
from recordtool.verify.store import write_verdict
from tests.conftest import ProjectBuilder
from tests.render_record import build_site, verdict

# What each payload does when it runs: the tab's title becomes PWNED, and a request goes out.
JS = "document.title='PWNED';new Image().src='http://evil.example/ran'"
TITLE = f"X </title><script>{JS}</script><img src=x onerror=\"{JS}\"> ---\nY: z # \"q\" [a](javascript:{JS})"
BODY = f"""<script>{JS}</script>

<img src="http://evil.example/img.png" onerror="{JS}"> <svg onload="{JS}"></svg>
<a href="javascript:{JS}">a link</a>, [another](javascript:{JS}) and <iframe src="http://evil.example/"></iframe>

---
title: <script>{JS}</script>
---

```mermaid
%%{{init: {{"securityLevel": "loose", "startOnLoad": true}}}}%%
flowchart LR
  A["<img src=x onerror=\\"{JS}\\">"] --> B
  click A call eval("{JS}")
  click B href "javascript:{JS}"
```
"""
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
OWN = (".google.com", ".googleapis.com", ".gstatic.com", ".gvt1.com")  # the browser's own services, not the pages' requests


def _hostile(project: ProjectBuilder) -> None:
    def quoted(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    project.add("LIT-1", f"title: {quoted(TITLE)}\ntags: [alpha]\nbody: {quoted(BODY)}\n"
                         f"reference: {{authors: [{quoted(TITLE)}], year: 2021, title: {quoted(TITLE)}, "
                         "url: \"https://example.org/p\"}\n")
    project.add("THEORY-1", f"title: {quoted(TITLE)}\nstatement: {quoted(BODY)}\ntags: [alpha]\n"
                            f"cites: [{{id: LIT-1, as: source, note: {quoted(TITLE)}}}]\nbody: {quoted(BODY)}\n")
    project.add("NOTE-1", f"title: {quoted('%%{init: {}}%% ' + TITLE)}\ncites: [{{id: THEORY-1, as: uses}}]\n"
                          f"body: {quoted('See THEORY-1 and THEORY-9. ' + BODY)}\n")
    shown = verdict("THEORY-1")  # (stale: THEORY-1 declares no check now, and its page shows the last verdict)
    check = dataclasses.replace(shown.checks[0], params={"p": TITLE}, message=TITLE, setting=TITLE, runs=[
        dataclasses.replace(run, metrics={**run.metrics, f"m{TITLE}": 1.0}, error=TITLE) for run in shown.checks[0].runs])
    write_verdict(load_config(project.root), dataclasses.replace(shown, checks=[check]))


def _build(project: ProjectBuilder) -> Path:
    pytest.importorskip("mkdocs", reason="mkdocs is not installed: pip install -e \".[site]\" to test the site")
    pytest.importorskip("material", reason="mkdocs-material is not installed: pip install -e \".[site]\"")
    _hostile(project)
    result = CliRunner().invoke(cli, ["render", "--root", str(project.root), "--site"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    built = build_site(project.root)
    assert built.returncode == 0, built.stderr
    return project.root / "record" / "pages-site"


class _Active(HTMLParser):
    """What in a page could run or fetch: scripts, event attributes, ``javascript:`` URLs,
    frames, and any URL off the site."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self.script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.script = tag == "script"
        for name, value in attrs:
            value = (value or "").strip().lower()
            if name.startswith("on") or value.startswith(("javascript:", "data:text/html")) or "evil.example" in value:
                self.found.append(f"<{tag} {name}={value!r}>")
        if tag in ("iframe", "object", "embed"):
            self.found.append(f"<{tag}>")

    def handle_endtag(self, tag: str) -> None:
        self.script = False

    def handle_data(self, data: str) -> None:
        if self.script and "PWNED" in data:
            self.found.append(f"<script>{data[:80]}")


def test_no_record_text_is_active_html_on_the_site(project: ProjectBuilder) -> None:
    site = _build(project)
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 10
    for page in pages:
        parser = _Active()
        parser.feed(page.read_text(encoding="utf-8"))
        assert parser.found == [], page.relative_to(site)
    entry = (site / "THEORY-1.html").read_text(encoding="utf-8")
    assert "<title>THEORY-1: X &lt;/title&gt;&lt;script&gt;" in entry  # the tab: the id, and the title as text
    assert "unpkg.com" not in entry and '<script src="assets/mermaid.min.js"></script>' in entry


class _Logged(SimpleHTTPRequestHandler):
    """Serves the site; logs each request's Host and path. As the browser's proxy it gets
    every request off the site (http as an absolute URL, https as CONNECT) and refuses it."""

    seen: ClassVar[list[tuple[str, str]]] = []

    def do_GET(self) -> None:
        self.seen.append((self.headers.get("Host", ""), self.path))
        if self.path.startswith("/"):
            super().do_GET()
        else:
            self.send_error(403)

    def do_CONNECT(self) -> None:
        self.seen.append((self.path, "CONNECT"))
        self.send_error(403)

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture()
def served(project: ProjectBuilder) -> Iterator[tuple[str, str, list[tuple[str, str]]]]:
    """A headless browser (or the test skipped), and the site served on localhost: its host,
    and the requests the server sees."""
    browser = next((found for name in BROWSERS if (found := shutil.which(name))), None)
    if browser is None:
        pytest.skip(f"no headless browser installed (looked for {', '.join(BROWSERS)}): apt-get install chromium")
    site = _build(project)
    seen: ClassVar[list[tuple[str, str]]] = []
    handler = type("Handler", (_Logged,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: handler(*a, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield browser, f"127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_a_browser_runs_no_script_of_the_record_and_fetches_nothing_off_the_site(
        served: tuple[str, str, list[tuple[str, str]]]) -> None:
    browser, host, seen = served
    for page in ("THEORY-1.html", "LIT-1.html", "NOTE-1.html", "graph.html", "index.html", "tags/alpha.html"):
        with tempfile.TemporaryDirectory() as profile:
            dom = subprocess.run(
                [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}", f"--proxy-server=http://{host}",
                 f"--host-resolver-rules=MAP * 127.0.0.1, EXCLUDE {host.split(':')[0]}",
                 "--virtual-time-budget=8000", "--dump-dom", f"http://{host}/{page}"],
                capture_output=True, text=True, timeout=120).stdout
        assert "</html>" in dom, page
        assert "<title>PWNED</title>" not in dom, page
    off = [(h, p) for h, p in seen if h != host and not h.split(":")[0].endswith(OWN)]
    assert off == []  # nothing off the site: no script ran, no CDN
    assert (host, "/assets/mermaid.min.js") in seen  # Mermaid came from the site
