# The two things a newcomer runs (see README.md):
#   make shootout   the main job: every reference app under load, a report at the end
#   make test       every test
#   make quick      the fast loop between commits (< 3 min after one build)
# Both install what they need first (make deps), so they work on a fresh machine.

CARGO ?= cargo
STAMPEDE := target/release/stampede

.PHONY: shootout test quick deps build lint fuzz app-unit-tests grpc-app-unit-tests grpc-rust-unit-tests bench-tests

shootout: deps build
	$(STAMPEDE) run scenarios/shootout.toml

# Lint comes first. scripts/test.sh then builds every test binary once (and
# with them the release `stampede` of `make build`), with the fuzz minute and
# the tonic app's tests running beside that build, runs the test binaries
# side by side (with the apps' and bench scripts' tests), then the ones that
# judge timing alone; its last line is the tally of every Rust test.
test: deps lint
	CARGO='$(CARGO)' scripts/test.sh

# The loop to run between commits, no lint: every crate's unit tests, and the
# integration tests of tests/it/ except those that start an outside program
# (QUICK_SKIP: PostgreSQL, a JVM, Chromium, a Go build of apps/go). Not here:
# tests/serial/ (it wants the machine alone), and the apps, profile, hosts
# and progress binaries (reference apps, perf, network namespaces, tmux).
# Same release profile as `make build` and `make test`: nothing built twice.
QUICK_SKIP := check::db:: run::database:: load::hdr_log:: \
	report::basics::demo_report_draws report::basics::script_in_app_name
quick:
	$(CARGO) test --release --workspace --lib --bins -q
	$(CARGO) test --release -p stampede --test it -q -- $(addprefix --skip ,$(QUICK_SKIP))

# Formatting and clippy are part of the tests: a warning fails them.
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# The response parsers under libFuzzer for a bounded minute (nightly Rust;
# scripts/fuzz.sh installs cargo-fuzz when it is missing).
fuzz:
	scripts/fuzz.sh 60

build:
	$(CARGO) build --release --workspace

deps:
	@scripts/deps.sh

# The bench scripts' arithmetic: how rounds.py takes a ratio through noise.
bench-tests:
	python3 -B -m unittest discover -s bench -p 'test_*.py'

# The reference apps' own unit tests (the contract's test vectors per runtime).
app-unit-tests:
	cd apps/go && go test ./...
	node --test apps/node/
	cd apps/python && python3 -m unittest -q
	scripts/with-build-env apps/rust $(CARGO) test --release -q
	cd apps/java && mvn -q -B test

# The gRPC reference apps' own unit tests (apps/grpc/README.md): the answer
# computed from the request, the stream count, an unknown method, a deadline,
# reflection. In `make test` (scripts/test.sh's apps lane): about 12 s from a
# fresh clone with scripts/deps.sh's dependencies (2026-11-27, busy machine).
grpc-app-unit-tests: deps
	cd apps/grpc/go && go generate && go test ./...
	node --test apps/grpc/node/
	cd apps/grpc/python && python3 -m grpc_tools.protoc -I ../../../contracts/grpc --python_out=. --grpc_python_out=. bench.proto && python3 -m unittest -q
	cd apps/grpc/java && mvn -q -B test

# The tonic app's, a job of its own in `make test` (scripts/test.sh starts it
# beside the test build: building tonic, prost and protox takes the longest).
# In the app's own release profile (thin LTO, one codegen unit: 105 core-
# seconds from clean against 93 without them: not worth a second set of
# compiled dependencies).
grpc-rust-unit-tests:
	cd apps/grpc/rust && CARGO_TARGET_DIR=target $(CARGO) test --release -q
