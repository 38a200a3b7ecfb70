#!/usr/bin/python3
"""The attention explorer in a real browser: headless Chromium driven by Selenium (Debian's
chromium-driver and python3-selenium) opens an explorer page, chooses an input, a layer and a head,
hovers a query, and checks that the weights the page then shows are the page's own data for that
(input, layer, head, query); then the neuron view: a query chosen by clicking it in the head view
and one chosen in its selector, whose shown products, sums, scores and softmax weights must agree
with each other, with the page's queries and keys, and with the head view's weights; then clicks a
model-view thumbnail and checks the head view follows. On a page with gradients (lesson 06), the
gradient view of every query, chosen by clicking it in the head view: its A, dA and given dS must be
the page's data, its D and dS = A (dA - D) must be worked out from them, and agree with the given dS.
With --every-layer, every layer of that input: one whose queries and keys the page has gets its
neuron view checked (the terms sum to q.k, the softmax of the scores is the head view's weights), one
without must show the reason the page gives for it. With --grouped (grouped-query attention, lesson
12): in every layer whose query heads share key/value heads, the head selector groups the heads by
the key/value head they read, a group overlaid shows exactly its heads' weights in the readout under
that key/value head, the model view frames each group's thumbnails, the neuron view shows the same
keys for every head of a group, and the note over the head view names the sharing.
Any error in the browser's console fails the test.

  tests/browser/explorer.py [--neuron] [--gradient] [--every-layer] [--grouped] PAGE.html

--neuron: the page must have the queries and keys for the neuron view (query-key attention);
without it, a page that has none must say so in the neuron view.
--gradient: the page must have gradients for the gradient view; without it, a page that has none
must have no gradient view.
--every-layer: the neuron view of every layer of the last input (above); at least one must have it.
--grouped: the page must have a layer of grouped heads, checked as above.
"""
import json
import math
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait


def fail(message):
    print("explorer test: " + message, file=sys.stderr)
    sys.exit(1)


# The neuron view's table as the page shows it: every attribute as written, parsed here.
READ_NEURON = """
const cells = (row, cls) => [...row.querySelectorAll('td.' + cls + ' span')].map((s) => s.dataset.value);
const q = document.querySelector('#neuron-view tr.query-row');
return {
  q: q ? cells(q, 'vec') : null,
  rows: [...document.querySelectorAll('#neuron-view tr.key-row')].map((r) => ({
    key: r.dataset.key, best: r.classList.contains('best'), k: cells(r, 'vec'), prod: cells(r, 'prod'),
    dot: r.querySelector('td.dot').dataset.value, dotText: r.querySelector('td.dot').textContent,
    score: r.querySelector('td.score').dataset.value, weight: r.querySelector('td.weight').dataset.value,
    weightText: r.querySelector('td.weight').textContent })),
  text: document.getElementById('neuron-view').textContent };
"""


def softmax(scores):
    top = max(scores)
    if top == -math.inf:
        return [0.0 for _ in scores]
    e = [0.0 if s == -math.inf else math.exp(s - top) for s in scores]
    return [x / sum(e) for x in e]


