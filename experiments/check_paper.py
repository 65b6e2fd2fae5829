#!/usr/bin/python3
"""check_paper.py paper/paper.tex: what LaTeX would catch, for machines without LaTeX.

  - every \\input{...} and \\includegraphics{...} names a file that exists (relative to the paper;
    an \\includegraphics inside \\IfFileExists for the same file is allowed to be missing);
  - every \\symm... macro used in the paper (or in the generated files it inputs) is defined by a
    \\newcommand in one of them: the numbers come from paper/generated/numbers.tex, and a macro the
    scripts no longer write must fail here, not silently in someone else's pdflatex run;
  - no \\newcommand is defined twice;
  - every \\cite key has an entry in the \\bibliography file(s), which exist.
Exit 1 with one line per problem; prints a one-line summary otherwise.
"""

import os
import re
import sys

INPUT = re.compile(r"\\input\{([^}]*)\}")
GRAPHIC = re.compile(r"\\includegraphics(?:\[[^]]*\])?\{([^}]*)\}")
GUARDED = re.compile(r"\\IfFileExists\{([^}]*)\}")
DEFINE = re.compile(r"\\(?:re)?newcommand\{?\\([A-Za-z]+)\}?")
USE = re.compile(r"\\(symm[A-Za-z]*)")
CITE = re.compile(r"\\cite[tp]?\*?(?:\[[^]]*\])?\{([^}]*)\}")
BIBLIOGRAPHY = re.compile(r"\\bibliography\{([^}]*)\}")
BIBKEY = re.compile(r"^\s*@\w+\s*\{\s*([^,\s]+)\s*,", re.M)


def strip_comments(text):
    return re.sub(r"(?<!\\)%.*", "", text)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    root = os.path.dirname(os.path.abspath(argv[1]))
    problems, texts, seen = [], [], set()

    def load(path, origin):
        full = os.path.join(root, path if path.endswith(".tex") else path + ".tex")
        if full in seen:
            return
        if not os.path.exists(full):
            problems.append("%s: \\input{%s}: no such file" % (origin, path))
            return
        seen.add(full)
        text = strip_comments(open(full).read())
        texts.append((os.path.relpath(full, root), text))
        for p in INPUT.findall(text):
            load(p, os.path.relpath(full, root))

    load(os.path.basename(argv[1]), "-")
    defined = {}
    for name, text in texts:
        guarded = set(GUARDED.findall(text))
        for g in GRAPHIC.findall(text):
            if not os.path.exists(os.path.join(root, g)) and g not in guarded:
                problems.append("%s: \\includegraphics{%s}: no such file" % (name, g))
        for m in DEFINE.findall(text):
            if m in defined:
                problems.append("%s: \\%s defined again (first in %s)" % (name, m, defined[m]))
            defined.setdefault(m, name)
    used = 0
    for name, text in texts:
        for m in sorted(set(USE.findall(DEFINE.sub("", text)))):
            used += 1
            if m not in defined:
                problems.append("%s: \\%s is used but never defined" % (name, m))
    keys, cited = set(), 0
    for name, text in texts:
        for bib in (b.strip() for m in BIBLIOGRAPHY.findall(text) for b in m.split(",")):
            path = os.path.join(root, bib if bib.endswith(".bib") else bib + ".bib")
            if not os.path.exists(path):
                problems.append("%s: \\bibliography{%s}: no such file" % (name, bib))
            else:
                keys |= set(BIBKEY.findall(open(path).read()))
    for name, text in texts:
        for key in (k.strip() for m in CITE.findall(text) for k in m.split(",")):
            cited += 1
            if key not in keys:
                problems.append("%s: \\cite{%s}: no such bibliography entry" % (name, key))
    if problems:
        sys.stderr.write("".join("check_paper.py: %s\n" % p for p in problems))
        sys.exit(1)
    print("check_paper.py: %d files, %d uses of \\symm macros (distinct per file), all defined; every \\input and "
          "figure exists; %d citations, all in the bibliography" % (len(texts), used, cited))


if __name__ == "__main__":
    main(sys.argv)
