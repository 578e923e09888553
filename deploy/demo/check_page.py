# SPDX-License-Identifier: Apache-2.0
# Turn 3, in a browser sandbox: start Playwright (with the system's
# Chromium: the sandbox has no network to fetch one) and check the web
# page the earlier turns left in the session's workspace.
from playwright.sync_api import sync_playwright

with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/lib/chromium/chromium",
                                args=["--no-sandbox", "--disable-dev-shm-usage"])
    page = browser.new_page()
    page.goto("file:///workspace/report.html")
    width = page.eval_on_selector("#chart", "img => img.naturalWidth")
    print(f"page title: {page.title()}")
    print(f"heading: {page.inner_text('h1')}")
    print(f"chart: {'loaded' if width > 0 else 'MISSING'}, {width} px wide")
    browser.close()
    raise SystemExit(0 if width > 0 else 1)
