# pushward-bridge — the two commands of the README's quick start, and the rest of the workflow.
#   make run    install missing system packages, build, run on config.example.json
#   make test   the same set-up, then the whole test suite, then every request it sent to the fake
#               PushWard validated against PushWard's OpenAPI document (Tests/openapi)
#   make sanitize   the whole suite under ThreadSanitizer, then under AddressSanitizer
#   make fuzz       libFuzzer on the webhook decoder, the ingest path, merge-patch and the listeners' routes, FUZZ_SECONDS (60) each
#   make deb        dist/pushward-bridge_<version>_<arch>.deb: a static release build, needs no Swift on the host
#   make man        the man pages pushward-bridge(1) and pushward-bridge.json(5) from docs/, in .build/man

SWIFT       ?= swift
CONFIG      ?= config.example.json
# Debian packages the build needs: the C libraries behind the system-library targets.
DEB_PACKAGES := libsqlite3-dev libssl-dev libmicrohttpd-dev liblz4-dev libpq-dev
# What only the tests need: Chromium renders the status page, systemd-analyze checks the units,
# Python's jsonschema and YAML validate the requests the tests sent against PushWard's OpenAPI document.
TEST_DEB_PACKAGES := chromium systemd postgresql python3-jsonschema python3-yaml
# What `make deb` needs: libcurl's headers for the static Foundation, pandoc for the man pages,
# Debian's packaging tools, and lintian to check the result.
PACKAGE_DEB_PACKAGES := libcurl4-openssl-dev pandoc dpkg-dev lintian
# The interpreter Debian's python3-* packages install for (a python3 earlier on PATH may not have them).
PYTHON      ?= /usr/bin/python3
# Where the fake PushWard writes every request it receives (PUSHWARD_FAKE_REQUEST_LOG), for
# Tests/openapi/check_requests.py after the suite.
REQUEST_LOG ?= $(CURDIR)/.build/pushward-requests

.PHONY: all deps test-deps install-packages build release run test check-requests sanitize sanitize-suite check-units check-docs install uninstall \
	man deb deb-deps lint-deb test-deb install-config \
	format lint bench bench-limits bench-ha bench-ha-run bench-scale bench-scale-soak fuzz clean

all: build

# Installs only what is missing, so a prepared machine does no network work. Needs root (or sudo).
deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(DEB_PACKAGES)"

test-deps: deps
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(TEST_DEB_PACKAGES)"

