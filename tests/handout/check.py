#!/usr/bin/env python3
"""The handout test (ctest: handout): the students' copy made by scripts/handout.sh, built from nothing.

usage: check.py SOURCE_DIR WORK_DIR

  1. scripts/handout.sh --archive writes the copy of HEAD; the archive is unpacked in a fresh folder,
     and that is what is built (what a student gets).
  2. Nothing of the solutions is inside: no file of exercises/solutions/ (the copy holds exactly the
     committed files without them), no line that registers an answer (SOLUTION / WRONG_ANSWER), and
     no distinctive line of any solutions file (a line found nowhere else in the teacher's tree).
  3. The copy configures and builds its grade (nothing else: the budget is minutes on two cores),
     defines no grade_solutions, and grade reads every exercise "not attempted", exit 0, naming each
     file it graded and when it was built.
  4. The loop a student goes through: a correct answer to one exercise (a solution taken from the
     teacher's solutions file, one whose body stands alone) written into the copy's stub; the
     copy's grade refuses the now stale build (exit 2); scripts/grade.sh rebuilds and the exercise
     PASSes; the file touched after that build, grade refuses again.

Exercises are found by globbing, as CMake finds them: a new lesson's exercises are checked too.
Exit 77 (ctest: skipped) when SOURCE_DIR is not a git clone (a copy cannot be made there).
"""
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time

SKIP = 77


