# symmcoll: the project's, and the paper's, dependency graph.
#   make test          install missing Debian packages, build, run every CPU test
#   make experiments   simulator sweeps + committed GPU CSVs -> tables, figures, paper numbers, paper PDF
#                      (installs TeX Live through scripts/install-tex.sh)
#   make test-gpu      GPU suite (needs GPUs; run through the device tool, never in CI)
BUILD ?= build
JOBS ?= 2
PY ?= /usr/bin/python3
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all deps tex-deps build test experiments test-gpu clean

all: build

deps:
	@scripts/install-deps.sh

# TeX Live and latexmk for paper/paper.pdf: only `make experiments` needs them, never `make test`.
tex-deps:
	@scripts/install-tex.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 600

experiments: build tex-deps
	$(MAKE) -f experiments/Makefile BUILD=$(BUILD) PY=$(PY)

test-gpu:
	tests/gpu/run.sh $(BUILD)

clean:
	rm -rf $(BUILD)
