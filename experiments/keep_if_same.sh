#!/bin/sh
# keep_if_same.sh FILE...: each FILE.tmp is a freshly written version of FILE. When every one
# holds the same data as its FILE (ignoring provenance: the git_sha column of a CSV, and
# "git <sha>" in '#' comment lines of a table), the new versions are dropped and every FILE
# keeps its bytes, its timestamp and the commit it names; otherwise all of them replace their
# FILEs together, so a CSV and its table always come from the same run.
# Exit status: 0 either way; 2 on bad use.
set -eu
[ $# -ge 1 ] || { echo "usage: keep_if_same.sh FILE... (FILE.tmp: the new version)" >&2; exit 2; }

# The data of a file, provenance removed, on stdout.
data() {
  case "$1" in
    *.csv|*.csv.tmp)
      awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "git_sha") skip = i }
               { line = ""; for (i = 1; i <= NF; ++i) if (i != skip) line = line (line == "" ? "" : ",") $i; print line }' "$1" ;;
    *)
      sed -E '/^#/ s/(,? git )[0-9a-f]+(-dirty)?/\1SHA/' "$1" ;;
  esac
}

for f in "$@"; do
  [ -f "$f.tmp" ] || { echo "keep_if_same.sh: $f.tmp is missing" >&2; exit 2; }
done
old=$(mktemp) new=$(mktemp)
trap 'rm -f "$old" "$new"' EXIT
same=1
for f in "$@"; do
  [ -f "$f" ] || { same=0; break; }
  data "$f" > "$old"
  data "$f.tmp" > "$new"
  cmp -s "$old" "$new" || { same=0; break; }
done
if [ $same = 1 ]; then
  for f in "$@"; do rm -f "$f.tmp"; done
  echo "experiments: unchanged (kept, with their git_sha): $*"
else
  for f in "$@"; do mv -f "$f.tmp" "$f"; done
fi
