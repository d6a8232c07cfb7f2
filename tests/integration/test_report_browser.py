"""The reference report read in a real browser (Debian's chromium, headless) at 1280 px: no table makes
the page wider than the window, and every wide table scrolls inside its own box (issue 39, item 6)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from toolroute.config import ROOT

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--headless=new", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
REPORT = ROOT / "results" / "reference" / "report.html"
WIDTH = 1280


def test_no_table_of_the_reference_report_is_wider_than_the_page():
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install -y chromium fonts-nanum; .ci/run does it)")
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": 900})
            page.goto(REPORT.as_uri())
            page_width = page.evaluate("document.documentElement.scrollWidth")
            tables = page.evaluate("""() => [...document.querySelectorAll('table')].map(t => {
                const box = t.closest('.report-table');
                const r = (box || t).getBoundingClientRect();
                return {right: r.right, boxed: !!box, wide: t.scrollWidth > (box ? box.clientWidth : t.clientWidth)};
            })""")
        finally:
            browser.close()
    assert tables, "the report has no table"
    assert page_width <= WIDTH, f"the page is {page_width} px wide at a {WIDTH} px window"
    assert all(t["right"] <= WIDTH for t in tables)
    report_tables = [t for t in tables if t["boxed"]]
    assert len(report_tables) >= 10, "the report's tables are not in their scrolling boxes"
