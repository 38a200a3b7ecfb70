#!/usr/bin/python3
"""The attention explorer in a real browser: headless Chromium driven by Selenium (Debian's
chromium-driver and python3-selenium) opens an explorer page, chooses an input, a layer and a head,
hovers a query, and checks that the weights the page then shows are the page's own data for that
(input, layer, head, query); then clicks a model-view thumbnail and checks the head view follows.
Any error in the browser's console fails the test.

  tests/browser/explorer.py PAGE.html
"""
import json
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait


def fail(message):
    print("explorer test: " + message, file=sys.stderr)
    sys.exit(1)


def main(page):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,1400"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get("file://" + page)
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "yes")
        data = json.loads(driver.find_element(By.ID, "attention-data").get_attribute("textContent"))
        inputs = data["inputs"]
        if not inputs:
            fail("the page holds no inputs")

        # The last input, its last layer and last head: not what the page opens on.
        i = len(inputs) - 1
        Select(driver.find_element(By.ID, "input")).select_by_value(str(i))
        layer = len(inputs[i]["layers"]) - 1
        Select(driver.find_element(By.ID, "layer")).select_by_value(str(layer))
        head = len(inputs[i]["layers"][layer]["heads"]) - 1
        Select(driver.find_element(By.ID, "head")).select_by_value(str(head))
        weights = inputs[i]["layers"][layer]["heads"][head]
        checked = 0
        for q in sorted({0, len(weights) // 2, len(weights) - 1}):
            target = driver.find_element(By.CSS_SELECTOR, f'#head-view text.query[data-query="{q}"]')
            ActionChains(driver).move_to_element(target).perform()
            cells = driver.find_elements(By.CSS_SELECTOR, f'#readout td.wt[data-head="{head}"]')
            if len(cells) != len(inputs[i]["keys"]):
                fail(f"query {q}: {len(cells)} weights shown for {len(inputs[i]['keys'])} keys")
            for cell in cells:
                k = int(cell.get_attribute("data-key"))
                shown, want = float(cell.text), weights[q][k]
                if abs(shown - want) > 5e-4:
                    fail(f"input {i}, layer {layer}, head {head}, query {q}, key {k}: the page shows {shown}, its data says {want}")
                checked += 1
            focused = driver.find_elements(By.CSS_SELECTOR, "#head-view text.query.focus")
            if len(focused) != 1 or focused[0].get_attribute("data-query") != str(q):
                fail(f"hovering query {q} did not mark it")
            # Only the hovered query's lines are drawn: at most one per key.
            lines = driver.find_elements(By.CSS_SELECTOR, "#head-view line")
            if len(lines) > len(inputs[i]["keys"]):
                fail(f"hovering query {q} left {len(lines)} lines for {len(inputs[i]['keys'])} keys")

        # The model view: a thumbnail per (layer, head); clicking the first opens it above.
        thumbs = driver.find_elements(By.CSS_SELECTOR, "#model-view canvas")
        expected = sum(len(l["heads"]) for l in inputs[i]["layers"])
        if len(thumbs) != expected:
            fail(f"the model view shows {len(thumbs)} heads, the data has {expected}")
        thumbs[0].click()
        if driver.find_element(By.ID, "layer").get_attribute("value") != "0" or \
           driver.find_element(By.ID, "head").get_attribute("value") != "0":
            fail("clicking the first thumbnail did not open layer 1, head 1")

        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        if errors:
            fail("console errors: " + "; ".join(e["message"] for e in errors))
        print(f"explorer test: {checked} weights read off the page after hovering match its data; "
              f"{expected} thumbnails; no console errors")
    finally:
        driver.quit()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: tests/browser/explorer.py PAGE.html", file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])
