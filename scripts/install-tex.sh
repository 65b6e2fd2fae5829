#!/usr/bin/env bash
# Installs the Debian 12 packages that build paper/paper.pdf, only those missing. Called by
# `make experiments` (never by `make test`, which needs no TeX); safe to run again.
#   texlive-latex-base         pdflatex, bibtex, article, geometry, graphicx, tabularx, url, hyperref
#   texlive-latex-recommended  booktabs, microtype
#   texlive-fonts-recommended  the Times / Helvetica / Courier Type 1 fonts (mathptmx, helvet, courier)
#   latexmk                    reruns pdflatex and bibtex until references settle
set -euo pipefail
pkgs=(texlive-latex-base texlive-latex-recommended texlive-fonts-recommended latexmk)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "install-tex: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
