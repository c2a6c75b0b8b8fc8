# The two things a newcomer runs (see README.md):
#   make shootout   the main job: every reference app under load, a report at the end
#   make test       every test
# Both install what they need first (make deps), so they work on a fresh machine.

CARGO ?= cargo
STAMPEDE := target/release/stampede

.PHONY: shootout test deps build lint fuzz app-unit-tests bench-tests

shootout: deps build
	$(STAMPEDE) run scenarios/shootout.toml

# Lint and the fuzz run come first, so the suite's tally is the last line.
test: deps lint build fuzz app-unit-tests bench-tests
	bash -o pipefail -c '$(CARGO) test --release --workspace 2>&1 | scripts/tally.sh'

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
	cd apps/rust && $(CARGO) test --release -q
	cd apps/java && mvn -q -B test