install-packages:
	@missing=""; for p in $(PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
		$$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@command -v $(SWIFT) >/dev/null || { echo "the Swift toolchain is not on PATH (see README)"; exit 1; }

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# Starts the daemon on the example configuration (dry-run: no PushWard key): webhooks on
# 127.0.0.1:8080, the admin listener (metrics, status page) on 127.0.0.1:9090. Ctrl-C stops it.
# Feed it the sample run from another terminal:
#   swift run pushward-bridge replay examples/sample-run.jsonl --url http://127.0.0.1:8080/webhook \
#       --secret change-me-to-the-secret-of-your-github-webhook
run: build
	$(SWIFT) run pushward-bridge serve --config $(CONFIG)

test: test-deps
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift
	$(SWIFT) build --build-tests
	rm -rf "$(REQUEST_LOG)" && mkdir -p "$(REQUEST_LOG)"
	PUSHWARD_FAKE_REQUEST_LOG="$(REQUEST_LOG)" $(SWIFT) test --skip-build
	$(MAKE) --no-print-directory check-requests
	$(MAKE) --no-print-directory check-units
	$(MAKE) --no-print-directory check-docs

# Every relative link and #anchor of README.md, SECURITY.md and docs/ resolves (the checkers' own
# tests first): a page moved or a heading renamed cannot leave a reader at a dead link. And
# config.example.json, the first file a newcomer reads, names no key docs/configuration.md does
# not list, sets none it does not list, and names every key it lists.
check-docs:
	PYTHONDONTWRITEBYTECODE=1 $(PYTHON) -m unittest discover -s Tests/docs -q
	$(PYTHON) Tests/docs/check_docs.py README.md SECURITY.md docs bench/README.md
	$(PYTHON) Tests/docs/check_config_example.py config.example.json docs/configuration.md

# The checker's own tests (a known-bad request is caught), then every request the suite sent to
# the fake PushWard against the OpenAPI document and its overlay: any violation fails.
check-requests:
	PYTHONDONTWRITEBYTECODE=1 $(PYTHON) -m unittest discover -s Tests/openapi -q
	$(PYTHON) Tests/openapi/check_requests.py "$(REQUEST_LOG)"

# The whole suite under ThreadSanitizer, then once under AddressSanitizer: no race, no memory error.
# Each builds into its own scratch path (.build/tsan, .build/asan), so .build/debug is untouched, and
# the tests that spawn pushward-bridge find it next to their resource bundle: the sanitized binary
# of the same scratch path.
#
# Every report goes to a file under <scratch>/sanitizer-reports (log_path; the sanitizer appends
# the pid), from the test runner and from every child: the children inherit *SAN_OPTIONS (the tests
# pass them through their fixed environments), and a child killed with SIGKILL has written its
# reports by then, where its stderr would have been read by no one. The target fails when a test
# fails or when that directory holds anything, and prints what it holds.
#   halt_on_error=0 (TSan): a run lists every race rather than the first; the run still fails.
#   detect_leaks=0 (ASan): LeakSanitizer reports the Swift runtime's and Foundation's caches and
#     singletons, which live as long as the process by design; this target is about races and
#     memory errors (use after free, overflows), which ASan still stops at (it halts on the first).
# A false positive inside the toolchain's own libraries (Foundation, Dispatch) goes in a
# checked-in file passed as suppressions=..., with the frames that prove it; a report with a frame
# of this project is fixed, never suppressed. TSan needs none; ASan's one is a known Foundation
# over-read (Tests/asan-suppressions.txt).
# Swift's backtracer is off under a sanitizer: on a crash the sanitizer writes the report (the
# faulting access, and what freed or owned the memory), while the backtracer reading the dead
# process's memory trips ASan itself, loses the cause, and leaves `swift test` waiting.
SANITIZE_TSAN_OPTIONS = halt_on_error=0
SANITIZE_ASAN_OPTIONS = detect_leaks=0 suppressions=$(CURDIR)/Tests/asan-suppressions.txt
sanitize: test-deps
	@$(MAKE) --no-print-directory sanitize-suite SANITIZER=thread SCRATCH=.build/tsan \
		OPTIONS_VARIABLE=TSAN_OPTIONS OPTIONS="$(SANITIZE_TSAN_OPTIONS)"
	@$(MAKE) --no-print-directory sanitize-suite SANITIZER=address SCRATCH=.build/asan \
		OPTIONS_VARIABLE=ASAN_OPTIONS OPTIONS="$(SANITIZE_ASAN_OPTIONS)"

# One sanitizer: SANITIZER, SCRATCH, OPTIONS_VARIABLE and OPTIONS come from `sanitize`.
sanitize-suite:
	$(SWIFT) build --build-tests --sanitize=$(SANITIZER) --scratch-path $(SCRATCH)
	@reports="$(CURDIR)/$(SCRATCH)/sanitizer-reports"; rm -rf "$$reports"; mkdir -p "$$reports"; \
	start=$$(date +%s); status=0; \
	env $(OPTIONS_VARIABLE)="$(OPTIONS) log_path=$$reports/report" SWIFT_BACKTRACE=enable=no \
		$(SWIFT) test --skip-build --sanitize=$(SANITIZER) --scratch-path $(SCRATCH) || status=$$?; \
	echo "$(SANITIZER) sanitizer: the suite took $$(( $$(date +%s) - start )) s, exit status $$status"; \
	if [ -n "$$(ls -A "$$reports")" ]; then \
		for file in "$$reports"/*; do echo "== $$file"; cat "$$file"; done; \
		echo "$(SANITIZER) sanitizer: $$(ls "$$reports" | wc -l) report file(s) in $$reports"; exit 1; \
	fi; \
	exit $$status

# The systemd units must verify without warnings and rate "OK" (exposure ≤ 2.0) in
# `systemd-analyze security`, the service also with the HA drop-in (deploy/pushward-bridge-ha.conf)
# appended, as systemd merges it. The unit names the installed binary; the check points it at the
# build so `verify` can see an executable.
check-units:
	@command -v systemd-analyze >/dev/null || { SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd; }
	@dir=$$(mktemp -d); \
	sed "s#/usr/local/bin/pushward-bridge#$(CURDIR)/.build/debug/pushward-bridge#" \
		deploy/pushward-bridge.service > $$dir/pushward-bridge.service; \
	cp deploy/pushward-bridge.socket $$dir/; \
	cat $$dir/pushward-bridge.service deploy/pushward-bridge-ha.conf > $$dir/pushward-bridge-ha.service; \
	out=$$(systemd-analyze verify $$dir/pushward-bridge.service $$dir/pushward-bridge.socket \
		$$dir/pushward-bridge-ha.service 2>&1); \
	if [ -n "$$out" ]; then echo "$$out"; echo "systemd-analyze verify: warnings"; rm -rf $$dir; exit 1; fi; \
	for unit in pushward-bridge pushward-bridge-ha; do \
		systemd-analyze security --offline=yes --threshold=20 $$dir/$$unit.service | tail -1 || { rm -rf $$dir; exit 1; }; \
	done; \
	rm -rf $$dir

# The man pages, from the project's own docs: docs/cli.md is pushward-bridge(1), docs/configuration.md
# pushward-bridge.json(5). Built (never committed), so they cannot fall behind the pages; the
# tests check the pages against what the binary accepts (DocumentedCommandsTests,
# DocumentedConfigurationTests).
MANDIR ?= .build/man
VERSION = $(shell sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/BridgeDaemon/Daemon.swift)
MAN_DATE = $(shell git log -1 --format=%cs 2>/dev/null || date -u +%F)
PANDOC_MAN = pandoc -s -t man --shift-heading-level-by=-1 --lua-filter packaging/manpage.lua \
	-M "header=pushward-bridge manual" -M "footer=pushward-bridge $(VERSION)" -M date=$(MAN_DATE)
man:
	@$(MAKE) --no-print-directory install-packages PACKAGES=pandoc
	mkdir -p $(MANDIR)
	$(PANDOC_MAN) -M name=pushward-bridge -M section=1 docs/cli.md -o $(MANDIR)/pushward-bridge.1
	$(PANDOC_MAN) -M name=pushward-bridge.json -M section=5 docs/configuration.md -o $(MANDIR)/pushward-bridge.json.5

# The Debian package (README, "Install from the Debian package"): a release build with the Swift
# runtime and Foundation linked in (--static-swift-stdlib; FoundationNetworking needs libcurl named),
# so the package depends on Debian libraries only. --product: the test-support target imports
# Testing, which has no static library. -z now: full RELRO, the relocations resolved at start and
# made read-only, as Debian builds its daemons. packaging/build-deb.sh assembles and builds the
# package, then lintian checks it (errors fail; the notes kept are in the README).
STATIC_BUILD = $(SWIFT) build -c release --static-swift-stdlib -Xlinker -lcurl -Xlinker -z -Xlinker now \
	--product pushward-bridge
deb-deps: deps
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(PACKAGE_DEB_PACKAGES)"

deb: deb-deps man
	$(STATIC_BUILD)
	packaging/build-deb.sh "$$($(STATIC_BUILD) --show-bin-path)/pushward-bridge" $(MANDIR) dist
	@$(MAKE) --no-print-directory lint-deb

lint-deb:
	lintian --fail-on error --display-info \
		dist/pushward-bridge_$(VERSION)_$$(dpkg --print-architecture).deb

# Installs, runs, removes and purges the package on this machine (root; packaging/test-deb.sh).
test-deb: deb
	packaging/test-deb.sh dist/pushward-bridge_$(VERSION)_$$(dpkg --print-architecture).deb

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests

lint:
	$(SWIFT) format lint --recursive Package.swift Sources Tests

# Signed deliveries per second with durable commit, and ack latency at a fixed rate (bench/README.md).
# Builds the release binary, runs the daemon on a temporary database, prints medians over 3 runs and
# writes .build/bench/latest.json. BENCH_BUILD_FLAGS (e.g. --scratch-path DIR) and BENCH_* settings
# pass through.
bench: deps
	$(SWIFT) build -c release $(BENCH_BUILD_FLAGS)
	BENCH_BIN="$$($(SWIFT) build -c release $(BENCH_BUILD_FLAGS) --show-bin-path)/pushward-bridge" bench/run.sh
	# Push economy, webhook-to-request latency, and N runs live at once against PushWard's
	# documented limits (writes .build/bench/dispatch.json and .build/bench/concurrency.json).
	"$$($(SWIFT) build -c release $(BENCH_BUILD_FLAGS) --show-bin-path)/dispatch-bench"
	@$(MAKE) --no-print-directory bench-ha-run

# N runs (3, 6, 12, 40) live at once for one person through the daemon to the fake PushWard with
# its documented limits: updates spent, preemptions, the failing run's wait for a card, the busiest
# minute of requests, the most cards ongoing (docs/pushward.md, "At six runs, at fifty cards …"). Part of
# `make bench`; about two minutes.
bench-limits: deps
	$(SWIFT) build -c release --product dispatch-bench $(BENCH_BUILD_FLAGS)
	"$$($(SWIFT) build -c release $(BENCH_BUILD_FLAGS) --show-bin-path)/dispatch-bench" --runs-at-once

# The PostgreSQL figures (bench/ha.py): ingest and ack p99 with one and two instances on one
# database, and the time from a leader's SIGKILL to the next PushWard request. Writes
# .build/bench/ha.json. Part of `make bench`; needs Debian's postgresql (installed when missing).
bench-ha: deps
	$(SWIFT) build -c release $(BENCH_BUILD_FLAGS)
	@$(MAKE) --no-print-directory bench-ha-run

bench-ha-run:
	@$(MAKE) --no-print-directory install-packages PACKAGES="postgresql"
	BENCH_BIN_DIR="$$($(SWIFT) build -c release $(BENCH_BUILD_FLAGS) --show-bin-path)" bench/ha.py

# A year of history (bench/README.md, "make bench-scale"): fills (or reuses, BENCH_SCALE_DB) a
# database with BENCH_SCALE_RUNS (1,000,000) finished runs through scale-fill, then the medians of 3:
# start to /readyz, RSS after start and over a soak at 200/s, ack p99 at 1,000/s against an empty
# database, runs list / status page / admin API times, and 90 simulated days of 10,000 runs/day.
# Writes .build/bench/scale.json. Every BENCH_SCALE_* setting passes through (bench/scale.py).
bench-scale: deps
	$(SWIFT) build -c release $(BENCH_BUILD_FLAGS)
	BENCH_BIN_DIR="$$($(SWIFT) build -c release $(BENCH_BUILD_FLAGS) --show-bin-path)" bench/scale.py

# The long soak: BENCH_SCALE_SOAK (3600) s at 200 deliveries/s on the filled database, the
# dispatcher sending to the in-repo fake PushWard; RSS, WAL and database size every minute into
# .build/bench/scale-soak.csv, drawn into bench/scale-soak.svg.
bench-scale-soak: deps
	$(SWIFT) build -c release $(BENCH_BUILD_FLAGS)
	BENCH_SCALE_ONLY=long-soak BENCH_BIN_DIR="$$($(SWIFT) build -c release $(BENCH_BUILD_FLAGS) --show-bin-path)" \
		bench/scale.py

# Fuzzing (Fuzz/fuzz.sh): builds BridgeCore and four libFuzzer targets with swiftc
# -sanitize=fuzzer,address under .build/fuzz, seeds them from the recorded fixtures and the inputs
# kept in Tests/BridgeCoreTests/Fixtures/fuzz, and runs each for FUZZ_SECONDS (default 60). Prints
# one line per target; exits non-zero if any found something (inputs in .build/fuzz/artifacts/<target>/).
# Not part of `make test`: it is open-ended work, and needs only the toolchain.
FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) Fuzz/fuzz.sh

# Installs the release binary, the units, sysusers/tmpfiles entries and an example configuration
# in the usual places (PREFIX=/usr/local, DESTDIR for packaging). Existing configuration is kept.
PREFIX ?= /usr/local
UNITDIR ?= /etc/systemd/system
install: release
	install -D -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/pushward-bridge" $(DESTDIR)$(PREFIX)/bin/pushward-bridge
	sed "s#/usr/local/bin/pushward-bridge#$(PREFIX)/bin/pushward-bridge#" deploy/pushward-bridge.service \
		| install -D -m 0644 /dev/stdin $(DESTDIR)$(UNITDIR)/pushward-bridge.service
	install -D -m 0644 deploy/pushward-bridge.socket $(DESTDIR)$(UNITDIR)/pushward-bridge.socket
	install -D -m 0644 deploy/pushward-bridge.sysusers $(DESTDIR)/usr/lib/sysusers.d/pushward-bridge.conf
	install -D -m 0644 deploy/pushward-bridge.tmpfiles $(DESTDIR)/usr/lib/tmpfiles.d/pushward-bridge.conf
	install -D -m 0644 deploy/config.production.json $(DESTDIR)$(PREFIX)/share/doc/pushward-bridge/config.example.json
	install -D -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/pushward-bridge/README.md
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then \
		systemd-sysusers pushward-bridge.conf 2>/dev/null || systemd-sysusers; \
	fi
	@$(MAKE) --no-print-directory install-config
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then \
		systemd-tmpfiles --create /usr/lib/tmpfiles.d/pushward-bridge.conf; \
		systemctl daemon-reload; \
		echo "installed: put the secrets in /etc/pushward-bridge/credentials, then systemctl enable --now pushward-bridge"; \
	fi

# The configuration, readable by the service's group: the service runs as pushward-bridge, not
# root, and a root-only config.json (0640 root:root) made it fail at start. The credentials stay
# root's (systemd hands them to the service). CONFIG_GROUP is for the tests.
CONFIG_GROUP ?= pushward-bridge
install-config:
	install -d -m 0750 $(DESTDIR)/etc/pushward-bridge
	[ -e $(DESTDIR)/etc/pushward-bridge/config.json ] || \
		install -m 0640 deploy/config.production.json $(DESTDIR)/etc/pushward-bridge/config.json
	install -d -m 0700 $(DESTDIR)/etc/pushward-bridge/credentials
	@if getent group $(CONFIG_GROUP) >/dev/null; then \
		chgrp $(CONFIG_GROUP) $(DESTDIR)/etc/pushward-bridge $(DESTDIR)/etc/pushward-bridge/config.json; \
	else \
		echo "no group $(CONFIG_GROUP) yet: chgrp $(CONFIG_GROUP) /etc/pushward-bridge /etc/pushward-bridge/config.json once it exists"; \
	fi

uninstall:
	-@[ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ] && \
		systemctl disable --now pushward-bridge.service pushward-bridge.socket 2>/dev/null; true
	rm -f $(DESTDIR)$(PREFIX)/bin/pushward-bridge $(DESTDIR)$(UNITDIR)/pushward-bridge.service \
		$(DESTDIR)$(UNITDIR)/pushward-bridge.socket $(DESTDIR)/usr/lib/sysusers.d/pushward-bridge.conf \
		$(DESTDIR)/usr/lib/tmpfiles.d/pushward-bridge.conf
	rm -rf $(DESTDIR)$(PREFIX)/share/doc/pushward-bridge
	@echo "kept /etc/pushward-bridge and /var/lib/pushward-bridge (configuration, secrets, database)"

clean:
	rm -rf .build dist
