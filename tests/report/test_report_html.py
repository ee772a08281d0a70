"""index.html: overview, a timeline per failing run, self-contained, bounded in size."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest
from report_dom import Node, parse

from retrychaos.report.html import MAX_TIMELINES, inline, render_html
from retrychaos.report.outcomes import category_of

if TYPE_CHECKING:
    from report_runs import RunDir

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


@pytest.fixture(scope="module")
def page(tiny: RunDir) -> Node:
    """The parsed index.html of the tiny run."""
    return parse(tiny.text("index.html"))


def _article(page: Node, number: int) -> Node:
    return next(a for a in page.find_all("article") if a.attrs.get("id") == f"run-{number}")


def test_one_attempt_mark_per_request_event(tiny: RunDir, page: Node) -> None:
    """The failing run's timeline has exactly one mark per request, coloured by its outcome."""
    requests = [e for e in tiny.trace("naive") if e.kind == "request"]
    responses = {e.data["started"]: e for e in tiny.trace("naive") if e.kind == "response"}
    marks = _article(page, 1).find_all("rect", "attempt")
    assert len(marks) == len(requests) == 4
    assert [m.attrs["data-seq"] for m in marks] == [str(e.seq) for e in requests]
    assert [m.attrs["data-outcome"] for m in marks] == ["429", "ok", "5xx", "ok"]
    assert [m.attrs["data-outcome"] for m in marks] == [
        category_of(responses[e.at].data["outcome"], responses[e.at].data["status"])
        for e in requests
    ]
    assert len(page.find_all(cls="attempt")) == 4  # the passing run draws no timeline


def test_every_mark_has_a_tooltip(page: Node) -> None:
    """Each mark's <title> says which attempt it is, when, and how it ended."""
    titles = [m.title() for m in page.find_all("rect", "attempt")]
    assert titles[0] is not None
    assert titles[0].splitlines()[:3] == [
        "attempt 1 of a0-t0-c0 on search (first attempt)",
        "t = 0.000 s to 0.050 s",
        "outcome: status 429 RATE_LIMITED",
    ]
    assert all(titles)


def test_violating_attempts_are_ringed_and_numbered(tiny: RunDir, page: Node) -> None:
    """Violations 1, 3, 5 point at seq 5 and 2, 4, 6 at seq 11: two rings, badges 1+ and 2+."""
    article = _article(page, 1)
    rings = article.find_all("rect", "violation-ring")
    assert len(rings) == 2
    messages = [v["message"] for v in tiny.run("naive")["violations"]]
    ring_title = rings[0].title() or ""
    assert ring_title.splitlines()[0] == f"1. retry_after_respected: {messages[0]}"
    assert [t.text for t in article.find_all("text", "badge-text")] == ["1+", "2+"]


def test_waits_retry_after_window_deadline_and_commit_are_drawn(page: Node) -> None:
    """Zero waits are labelled, the Retry-After window is shaded, the far deadline is written."""
    article = _article(page, 1)
    assert [t.text for t in article.find_all("text", "wait-text")] == ["0 s", "0 s"]
    windows = article.find_all("rect", "retry-after")
    assert len(windows) == 1
    assert windows[0].title() == ("Retry-After '1': nothing should reach search before t = 1.050 s")
    assert [t.text for t in article.find_all("text", "deadline-late")] == ["deadline 8 s \u203a"]
    assert len(article.find_all("path", "commit")) == 1
    assert [t.text for t in article.find_all("text", "call-label")] == [
        "search → ok",
        "create_ticket → ok",
    ]


def test_the_page_needs_no_network(tiny: RunDir, page: Node) -> None:
    """A strict CSP, no external src/href, no <link> or external script: it opens from disk."""
    metas = [m for m in page.find_all("meta") if m.attrs.get("http-equiv")]
    assert [(m.attrs["http-equiv"], m.attrs["content"]) for m in metas] == [
        ("Content-Security-Policy", CSP)
    ]
    html = tiny.text("index.html")
    links = re.findall(r"""\b(?:src|href)\s*=\s*["']?\s*([^"'\s>]*)""", html, re.IGNORECASE)
    assert [u for u in links if re.match(r"(?i)(https?:)?//", u)] == []
    assert all(u.startswith("#") for u in links), links
    assert not page.find_all("link")
    assert all("src" not in s.attrs for s in page.find_all("script"))


