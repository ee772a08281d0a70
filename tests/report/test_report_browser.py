"""index.html in a real headless Chromium: the timeline renders, the page stays offline.

Chromium is required, not optional: without it these tests fail and say how
to install it (CI installs Debian's ``chromium`` package).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from report_dom import parse
from report_png import decode

if TYPE_CHECKING:
    from report_runs import RunDir

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    # Keep the machine offline whatever happens: every host name fails to resolve,
    # but a request the page makes is still attempted, so it still shows in the net log.
    "--host-resolver-rules=MAP * ~NOTFOUND",
)
BROWSER_INTERNAL = "not an origin"
"""The initiator Chromium gives its own requests (updates, accounts), as opposed to a page's."""


def chromium() -> str:
    """The Chromium binary, or a test failure saying how to install it."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and Path("/usr/bin/chromium").exists():
        found = "/usr/bin/chromium"
    if found is None:
        pytest.fail(
            "Chromium is not installed, and the report's browser tests need it (they do not "
            "skip). Install Debian's package: apt-get update && apt-get install -y chromium"
        )
    return found


def open_page(page: Path, work: Path, *extra: str) -> tuple[str, list[tuple[str, str]]]:
    """Open ``page`` headless; return stdout and the (initiator, url) of every URL request."""
    netlog = work / "netlog.json"
    result = subprocess.run(
        [
            chromium(),
            *FLAGS,
            f"--user-data-dir={work / 'profile'}",
            f"--log-net-log={netlog}",
            *extra,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout, url_requests(netlog)


def url_requests(netlog: Path) -> list[tuple[str, str]]:
    """Every URL request Chromium started, from its net log: (initiator, url)."""
    log = json.loads(netlog.read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [
        (event["params"].get("initiator", ""), event["params"]["url"])
        for event in log["events"]
        if event["type"] == start and "url" in event.get("params", {})
    ]


def page_requests(requests: list[tuple[str, str]]) -> list[str]:
    """The URLs the page asked for (not Chromium's own background traffic)."""
    return [url for initiator, url in requests if initiator != BROWSER_INTERNAL]


def test_the_timeline_renders_every_attempt_mark_and_makes_no_request(
    tiny: RunDir, tmp_path: Path
) -> None:
    """After the page's script ran, 4 marks (one per request event) are laid out; nothing fetched."""
    requests = sum(1 for e in tiny.trace("naive") if e.kind == "request")
    dom, seen = open_page(tiny.path / "index.html", tmp_path, "--dump-dom")
    body = parse(dom).find_all("body")[0]
    assert body.attrs["data-rendered-marks"] == str(requests) == "4"
    timelines = body.find_all("svg", "timeline")
    assert [svg.attrs["data-rendered-marks"] for svg in timelines] == ["4"]
    assert page_requests(seen) == []


def test_a_screenshot_of_the_report_is_not_blank(tiny: RunDir, tmp_path: Path) -> None:
    """The rendered page has many colours, among them the marks' 5xx and ok fills."""
    shot = tmp_path / "report.png"
    _, seen = open_page(
        tiny.path / "index.html", tmp_path, f"--screenshot={shot}", "--window-size=1400,2000"
    )
    image = decode(shot.read_bytes())
    assert (image.width, image.height) == (1400, 2000)
    colours = {
        tuple(image.pixel(x, y)[:3])
        for y in range(0, image.height, 4)
        for x in range(0, image.width, 4)
    }
    assert len(colours) > 50
    assert (0xD5, 0x5E, 0x00) in colours  # 5xx (Okabe-Ito vermillion)
    assert (0x00, 0x9E, 0x73) in colours  # ok (Okabe-Ito bluish green)
    white = sum(1 for y in range(image.height) if set(image.rows[y]) == {255})
    assert white < image.height * 0.9
    assert page_requests(seen) == []


def test_the_network_check_would_catch_a_page_that_fetches(tmp_path: Path) -> None:
    """Control: an external image in a page without CSP shows up as a page request."""
    page = tmp_path / "leaky.html"
    page.write_text('<html><body><img src="http://example.invalid/pixel.png"></body></html>')
    _, seen = open_page(page, tmp_path, "--dump-dom")
    assert page_requests(seen) == ["http://example.invalid/pixel.png"]
    assert re.match(r"file://|null", next(i for i, u in seen if u.endswith("pixel.png")))


def test_a_missing_chromium_fails_and_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without Chromium the browser tests fail (never skip) with the install command."""
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    monkeypatch.setattr(Path, "exists", lambda _self: False)
    with pytest.raises(pytest.fail.Exception) as caught:
        chromium()
    assert str(caught.value) == (
        "Chromium is not installed, and the report's browser tests need it (they do not skip). "
        "Install Debian's package: apt-get update && apt-get install -y chromium"
    )
