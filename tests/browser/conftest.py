"""conftest.py: the browser tests' fixtures: a live daemon (tests/contract/daemon.py) and a headless Chromium
driven by Selenium through Debian's chromedriver. Where Chromium or its driver is missing, or cannot start, the
tests skip and say why (make test prints it)."""
import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "contract"))

from daemon import Daemon  # noqa: E402

CHROMIUM = [os.environ.get("MEMPLAN_CHROMIUM", ""), "/usr/bin/chromium", "/usr/bin/chromium-browser"]
DRIVER = [os.environ.get("MEMPLAN_CHROMEDRIVER", ""), "/usr/bin/chromedriver", shutil.which("chromedriver") or ""]


def _first(paths):
    for p in paths:
        if p and os.path.exists(p) and os.access(p, os.X_OK):
            return p
    return None


@pytest.fixture(scope="module")
def daemon():
    d = Daemon()
    yield d
    rc = d.stop()
    assert rc == 0, "memplan exited %d:\n%s" % (rc, "".join(d.lines))


@pytest.fixture(scope="module")
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as e:  # the venv lacks Selenium (tests/contract/requirements.txt pins it)
        pytest.skip("selenium is not installed in the test venv: %s" % e)
    chromium, driver = _first(CHROMIUM), _first(DRIVER)
    if chromium is None or driver is None:
        pytest.skip("Chromium or chromedriver is not installed (Debian: apt-get install chromium chromium-driver; "
                    "scripts/install-deps test installs them): chromium=%s chromedriver=%s" % (chromium, driver))
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,1000", "--hide-scrollbars", "--force-device-scale-factor=1"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        drv = webdriver.Chrome(service=Service(executable_path=driver), options=opts)
    except Exception as e:  # noqa: BLE001 - any failure to start is the reason to skip
        pytest.skip("Chromium could not start here: %s" % str(e).splitlines()[0])
    drv.set_page_load_timeout(60)
    yield drv
    drv.quit()
