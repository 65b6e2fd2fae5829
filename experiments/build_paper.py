#!/usr/bin/python3
"""build_paper.py [--outdir DIR] [--pdf OUT.pdf]: paper/paper.tex -> PDF through latexmk, then
checks the log for what a reader would see as broken.

  --outdir DIR   latexmk's output and auxiliary files (default: a fresh temporary directory)
  --pdf OUT      copy the finished PDF there (make experiments: paper/paper.pdf)

Fails (exit 1, one line per problem) on a LaTeX error, an undefined reference or citation, a
missing bibliography entry, or a box more than MAX_OVERFULL_PT wider than its column or page (a
table running off the page). Exit 77 (ctest's skip code) with a message when pdflatex, bibtex or
latexmk is missing: scripts/install-tex.sh installs them, `make test` never needs them.

SOURCE_DATE_EPOCH is pinned (the PDF's dates and /ID come from it), so rebuilding unchanged
inputs with the same TeX Live writes the same bytes and a committed PDF does not churn.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAPER = os.path.join(ROOT, "paper")
MAX_OVERFULL_PT = 5.0
# 2026-01-01T00:00:00Z: the paper prints no date, only the PDF's metadata carries this one.
SOURCE_DATE_EPOCH = "1767225600"
SKIP = 77

PROBLEMS = [
    (re.compile(r"^! (.*)"), "LaTeX error: %s"),
    (re.compile(r"LaTeX Warning: (Reference `[^']*' on page \d+ undefined)"), "%s"),
    (re.compile(r"LaTeX Warning: (Citation `[^']*' on page \d+ undefined)"), "%s"),
    (re.compile(r"LaTeX Warning: (There were undefined references)"), "%s"),
    (re.compile(r"LaTeX Warning: (Label `[^']*' multiply defined)"), "%s"),
    (re.compile(r"LaTeX Warning: (File `[^']*' not found)"), "%s"),
]
OVERFULL = re.compile(r"^Overfull \\[hv]box \(([0-9.]+)pt too (?:wide|high)\) (.*)")
BIB_MISSING = re.compile(r"^Warning--(I didn't find a database entry for .*)")


OPENED = re.compile(r"\((?:\./)?([^\s()]+\.tex)")


def log_problems(log_text, blg_text):
    out = []
    where = "paper.tex"  # the .tex file TeX opened last: where an overfull box's "lines" point
    for line in log_text.splitlines():
        opened = OPENED.findall(line)
        if opened:
            where = opened[-1]
        for rx, fmt in PROBLEMS:
            m = rx.search(line)
            if m:
                out.append(fmt % m.group(1))
        m = OVERFULL.match(line)
        if m and float(m.group(1)) > MAX_OVERFULL_PT:
            out.append("%s: a box %spt too wide (limit %g pt) %s" % (where, m.group(1), MAX_OVERFULL_PT, m.group(2)))
    for line in blg_text.splitlines():
        m = BIB_MISSING.match(line)
        if m:
            out.append("bibtex: " + m.group(1))
    return out


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--outdir")
    ap.add_argument("--pdf")
    args = ap.parse_args(argv[1:])
    missing = [t for t in ("pdflatex", "bibtex", "latexmk") if shutil.which(t) is None]
    if missing:
        print("build_paper.py: skipped: %s not found (scripts/install-tex.sh installs TeX Live; "
              "make experiments runs it)" % ", ".join(missing))
        return SKIP
    outdir = os.path.abspath(args.outdir) if args.outdir else tempfile.mkdtemp(prefix="symmcoll-paper-")
    os.makedirs(outdir, exist_ok=True)
    env = dict(os.environ, SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH, FORCE_SOURCE_DATE="1")
    # -gg: rebuild from scratch, so a warning of an earlier run cannot hide in a stale log.
    cmd = ["latexmk", "-pdf", "-gg", "-interaction=nonstopmode", "-halt-on-error", "-outdir=" + outdir, "paper.tex"]
    run = subprocess.run(cmd, cwd=PAPER, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, timeout=120)
    log = read(os.path.join(outdir, "paper.log"))
    problems = log_problems(log, read(os.path.join(outdir, "paper.blg")))
    if run.returncode != 0 and not problems:
        problems.append("latexmk exited %d:\n%s" % (run.returncode, run.stdout[-3000:]))
    pdf = os.path.join(outdir, "paper.pdf")
    if not problems and not os.path.exists(pdf):
        problems.append("latexmk wrote no %s" % pdf)
    if problems:
        sys.stderr.write("".join("build_paper.py: %s\n" % p for p in problems))
        sys.stderr.write("build_paper.py: full log: %s\n" % os.path.join(outdir, "paper.log"))
        return 1
    if args.pdf:
        shutil.copyfile(pdf, args.pdf)
    print("build_paper.py: wrote %s: no LaTeX error, undefined reference or citation, no box over %g pt"
          % (args.pdf or pdf, MAX_OVERFULL_PT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
