# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
# gr-hfstack: convenience wrapper around CMake for a fresh Debian bookworm machine.
#   make demo   install what is missing, build, run the demo
#   make test   install what is missing, build, run every test (GoogleTest + Python QA)
#   make ip-demo / make pep-demo   two stations in two network namespaces (root), the
#               commands to try them printed; Ctrl-C removes everything
# Other targets: deps, build, bench, fuzz, install, clean, format-check,
# format-check-changed (BASE=main), python-lint, check-install, deb.

BUILD_DIR ?= build
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 600
# GNU Radio's Python lives in the system interpreter, not in a pyenv or venv one.
PYTHON := /usr/bin/python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian bookworm packages needed to build, test and run (tshark: cross-check oracle;
# chromium: the HF-PEP browser test and bench/pep_web.py; python3-flake8: the Python
# lint (tests/check_python.sh); help2man: the apps' manual
# pages; direwolf (kissutil), pat: the KISS and ARDOP host-interface tests; dpkg-dev,
# debhelper, dh-python, fakeroot, lintian: make deb; openssl: the certificates of the
# XMPP S2S-over-TLS test).
DEB_PACKAGES := cmake make g++ pkg-config gnuradio-dev gnuradio python3-numpy \
	python3-pybind11 pybind11-dev libgtest-dev tshark python3-matplotlib \
	libliquid-dev libfftw3-dev python3-yaml iproute2 iputils-ping curl dnsutils \
	python3-jsonschema python3-serial python3-scipy prosody python3-slixmpp \
	python3-soundfile python3-tqdm direwolf pat zlib1g-dev libexpat1-dev nettle-dev nftables python3-pyqt5 \
	xvfb python3-hamlib libhamlib-utils chromium clang-format python3-flake8 help2man \
	dpkg-dev debhelper dh-python fakeroot lintian openssl
DEB_FUZZ_PACKAGES := clang libclang-rt-14-dev

.PHONY: all deps deps-fuzz build quiet-build test demo ip-demo pep-demo bench fuzz install clean format-check \
	format-check-changed python-lint check-install deb

all: build

# Installs only what is missing, so a machine that has everything needs no network.
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
	    | grep -q '^install ok installed$$' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	    echo "Installing Debian packages:" $$missing; \
	    $(SUDO) apt-get update -q && \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

deps-fuzz:
	@missing=$$(for p in $(DEB_FUZZ_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
	    | grep -q '^install ok installed$$' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	    $(SUDO) apt-get update -q && \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

$(BUILD_DIR)/Makefile: CMakeLists.txt
	cmake -S . -B $(BUILD_DIR) -DPYTHON_EXECUTABLE=$(PYTHON) -DENABLE_DOXYGEN=OFF

build: deps $(BUILD_DIR)/Makefile
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The demos' build: one line, the compiler's output only if it fails (the full log in
# $(BUILD_DIR)/build.log).
quiet-build: $(BUILD_DIR)/Makefile
	@echo "Building gr-hfstack in $(BUILD_DIR) (log: $(BUILD_DIR)/build.log) ..."
	@cmake --build $(BUILD_DIR) -j $(JOBS) > $(BUILD_DIR)/build.log 2>&1 || \
	    { tail -n 40 $(BUILD_DIR)/build.log; echo "Build failed: $(BUILD_DIR)/build.log"; exit 1; }

# Every test but the Debian package build (label `package`; make deb runs it).
test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE package

# Two nodes with the real STANAG 4539 modem over the Watterson channel; about 90 s.
# DEMO_ARGS passes options, e.g. DEMO_ARGS="--snr-db 12 --profile poor".
demo: deps quiet-build
	@PYTHONPATH=$(CURDIR)/$(BUILD_DIR)/test_modules $(PYTHON) apps/hfstack-node --demo \
	    --sis-port 0 --pcap $(BUILD_DIR)/node-a.pcap $(DEMO_ARGS)

# IP over HF (ip-demo) and the HF-PEP (pep-demo) between two network namespaces, on
# emulated modems; needs root. TESTBED_ARGS passes options, e.g. "--data-rate 2400".
ip-demo pep-demo: deps quiet-build
	@$(SUDO) env PYTHONPATH=$(CURDIR)/$(BUILD_DIR)/test_modules $(PYTHON) apps/hfstack-testbed \
	    $(@:-demo=) $(TESTBED_ARGS)

bench: build
	$(BUILD_DIR)/bench/bench_deframer
	$(BUILD_DIR)/bench/bench_arq_link
	$(BUILD_DIR)/bench/bench_node_engine
	$(BUILD_DIR)/bench/bench_node_ping
	PYTHONPATH=$(CURDIR)/$(BUILD_DIR)/test_modules $(PYTHON) bench/sis_conformance.py

# Every libFuzzer target (fuzz/fuzz_*.cc) in turn, FUZZ_SECONDS each, with ASan and UBSan,
# built by CMake in build-fuzz/ (see fuzz/run.sh); fails naming each target with a finding.
fuzz: deps-fuzz
	JOBS=$(JOBS) fuzz/run.sh all $(FUZZ_SECONDS)

# clang-format on every C++ file (ctest: format_check).
format-check:
	tests/check_format.sh

# flake8 on every Python file (.flake8).
python-lint:
	tests/check_python.sh $(PYTHON)

# clang-format on the lines changed since BASE, in any C++ file.
BASE ?= main
format-check-changed:
	tests/check_format.sh --changed $(BASE)

# Install to a temporary prefix and build a downstream program and a GRC C++ flowgraph
# against it (ctest: install_downstream).
check-install: build
	tests/install_downstream.sh $(BUILD_DIR) cmake "$$(command -v grcc)"

# The Debian binary packages from a copy of the checkout, checked by lintian
# (tests/build_deb.sh; ctest: deb_package): .deb files in $(BUILD_DIR)/deb.
deb: deps
	tests/build_deb.sh $(BUILD_DIR)/deb

install: build
	$(SUDO) cmake --install $(BUILD_DIR)
	$(SUDO) ldconfig

clean:
	rm -rf $(BUILD_DIR) build-fuzz
