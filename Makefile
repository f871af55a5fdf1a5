# pushward-bridge — the two commands of the README's quick start, and the rest of the workflow.
#   make run    install missing system packages, build, run on config.example.json
#   make test   the same set-up, then the whole test suite

SWIFT       ?= swift
CONFIG      ?= config.example.json
# Debian packages the build needs: the C libraries behind the system-library targets.
DEB_PACKAGES := libsqlite3-dev libssl-dev libmicrohttpd-dev
SAMPLE_RUN  := examples/sample-run.jsonl

.PHONY: all deps build release run test format lint bench clean

all: build

# Installs only what is missing, so a prepared machine does no network work. Needs root (or sudo).
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
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

# Until the daemon lands, `run` renders the bundled sample run through the core on the example
# configuration: the PushWard requests the bridge would make, one JSON object per line.
run: build
	$(SWIFT) run pushward-bridge render $(SAMPLE_RUN) --config $(CONFIG)

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests

lint:
	$(SWIFT) format lint --recursive Package.swift Sources Tests

clean:
	rm -rf .build