def test_overview_compares_controllers_side_by_side(page: Node) -> None:
    """One matrix row per controller; naive's four violated cells link to its run."""
    rows = page.find_all("tr", "filterable")
    assert [(r.attrs["data-controller"], r.attrs["data-failing"]) for r in rows] == [
        ("naive", "true"),
        ("reference", "false"),
    ]
    violated = rows[0].find_all("td", "violated")
    assert [c.attrs["title"] for c in violated] == [
        "retry_after_respected: violated in 1 of 1 runs",
        "unsafe_side_effects_not_replayed: violated in 1 of 1 runs",
        "idempotency_key_stable: violated in 1 of 1 runs",
        "backoff_bounded_and_jittered: violated in 1 of 1 runs",
    ]
    assert {a.attrs["href"] for c in violated for a in c.find_all("a")} == {"#run-1"}
    assert len(rows[0].find_all("td", "unchecked")) == 1
    metrics = next(t for t in page.find_all("table") if "metrics" in t.classes)
    header = [th.text for th in metrics.find_all("th") if th.attrs.get("scope") == "col"]
    assert header == ["health metric", "naive", "reference"]


def test_a_failing_run_says_what_was_expected_and_how_to_replay(tiny: RunDir, page: Node) -> None:
    """Per invariant: the rule in plain words, the first violation, then replay and YAML."""
    article = _article(page, 1)
    table = article.find_all("table")[0]
    rows = table.find_all("tr")[1:]
    assert [r.find_all("code")[0].text for r in rows] == [
        "retry_after_respected",
        "unsafe_side_effects_not_replayed",
        "idempotency_key_stable",
        "backoff_bounded_and_jittered",
    ]
    document = tiny.document
    assert rows[0].find_all("td")[0].text == document["invariants"]["retry_after_respected"]
    first = tiny.run("naive")["violations"][0]
    assert f"(expected {first['expected']}; actual {first['actual']})" in rows[0].all_text()
    replay = [c.text for c in article.find_all("code") if c.text.startswith("retrychaos replay")]
    assert replay == ["retrychaos replay --scenario tiny-report --controller naive --seed 1"]
    yaml = article.find_all("pre", "yaml")
    assert [p.text for p in yaml] == [document["scenarios"]["tiny-report"]["yaml"]]


def test_a_fuzz_counterexample_is_shown_when_present(tiny: RunDir) -> None:
    """A run carrying ``fuzz`` shows its shrunk counterexample."""
    document = tiny.document
    document["runs"][0]["fuzz"] = {"examples": 57, "shrunk": "name: smallest\ntools: []\n"}
    article = _article(parse(render_html(document, tiny.path, document["invariant_ids"])), 1)
    fuzz = article.find_all("div", "fuzz")
    assert len(fuzz) == 1
    assert [d.text for d in fuzz[0].find_all("dt")] == ["examples", "shrunk"]
    assert [c.text for c in fuzz[0].find_all("code")] == ["retrychaos fuzz", "57"]
    assert [p.text for p in fuzz[0].find_all("pre")] == [
        "name: smallest\ntools: []\n",
        document["scenarios"]["tiny-report"]["yaml"],
    ]
    assert all(not d.find_all("pre", "yaml") for d in article.find_all("details"))


def _copies(run: dict[str, Any], n: int) -> list[dict[str, Any]]:
    return [{**run, "seed": seed} for seed in range(1, n + 1)]


def test_at_most_fifty_runs_get_a_timeline(tiny: RunDir) -> None:
    """With 60 failing runs, 50 are drawn and 10 listed with their first violation."""
    document = tiny.document
    document["runs"] = _copies(tiny.run("naive"), 60)
    page = parse(render_html(document, tiny.path, document["invariant_ids"]))
    assert len(page.find_all("article")) == MAX_TIMELINES == 50
    assert len(page.find_all("svg", "timeline")) == 50
    rest = next(t for t in page.find_all("table") if "rest" in t.classes)
    rows = rest.find_all("tr", "filterable")
    assert [r.find_all("td")[2].text for r in rows] == [str(s) for s in range(51, 61)]
    first = tiny.run("naive")["violations"][0]
    cell = rows[0].find_all("td")[3]
    assert cell.find_all("code")[0].text == "retry_after_respected"
    assert cell.text.startswith(f": {first['message']} ")