def check_neuron_query(driver, where, part, keys, weights, shown_weights, q):
    """The neuron view for query q against the page's data; returns the number of products checked."""
    view = driver.execute_script(READ_NEURON)
    close = lambda a, b, tol=1e-9: abs(a - b) <= tol * (1 + abs(b))
    if view["q"] is None or [float(v) for v in view["q"]] != part["q"][q]:
        fail(f"{where}, query {q}: the query cells are not the page's q")
    if len(view["rows"]) != len(keys):
        fail(f"{where}, query {q}: {len(view['rows'])} key rows for {len(keys)} keys")
    scores, products = [], 0
    for row in view["rows"]:
        j = int(row["key"])
        k = [float(v) for v in row["k"]]
        if k != part["k"][j]:
            fail(f"{where}, query {q}, key {j}: the key cells are not the page's k")
        prod = [float(v) for v in row["prod"]]
        for c, (x, y, z) in enumerate(zip(part["q"][q], k, prod)):
            if not close(z, x * y):
                fail(f"{where}, query {q}, key {j}, dimension {c}: product shown {z}, q * k = {x * y}")
        products += len(prod)
        dot = float(row["dot"])
        if not close(sum(prod), dot) or abs(float(row["dotText"]) - dot) > 5.01e-4:
            fail(f"{where}, query {q}, key {j}: the products sum to {sum(prod)}, the page shows q.k = {row['dotText']} ({dot})")
        masked = "allowed" in part and part["allowed"][q][j] == "0"
        bias = part["bias"][q][j] if "bias" in part and not masked else 0.0
        score = float(row["score"])
        want = -math.inf if masked else dot * part["scale"] + bias
        if not (score == want or close(score, want)):
            fail(f"{where}, query {q}, key {j}: score shown {score}, q.k * scale + bias = {want}")
        scores.append(score)
    soft = softmax(scores)
    for j, (row, p) in enumerate(zip(view["rows"], soft)):
        shown = float(row["weight"])
        if not close(shown, p) or abs(float(row["weightText"]) - shown) > 5.01e-4:
            fail(f"{where}, query {q}, key {j}: weight shown {row['weightText']} ({shown}), the softmax of the shown scores {p}")
        # The head view's weights for this query: the page's data and, when given, what its readout shows.
        if abs(p - weights[q][j]) > 2e-3:
            fail(f"{where}, query {q}, key {j}: the softmax of the shown scores is {p}, the head view's weight {weights[q][j]}")
        if shown_weights is not None and abs(p - shown_weights[j]) > 2.5e-3:
            fail(f"{where}, query {q}, key {j}: the softmax of the shown scores is {p}, the readout shows {shown_weights[j]}")
    best = max(range(len(soft)), key=lambda j: soft[j])
    if soft[best] > 0 and not view["rows"][best]["best"]:
        fail(f"{where}, query {q}: the key with the most weight ({best}) is not marked")
    if soft[best] == 0 and any(row["best"] for row in view["rows"]):
        fail(f"{where}, query {q}: a query that sees no key has a key marked as its most weighted")
    return products


def check_neuron_view(driver, inputs, i, layer, head, expect):
    """Click a query in the head view, then choose another in the selector; check each."""
    data_layer = inputs[i]["layers"][layer]
    keys, weights = inputs[i]["keys"], data_layer["heads"][head]
    where = f"neuron view, input {i}, layer {layer}, head {head}"
    if "parts" not in data_layer:
        if expect:
            fail(f"{where}: the page has no queries and keys (--neuron)")
        if "no queries and keys" not in driver.find_element(By.ID, "neuron-view").text or \
           driver.find_element(By.ID, "neuron-query").is_enabled():
            fail(f"{where}: without queries and keys the view does not say so")
        return "the neuron view says it has no queries and keys"
    part = data_layer["parts"][head]
    products = 0
    n = len(inputs[i]["queries"])
    q = n // 2
    ActionChains(driver).move_to_element(
        driver.find_element(By.CSS_SELECTOR, f'#head-view text.query[data-query="{q}"]')).perform()
    readout = driver.find_elements(By.CSS_SELECTOR, f'#readout td.wt[data-head="{head}"]')
    shown = [float(c.get_attribute("data-value")) for c in sorted(readout, key=lambda c: int(c.get_attribute("data-key")))]
    ActionChains(driver).click().perform()  # where the pointer is: on query q
    if driver.find_element(By.ID, "neuron-query").get_attribute("value") != str(q):
        fail(f"{where}: clicking query {q} in the head view did not choose it")
    products += check_neuron_query(driver, where, part, keys, weights, shown, q)
    q = n - 1
    Select(driver.find_element(By.ID, "neuron-query")).select_by_value(str(q))
    products += check_neuron_query(driver, where, part, keys, weights, None, q)
    shown_views = 2
    # Every head overlaid in the head view: the neuron view shows one head, the first, and says so.
    if len(data_layer["heads"]) > 1:
        Select(driver.find_element(By.ID, "head")).select_by_value("-1")
        if "(the first of the overlaid heads)" not in driver.find_element(By.ID, "neuron-view").text:
            fail(f"{where}: with every head overlaid the neuron view does not say which head it shows")
        products += check_neuron_query(driver, where, data_layer["parts"][0], keys, data_layer["heads"][0], None, q)
        shown_views += 1
    return (f"neuron view: {products} products in {shown_views} (head, query) views; their sums, scores and softmax "
            "match the data and the head view")


