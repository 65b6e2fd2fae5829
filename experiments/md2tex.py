#!/usr/bin/python3
"""md2tex.py IN.md OUT.tex: a markdown pipe table (as `symmcoll list --markdown` prints it)
as a LaTeX tabularx as wide as the text, so the paper's algorithm table is the registry's own
listing: every column but the last at its natural width, the last (the summary) wrapped in what
is left (the paper sets the font size and column gaps around the \input)."""

import re
import sys


def cell(s):
    s = s.strip()
    s = re.sub(r"`([^`]*)`", r"\\texttt{\1}", s)
    return s.replace("_", r"\_").replace("%", r"\%").replace("&", r"\&")


def main(src, dst):
    rows = [l.strip().strip("|").split("|") for l in open(src) if l.startswith("|")]
    rows = [r for r in rows if not set("".join(r).strip()) <= set("-: ")]
    if not rows:
        sys.exit("md2tex.py: no table in %s" % src)
    n = len(rows[0])
    out = [r"\begin{tabularx}{\textwidth}{@{}%s@{}}" % ("l" * (n - 1) + r">{\raggedright\arraybackslash}X"),
           r"\toprule", " & ".join(r"\textbf{%s}" % cell(c) for c in rows[0]) + r" \\", r"\midrule"]
    out += [" & ".join(cell(c) for c in r) + r" \\" for r in rows[1:]]
    out += [r"\bottomrule", r"\end{tabularx}"]
    with open(dst, "w") as f:
        f.write("% Generated from " + src + " by experiments/md2tex.py; do not edit.\n" + "\n".join(out) + "\n")
    print("wrote", dst)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