def fail(msg):
    print("handout test: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def run(cmd, cwd=None, env=None, timeout=900):
    """Runs cmd, returns (exit code, stdout + stderr)."""
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace", timeout=timeout)
    return p.returncode, p.stdout


def committed(src):
    """Every committed file of HEAD, path -> text (bytes that are not UTF-8 replaced)."""
    data = subprocess.run(["git", "-C", src, "archive", "--format=tar", "HEAD"], stdout=subprocess.PIPE,
                          check=True).stdout
    out = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        for m in t.getmembers():
            if m.isfile():
                out[m.name] = t.extractfile(m).read().decode("utf-8", errors="replace")
    return out


def is_solution(path):
    return path.startswith("exercises/solutions/")


# What the handout leaves out besides the solutions: the program that grades them.
NOT_HANDED_OUT = {"exercises/grading/solutions_main.cpp"}


def distinctive(line):
    """A line worth looking for: long enough to be nobody else's by chance, and not a comment,
    an include or a brace."""
    s = line.strip()
    return len(s) >= 20 and not s.startswith(("//", "#include", "/*", "*"))


def all_lines(text):
    return {line.strip() for line in text.splitlines()}


def files_under(root):
    out = []
    for d, _, names in os.walk(root):
        for n in names:
            out.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(out)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


# ------------------------------------------------------------------ taking an answer from the solutions

DEF_START = re.compile(r"^[A-Za-z_].*?\b(\w+)\s*\(")


def definitions(text):
    """The top-level function definitions of an exercise file or a solutions file (anonymous
    namespace included: its functions start at column 0): name -> (signature, body lines)."""
    lines = text.splitlines()
    out = {}
    i = 0
    while i < len(lines):
        m = DEF_START.match(lines[i])
        if m and not lines[i].startswith(("namespace", "using", "SOLUTION", "WRONG_ANSWER", "EXERCISE", "HINT")):
            one_line = re.match(r"^(.*?\))\s*(?:const\s*)?\{(.*)\}\s*$", lines[i])
            if one_line:  # `T f(args) { return ...; }`: a whole definition on its line
                out.setdefault(m.group(1), (" ".join(one_line.group(1).split()) + " {", [one_line.group(2).strip()]))
                i += 1
                continue
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith("{") and not lines[j].rstrip().endswith(";"):
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{"):
                k = j + 1
                while k < len(lines) and lines[k] != "}":
                    k += 1
                signature = " ".join(" ".join(lines[i:j + 1]).split())
                out.setdefault(m.group(1), (signature, lines[j + 1:k]))
                i = k
        i += 1
    return out


def top_level_names(text):
    """Every name the solutions file defines at the top level: functions, constants, types."""
    names = set(definitions(text))
    for line in text.splitlines():
        for pattern in (r"^(?:struct|class|using)\s+(\w+)", r"^(?:static\s+)?(?:const|constexpr)\b[^=(]*?\b(\w+)\s*[={]"):
            m = re.match(pattern, line)
            if m:
                names.add(m.group(1))
    return names


def includes(text):
    return set(re.findall(r'^#include\s+([<"][^>"]+[>"])', text, re.M))


def pick_answer(head, lessons):
    """The first exercise (in lesson order) whose solution can be pasted into its stub as it is:
    the same signature, a stub that calls not_attempted(), a body that calls nothing else the
    solutions file defines, and headers the stub file already includes."""
    for lesson in lessons:
        if "exercises/solutions/%s.cpp" % lesson not in head:
            continue
        stub_text, sol_text = head["exercises/%s.cpp" % lesson], head["exercises/solutions/%s.cpp" % lesson]
        if not includes(sol_text) <= includes(stub_text):
            continue
        stubs, solutions = definitions(stub_text), definitions(sol_text)
        helpers = top_level_names(sol_text)
        for name in re.findall(r"^SOLUTION\((\w+)\);", sol_text, re.M):
            if name not in stubs or name not in solutions:
                continue
            (stub_sig, stub_body), (sol_sig, sol_body) = stubs[name], solutions[name]
            if stub_sig != sol_sig or not any("not_attempted();" in line for line in stub_body):
                continue
            used = set(re.findall(r"\b\w+\b", "\n".join(sol_body)))
            if used & (helpers - {name}):
                continue
            return lesson, name, stub_sig, sol_body
    fail("no exercise's solution stands alone to be pasted into its stub (every one calls a helper of its "
         "solutions file, or needs another header): the grading loop cannot be tried")


def paste_answer(text, name, body):
    """The stub file with the stub of `name` given `body` instead of not_attempted()."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = DEF_START.match(line)
        if m and m.group(1) == name:
            j = i
            while not lines[j].rstrip().endswith("{"):
                j += 1
            k = j + 1
            while lines[k] != "}":
                k += 1
            return "\n".join(lines[:j + 1] + body + lines[k:]) + "\n"
    fail("no stub of %s to write into" % name)


# ------------------------------------------------------------------ the test

def main():
    if len(sys.argv) != 3:
        print("usage: check.py SOURCE_DIR WORK_DIR", file=sys.stderr)
        return 2
    src, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if run(["git", "-C", src, "rev-parse", "--verify", "-q", "HEAD"])[0] != 0:
        print("handout test: skipped: %s is not a git clone, so no copy can be made of it" % src)
        return SKIP
    start = time.time()
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # 1. The copy, as a folder and as an archive; the archive's unpacked copy is the one built.
    code, out = run(["bash", os.path.join(src, "scripts/handout.sh"), "--out", os.path.join(work, "attnlab"), "--archive"])
    if code != 0:
        fail("scripts/handout.sh exited %d:\n%s" % (code, out))
    folder, archive = os.path.join(work, "attnlab"), os.path.join(work, "attnlab.tar.gz")
    unpacked = os.path.join(work, "student")
    os.makedirs(unpacked)
    with tarfile.open(archive) as t:
        t.extractall(unpacked)
    copy = os.path.join(unpacked, "attnlab")
    if files_under(copy) != files_under(folder):
        fail("the archive and the folder hold different files")
    leftovers = [f for f in os.listdir(work) if f.startswith(".")]
    if leftovers:
        fail("temporary files left beside the copy: %s" % leftovers)

    # 2. Nothing of the solutions inside.
    head = committed(src)
    tracked = sorted(head)
    solution_files = [f for f in tracked if is_solution(f)]
    if not solution_files:
        fail("the teacher's tree has no exercises/solutions/: nothing to check the copy against")
    expected = sorted(f for f in tracked if not is_solution(f) and f not in NOT_HANDED_OUT)
    got = files_under(copy)
    if got != expected:
        fail("the copy's files are not the committed files without the solutions: extra %s, missing %s" %
             (sorted(set(got) - set(expected))[:10], sorted(set(expected) - set(got))[:10]))
    elsewhere = set()
    for f in tracked:
        if not is_solution(f):
            elsewhere |= all_lines(head[f])
    secrets = {}
    for f in solution_files:
        lines = {s for s in all_lines(head[f]) if distinctive(s) and s not in elsewhere}
        if not lines:
            fail("%s has no line found only there: nothing to look for in the copy" % f)
        for s in lines:
            secrets[s] = f
    registers = re.compile(r"^\s*(SOLUTION|WRONG_ANSWER)\s*\(")
    for f in got:
        text = read(os.path.join(copy, f))
        for line in text.splitlines():
            if line.strip() in secrets:
                fail("%s holds a line of %s: %s" % (f, secrets[line.strip()], line.strip()))
        code_file = f.endswith((".cpp", ".hpp", ".txt", ".cmake", ".in"))
        if code_file and any(registers.match(line) for line in text.splitlines()):
            fail("%s registers an answer (SOLUTION / WRONG_ANSWER)" % f)
        if code_file and f != "exercises/grading/exercise.hpp" and re.search(r"\b(SOLUTION|WRONG_ANSWER)\(", text):
            fail("%s names SOLUTION( or WRONG_ANSWER( (only exercise.hpp, which defines them, may)" % f)
    print("handout test: the copy holds the %d committed files without the %d of exercises/solutions/ (and %s); "
          "none of the %d lines found only in the solutions is in it" %
          (len(got), len(solution_files), ", ".join(sorted(NOT_HANDED_OUT)), len(secrets)))

    # 3. Configure and build grade from nothing, as a student would (scripts/setup.sh, less apt-get).
    build = os.path.join(copy, "build")
    t0 = time.time()
    code, out = run(["cmake", "-S", copy, "-B", build, "-DCMAKE_BUILD_TYPE=Release"])
    if code != 0:
        fail("the copy does not configure:\n" + out[-3000:])
    code, out = run(["cmake", "--build", build, "--target", "help"])
    if re.search(r"\bgrade_solutions\b", out):
        fail("the copy's build defines grade_solutions")
    code, out = run(["cmake", "--build", build, "--target", "grade", "-j", "2"])
    if code != 0:
        fail("the copy's grade does not build:\n" + out[-3000:])
    print("handout test: the copy configured and built its grade in %.0f s" % (time.time() - t0))
    code, out = run(["ctest", "-N"], cwd=build)
    if "exercises_solutions" in out or "handout" in out.split():
        fail("the copy's ctest lists the solutions' or the handout's test:\n" + out)

    lessons = sorted(os.path.basename(f)[:-4] for f in tracked if re.fullmatch(r"exercises/\d\d_\w+\.cpp", f))
    count = {l: len(re.findall(r"^EXERCISE\(", head["exercises/%s.cpp" % l], re.M)) for l in lessons}
    total = sum(count.values())
    grade = os.path.join(build, "bin", "grade")
    code, out = run([grade])
    if code != 0:
        fail("grade in the fresh copy exited %d:\n%s" % (code, out))
    summary = "0 passed, 0 failed, %d not attempted" % total
    if summary not in out:
        fail("grade in the fresh copy does not say '%s':\n%s" % (summary, out[-2000:]))
    open_ones = len(re.findall(r"^\d\d\.\d+ \w+: .* not attempted$", out, re.M))
    if open_ones != total:
        fail("not every exercise reads 'not attempted' (%d of %d)" % (open_ones, total))
    if not re.search(r"^Grading the answers compiled into this grade, built \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.$", out, re.M):
        fail("grade does not say when it was built:\n" + out[:500])
    for l in lessons:
        if "== %s (exercises/%s.cpp)" % (l, l) not in out:
            fail("grade does not name the file it graded for %s" % l)
    print("handout test: grade in the copy: %s, over %d lessons' files" % (summary, len(lessons)))

    # 4. One answer written, graded through scripts/grade.sh; a stale build refused.
    lesson, name, signature, body = pick_answer(head, lessons)
    stub = os.path.join(copy, "exercises", lesson + ".cpp")
    built = os.stat(grade).st_mtime
    write_atomic(stub, paste_answer(read(stub), name, body))
    if int(os.stat(stub).st_mtime) <= int(built):  # grade compares whole seconds
        time.sleep(1.1)
        os.utime(stub)
    stale = "exercises/%s.cpp was changed after this grade was built" % lesson
    code, out = run([grade, lesson[:2]])
    if code != 2 or stale not in out or "scripts/grade.sh" not in out:
        fail("grade graded an exercise file written after it was built (exit %d):\n%s" % (code, out))
    t0 = time.time()
    code, out = run(["bash", os.path.join(copy, "scripts", "grade.sh"), lesson[:2]], cwd=work)
    passed = re.search(r"^\d\d\.\d+ %s: .* PASS$" % re.escape(name), out, re.M)
    if code != 0 or not passed or "1 passed, 0 failed, %d not attempted" % (count[lesson] - 1) not in out:
        fail("scripts/grade.sh %s after writing the solution of %s (exit %d):\n%s" % (lesson[:2], name, code, out))
    print("handout test: %s written with the teacher's solution; scripts/grade.sh %s rebuilt and graded it in "
          "%.0f s: %s" % (name, lesson[:2], time.time() - t0, passed.group(0).replace("  ", " ")))
    future = os.stat(grade).st_mtime + 60
    os.utime(stub, (future, future))
    code, out = run([grade, lesson[:2]])
    if code != 2 or stale not in out:
        fail("grade graded %s touched after its build (exit %d):\n%s" % (stub, code, out))
    print("handout test: the file touched after that build, grade refuses it (exit 2)")
    print("handout test: passed in %.0f s" % (time.time() - start))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
