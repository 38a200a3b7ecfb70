#!/usr/bin/python3
"""The course's measured results, written from the lessons' references (lessons/reference/*.json,
which scripts/seeds.sh --reference records from full runs over seeds) and nowhere else:

  - the lessons table of README.md, between its "results:begin" and "results:end" markers: each
    lesson in one line, its headline as mean ± sd over the reference's seeds;
  - docs/results.md: every metric of every lesson's reference, and on how many seeds each claim held.

The time a full run takes comes from lessons/reference/full_run_times.json: the runs.json of one
`course --full` on a quiet machine, every lesson alone on it at the default threads (a reference's
seeds ran with whatever else the machine was doing, so their times say little about one run's).

  scripts/results.py           rewrite both
  scripts/results.py --check   exit 1 (naming the file) when either differs from what the
                               references say: ctest runs this, so a number quoted in the README
                               cannot drift from the runs it came from

A lesson without a reference yet is listed as such, its title read from the lesson's source.
"""
import glob
import json
import math
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def fixed(x, decimals):
    return f"{x:.{decimals}f}"


def plus_minus(mean, sd):
    """As lessons/story/text.cpp's plus_minus: the sd to two significant digits when it starts
    with 1 or 2, one from 3 up; the mean to the same place."""
    if not (sd > 0) or not math.isfinite(sd):
        return f"{rounded(mean)} ± 0"
    exponent = math.floor(math.log10(sd))
    leading = sd / 10 ** exponent
    digits = 2 if leading < 2.95 else 1
    if exponent < -4:  # fixed notation would be all zeros
        return f"{mean:.1e} ± {sd:.{digits - 1}e}"
    decimals = min(max(digits - 1 - exponent, 0), 8)
    return f"{fixed(mean, decimals)} ± {fixed(sd, decimals)}"


def rounded(x):
    """Three significant digits, as a table shows a single number."""
    if x == 0 or not math.isfinite(x):
        return str(x)
    if abs(x) >= 1e5 or abs(x) < 1e-3:
        return f"{x:.2e}"
    decimals = max(0, 2 - math.floor(math.log10(abs(x))))
    return fixed(x, decimals)


def lessons():
    """Every lesson of the course: lessons/NN_name.cpp."""
    names = [os.path.basename(p)[:-4] for p in glob.glob(os.path.join(ROOT, "lessons", "[0-9][0-9]_*.cpp"))]
    return sorted(names)


def source_title(lesson):
    """The title in the lesson's LessonInfo, for a lesson without a reference yet."""
    text = open(os.path.join(ROOT, "lessons", lesson + ".cpp"), encoding="utf-8").read()
    # LessonInfo info{"NN_name", "Title", ...} or run_lesson({"NN_name", "Title", ...}, ...)
    m = re.search(r'\{\s*"' + re.escape(lesson) + r'"\s*,\s*"((?:[^"\\]|\\.)*)"', text)
    return m.group(1).replace('\\"', '"') if m else lesson


def reference(lesson):
    path = os.path.join(ROOT, "lessons", "reference", lesson + ".json")
    return json.load(open(path, encoding="utf-8")) if os.path.exists(path) else None


def full_run_times():
    """lessons/reference/full_run_times.json, or None: the quiet full run's seconds of each lesson."""
    path = os.path.join(ROOT, "lessons", "reference", "full_run_times.json")
    if not os.path.exists(path):
        return None
    times = json.load(open(path, encoding="utf-8"))
    if times.get("mode") != "full":
        raise SystemExit(f"results: {os.path.relpath(path, ROOT)} is not from a full run (mode {times.get('mode')!r})")
    times["seconds"] = {r["id"]: r["seconds"] for r in times["runs"] if r["status"] == "ok"}
    return times