READ_GRADIENT = """
const value = (r, cls) => r.querySelector('td.' + cls).dataset.value;
return { d: document.getElementById('grad-d').dataset.value,
  rows: [...document.querySelectorAll('#gradient-view tr.grad-row')].map((r) => ({ key: r.dataset.key,
    a: value(r, 'a'), da: value(r, 'da'), ds: value(r, 'ds'), given: value(r, 'ds-given') })) };
"""


def check_gradient_view(driver, inputs, i, layer, head, expect):
    """Click every query of the head view and check the gradient view against the page's data."""
    data_layer = inputs[i]["layers"][layer]
    where = f"gradient view, input {i}, layer {layer}, head {head}"
    if not any("grads" in l for inp in inputs for l in inp["layers"]):
        if expect:
            fail("the page has no gradients (--gradient)")
        if driver.find_elements(By.ID, "gradient-view"):
            fail("a page without gradients shows a gradient view")
        return "no gradient view (no gradients)"
    if "grads" not in data_layer:
        fail(f"{where}: the page has gradients, but not for the layer the test chose")
    Select(driver.find_element(By.ID, "head")).select_by_value(str(head))
    weights, grads = data_layer["heads"][head], data_layer["grads"][head]
    close = lambda a, b, tol=1e-12: abs(a - b) <= tol * (1 + abs(b))
    checked = 0
    for q in range(len(inputs[i]["queries"])):
        ActionChains(driver).move_to_element(
            driver.find_element(By.CSS_SELECTOR, f'#head-view text.query[data-query="{q}"]')).click().perform()
        if "parts" in data_layer:  # the neuron view follows the same click: every query of it, a fully masked one too
            check_neuron_query(driver, where, data_layer["parts"][head], inputs[i]["keys"], weights, None, q)
        view = driver.execute_script(READ_GRADIENT)
        rows = view["rows"]
        if len(rows) != len(inputs[i]["keys"]):
            fail(f"{where}, query {q}: {len(rows)} rows for {len(inputs[i]['keys'])} keys")
        a = [float(r["a"]) for r in rows]
        da = [float(r["da"]) for r in rows]
        if a != weights[q] or da != grads["dA"][q] or [float(r["given"]) for r in rows] != grads["dS"][q]:
            fail(f"{where}, query {q}: A, dA or the given dS shown are not the page's data")
        D = float(view["d"])
        if not close(D, sum(x * y for x, y in zip(a, da))):
            fail(f"{where}, query {q}: D shown {D}, sum of A dA {sum(x * y for x, y in zip(a, da))}")
        top = max(abs(x) for x in da)
        for j, r in enumerate(rows):
            ds = float(r["ds"])
            if not close(ds, a[j] * (da[j] - D)):
                fail(f"{where}, query {q}, key {j}: dS shown {ds}, A (dA - D) = {a[j] * (da[j] - D)}")
            if abs(ds - grads["dS"][q][j]) > 1e-5 * (1 + top):
                fail(f"{where}, query {q}, key {j}: the page's dS {ds} is not the backward's {grads['dS'][q][j]}")
            if a[j] == 0 and ds != 0:
                fail(f"{where}, query {q}, key {j}: a key with no weight has dS {ds}")
            checked += 1
    return f"gradient view: {checked} dS entries of {len(inputs[i]['queries'])} queries worked out from A and dA, as the backward's"