def test_fleet_runs_are_aggregated_per_tool_with_a_rate_chart(fleet: RunDir) -> None:
    """30 agents: a lane per tool, binned marks summing to the requests, and attempts per second."""
    events = fleet.trace("naive")
    requests = sum(1 for e in events if e.kind == "request")
    calls = sum(1 for e in events if e.kind == "call_start")
    page = parse(fleet.text("index.html"))
    timeline = page.find_all("svg", "timeline")[0]
    assert timeline.find_all(cls="attempt") == []
    bins = timeline.find_all("rect", "attempt-bin")
    assert sum(int(b.attrs["data-count"]) for b in bins) == requests
    assert [t.text for t in timeline.find_all("text", "lane-label")] == ["weather"]
    assert {b.attrs["data-outcome"] for b in bins} == {"5xx", "ok"}
    rates = page.find_all("svg", "rates")
    assert len(rates) == 1
    legend = [t.text for t in rates[0].find_all("text", "legend-text")]
    assert legend == [
        f"attempts/s (request events; {requests} in all)",
        f"logical calls/s (call_start events; {calls} in all)",
    ]


def test_each_health_figure_is_explained_on_the_page(tiny: RunDir) -> None:
    """Under the metrics table: the verdict, then each metric's meaning, code marked up."""
    html = tiny.text("index.html")
    assert (
        "<p><strong>Runs passed</strong> is the verdict: a run passes when every invariant that "
        "applies to its scenario held and the run was not vacuous (it reached a tool and, when "
        "the scenario has faults, met one, and every must_happen event it declares happened). The other figures describe how the runs went; none "
        "of them fails a run by itself.</p>"
    ) in html
    assert (
        "<dt>task success</dt><dd>share of tasks that ended well. Below 100% is expected in a "
        "passing run: many scenarios make some tasks impossible on purpose (a 403, a side "
        "effect that must not be replayed, an outage longer than the deadline). A task that "
        "could have succeeded and did not fails <code>succeeds_when_possible</code>.</dd>"
    ) in html
    assert (
        "<dt>deadline overrun</dt><dd>how long after its deadline a task still started an "
        "attempt or got its decision, in virtual seconds, in the worst run. "
        "<code>deadline_adherence</code> lets the decision come up to one attempt&#39;s client "
        "timeout late (<code>attempt_timeout_s</code>, 2 s by default) while an attempt started "
        "in time is under way, so a passing run can show up to that.</dd>"
    ) in html
    assert html.count("<dt>") == 9


def test_inline_markup_escapes_everything_else() -> None:
    """Backticks become <code>, **x** becomes <strong>, and HTML in the text is escaped."""
    assert str(inline("a `<b>` **c** & d")) == (
        "a <code>&lt;b&gt;</code> <strong>c</strong> &amp; d"
    )


LEFTOVER = (
    "the controller left 1 process(es) running after the case, killed by the harness: "
    "sleep 600; a controller must wait for the processes it starts"
)


def test_the_harness_notes_on_cases_are_listed_passing_runs_too(tiny: RunDir) -> None:
    """A table row per note, naming the run, filterable like the runs; no notes, no section."""
    assert 'id="notes"' not in tiny.text("index.html")
    document = tiny.document
    reference = next(r for r in document["runs"] if r["controller"] == "reference")
    reference["notes"] = [LEFTOVER]
    page = parse(render_html(document, tiny.path, document["invariant_ids"]))
    section = next(s for s in page.find_all("section") if s.attrs.get("id") == "notes")
    assert [h.text for h in section.find_all("h2")] == ["Harness notes"]
    rows = section.find_all("tr", "filterable")
    assert [[d.text for d in row.find_all("td")] for row in rows] == [
        ["reference", "tiny-report", "1", LEFTOVER]
    ]
    assert rows[0].attrs["data-failing"] == "false"
    assert rows[0].attrs["data-text"] == f"reference tiny-report seed 1 {LEFTOVER}".lower()