def minutes_text(seconds):
    """A run's length as a reader plans for it: "0.2 s", "45 s", "7.5 min"."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def seeds_text(ref):
    return ", ".join(str(s) for s in ref["seeds"])


def readme_table():
    times = full_run_times()
    rows = ["| # | lesson | headline of the full run: mean ± sd over seeds ([every number](docs/results.md)) | full run |",
            "| --- | --- | --- | --- |"]
    for lesson in lessons():
        took = minutes_text(times["seconds"][lesson]) if times and lesson in times["seconds"] else "—"
        ref = reference(lesson)
        number, name = lesson[:2], lesson[3:]
        if ref is None:
            rows.append(f"| {number} | [{source_title(lesson)}](lessons/{lesson}.cpp) | full-run reference not recorded yet | {took} |")
            continue
        h = ref.get("headline", "")
        m = ref["metrics"].get(h)
        head = f"`{h}` {plus_minus(m['mean'], m['sd'])} (seeds {seeds_text(ref)})" if m else "no headline metric"
        rows.append(f"| {number} | [{ref.get('title') or name}](lessons/{lesson}.cpp) | {head} | {took} |")
    if times:
        loads = [r["load_average_at_start"] for r in times["runs"] if "load_average_at_start" in r]
        load = (f", load average {min(loads):.1f} to {max(loads):.1f} as each started"
                if loads and len(loads) == len(times["runs"]) else "")
        total = sum(r["seconds"] for r in times["runs"])
        rows += ["", f"Full run: one run of seed {times['seed']} at {times['threads']} threads with nothing else running "
                     f"({times['machine']}, {times['date']}{load}), the whole course in {minutes_text(total)}; "
                     f"`build/bin/course --full` writes the same times to `out/runs.json`."]
    return "\n".join(rows)


def results_page():
    out = ["# Measured results",
           "",
           "Every number here is the mean ± sd (sample standard deviation), min and max of a lesson's full runs",
           "over the seeds named, as `scripts/seeds.sh --reference NN` recorded them in",
           "`lessons/reference/NN_name.json`; `scripts/results.py` writes this page from those files (ctest",
           "checks that it is up to date). Each lesson's book page shows the same reference beside the",
           "learner's own run. The machine is named: another CPU trains to slightly different digits.",
           ""]
    times = full_run_times()
    for lesson in lessons():
        ref = reference(lesson)
        out.append(f"## {lesson}")
        out.append("")
        if ref is None:
            out += [f"{source_title(lesson)}. No full-run reference recorded yet.", ""]
            continue
        secs = ref.get("seconds", {})
        alone = ""
        if times and lesson in times["seconds"]:
            alone = (f" Alone on a quiet machine ({times['machine']}, {times['date']}, seed {times['seed']}, "
                     f"{times['threads']} threads): {minutes_text(times['seconds'][lesson])}.")
        out.append(f"{ref.get('title', '')}. Full runs, seeds {seeds_text(ref)}, on {ref.get('machine', 'an unnamed machine')}, "
                   f"{ref.get('date', '')}, {ref.get('threads', 1)} thread(s): "
                   f"{plus_minus(secs.get('mean', 0), secs.get('sd', 0))} s a run, with whatever else ran beside them.{alone}")
        out.append("")
        out.append("| metric | mean ± sd | min | max |")
        out.append("| --- | --- | --- | --- |")
        headline = ref.get("headline", "")
        names = sorted(ref["metrics"], key=lambda n: (n != headline, n))
        for n in names:
            m = ref["metrics"][n]
            label = f"**{n}** (headline)" if n == headline else n
            out.append(f"| {label} | {plus_minus(m['mean'], m['sd'])} | {rounded(m['min'])} | {rounded(m['max'])} |")
        claims = ref.get("claims", {})
        if claims:
            held_everywhere = [c for c, v in claims.items() if v["held"] == v["of"]]
            others = [f"`{c}` {v['held']} of {v['of']} ({v['expect']})" for c, v in sorted(claims.items()) if v["held"] != v["of"]]
            out.append("")
            out.append(f"Claims: {len(held_everywhere)} of {len(claims)} held on every seed"
                       + ("; " + ", ".join(others) if others else "") + ".")
        out.append("")
    return "\n".join(out)


def readme_with(table, readme):
    start, stop = readme.find(BEGIN), readme.find(END)
    if start < 0 or stop < start:
        raise SystemExit(f"results: README.md has no '{BEGIN}' ... '{END}' block")
    return readme[:start + len(BEGIN)] + "\n" + table + "\n" + readme[stop:]


def main(argv):
    if argv not in ([], ["--check"]):
        print("usage: scripts/results.py [--check]", file=sys.stderr)
        return 2
    readme_path, page_path = os.path.join(ROOT, "README.md"), os.path.join(ROOT, "docs", "results.md")
    readme = open(readme_path, encoding="utf-8").read()
    wanted = {readme_path: readme_with(readme_table(), readme), page_path: results_page()}
    stale = []
    for path, text in wanted.items():
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if current == text:
            continue
        if argv == ["--check"]:
            stale.append(os.path.relpath(path, ROOT))
        else:
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)  # never a half-written file
            print(f"results: wrote {os.path.relpath(path, ROOT)}")
    if stale:
        print("results: " + " and ".join(stale) + " differ from lessons/reference/*.json; run scripts/results.py",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