def check_every_layer(driver, inputs, i):
    """The neuron view of each layer of input i, chosen in the layer selector: checked against the data, or
    the page's own reason for having none shown."""
    with_parts, reasons = 0, 0
    for layer, data_layer in enumerate(inputs[i]["layers"]):
        Select(driver.find_element(By.ID, "layer")).select_by_value(str(layer))
        Select(driver.find_element(By.ID, "head")).select_by_value("0")
        where = f"every layer: input {i}, layer {layer} ({data_layer['name']})"
        if "parts" in data_layer:
            q = len(inputs[i]["queries"]) - 1
            Select(driver.find_element(By.ID, "neuron-query")).select_by_value(str(q))
            check_neuron_query(driver, where, data_layer["parts"][0], inputs[i]["keys"], data_layer["heads"][0], None, q)
            with_parts += 1
            continue
        if "no_neuron_view" not in data_layer:
            fail(f"{where}: no queries and keys, and no reason given for it")
        text = driver.find_element(By.ID, "neuron-view").text
        if data_layer["no_neuron_view"] not in text or driver.find_element(By.ID, "neuron-query").is_enabled():
            fail(f"{where}: the neuron view does not give the page's reason for having none: {text!r}")
        reasons += 1
    if with_parts == 0:
        fail(f"every layer: no layer of input {i} has a neuron view")
    return f"every layer of input {i}: {with_parts} neuron views checked, {reasons} reasons for none shown"


READ_GROUPS = """
return [...document.querySelectorAll('#head optgroup')].map((g) => ({ label: g.label,
  options: [...g.querySelectorAll('option')].map((o) => o.value) }));
"""


def check_groups(driver, inputs):
    """Every layer of grouped heads: the selector, an overlaid group's readout, the model view's frames, the
    neuron view's shared keys and the note."""
    checked = 0
    for i, inp in enumerate(inputs):
        for layer, data_layer in enumerate(inp["layers"]):
            heads, g = len(data_layer["heads"]), data_layer.get("kv_heads", 0)
            if not g or g == heads:
                continue
            size = heads // g
            where = f"grouped heads: input {i}, layer {layer} ({data_layer['name']}), {g} key/value heads for {heads}"
            Select(driver.find_element(By.ID, "input")).select_by_value(str(i))
            Select(driver.find_element(By.ID, "layer")).select_by_value(str(layer))
            groups = driver.execute_script(READ_GROUPS)
            want = [[str(h) for h in range(c * size, (c + 1) * size)] + [str(-2 - c)] for c in range(g)]
            if [grp["options"] for grp in groups] != want or \
               any(f"key/value head {c + 1}," not in grp["label"] for c, grp in enumerate(groups)):
                fail(f"{where}: the head selector's groups are {groups}, want the heads of each key/value head {want}")
            note = driver.find_element(By.ID, "kv-groups").text
            if f"share {g} key/value head" not in note:
                fail(f"{where}: the note over the head view does not say the heads share {g}: {note!r}")
            # The last group overlaid: the readout shows its heads and no other, under its key/value head.
            c = g - 1
            Select(driver.find_element(By.ID, "head")).select_by_value(str(-2 - c))
            q = len(inp["queries"]) - 1
            ActionChains(driver).move_to_element(
                driver.find_element(By.CSS_SELECTOR, f'#head-view text.query[data-query="{q}"]')).perform()
            shown = {}
            for cell in driver.find_elements(By.CSS_SELECTOR, "#readout td.wt"):
                shown.setdefault(int(cell.get_attribute("data-head")), {})[int(cell.get_attribute("data-key"))] = float(cell.text)
            if sorted(shown) != list(range(c * size, (c + 1) * size)):
                fail(f"{where}: overlaying key/value head {c + 1}'s group shows heads {sorted(shown)}")
            for h, row in shown.items():
                for k, v in row.items():
                    if abs(v - data_layer["heads"][h][q][k]) > 5e-4 + 1e-9:
                        fail(f"{where}: head {h}, query {q}, key {k}: the readout shows {v}, the data says {data_layer['heads'][h][q][k]}")
                    checked += 1
            kv = driver.find_elements(By.CSS_SELECTOR, "#readout th.kv")
            if len(kv) != 1 or kv[0].get_attribute("data-kv") != str(c) or kv[0].get_attribute("colspan") != str(size):
                fail(f"{where}: the readout does not set the group's heads under key/value head {c + 1}")
            # The model view: this layer's thumbnails framed by key/value head.
            frames = driver.execute_script(
                "return [...document.querySelectorAll('#model-view .layer-row')][arguments[0]].querySelectorAll('.kv-group')"
                ".length ? [...[...document.querySelectorAll('#model-view .layer-row')][arguments[0]]"
                ".querySelectorAll('.kv-group')].map((f) => [...f.querySelectorAll('canvas')].map((c) => c.dataset.head)) : []",
                layer)
            if frames != [[str(h) for h in range(k * size, (k + 1) * size)] for k in range(g)]:
                fail(f"{where}: the model view frames the thumbnails as {frames}")
            # The neuron view: every head of the group shows the same keys (they read one key head).
            if "parts" in data_layer:
                keys_seen = []
                for h in range(c * size, (c + 1) * size):
                    Select(driver.find_element(By.ID, "head")).select_by_value(str(h))
                    view = driver.execute_script(READ_NEURON)
                    keys_seen.append([row["k"] for row in view["rows"]])
                    if f"key/value head {c + 1}, shared by" not in view["text"]:
                        fail(f"{where}: the neuron view of head {h + 1} does not name the key/value head it reads")
                if any(k != keys_seen[0] for k in keys_seen):
                    fail(f"{where}: the heads of key/value head {c + 1} show different keys in the neuron view")
                if [[float(v) for v in row] for row in keys_seen[0]] != data_layer["parts"][c * size]["k"]:
                    fail(f"{where}: the neuron view's keys are not the page's")
    if checked == 0:
        fail("grouped heads: the page has no layer whose heads share key/value heads (--grouped)")
    return f"grouped heads: {checked} overlaid weights of key/value groups match the data; groups in the selector, readout, model view and neuron view"


def main(page, expect_neuron, expect_gradient, every_layer=False, grouped=False):
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
                if abs(shown - want) > 5e-4 + 1e-9:  # shown to 3 decimals: off by half a unit at most
                    fail(f"input {i}, layer {layer}, head {head}, query {q}, key {k}: the page shows {shown}, its data says {want}")
                checked += 1
            focused = driver.find_elements(By.CSS_SELECTOR, "#head-view text.query.focus")
            if len(focused) != 1 or focused[0].get_attribute("data-query") != str(q):
                fail(f"hovering query {q} did not mark it")
            # Only the hovered query's lines are drawn: at most one per key.
            lines = driver.find_elements(By.CSS_SELECTOR, "#head-view line")
            if len(lines) > len(inputs[i]["keys"]):
                fail(f"hovering query {q} left {len(lines)} lines for {len(inputs[i]['keys'])} keys")

        neuron = check_neuron_view(driver, inputs, i, layer, head, expect_neuron)
        gradient = check_gradient_view(driver, inputs, i, layer, head, expect_gradient)
        extra = []
        if every_layer:
            extra.append(check_every_layer(driver, inputs, i))
        if grouped:
            extra.append(check_groups(driver, inputs))
            Select(driver.find_element(By.ID, "input")).select_by_value(str(i))

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
              f"{expected} thumbnails; {neuron}; {gradient}; " + "".join(e + "; " for e in extra) + "no console errors")
    finally:
        driver.quit()


if __name__ == "__main__":
    args = sys.argv[1:]
    flags = ("--neuron", "--gradient", "--every-layer", "--grouped")
    neuron, gradient, every_layer, grouped = (f in args for f in flags)
    args = [a for a in args if a not in flags]
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: tests/browser/explorer.py [--neuron] [--gradient] [--every-layer] [--grouped] PAGE.html", file=sys.stderr)
        sys.exit(2)
    main(args[0], neuron, gradient, every_layer, grouped)
