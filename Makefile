# The two things a newcomer runs (see README.md):
#   make shootout   the main job: every reference app under load, a report at the end
#   make test       every test
# Both install what they need first (make deps), so they work on a fresh machine.

CARGO ?= cargo
STAMPEDE := target/release/stampede

.PHONY: shootout test deps build lint fuzz app-unit-tests grpc-app-unit-tests bench-tests

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

# The gRPC reference apps' own unit tests (apps/grpc/README.md): the answer
# computed from the request, the stream count, an unknown method, a deadline.
# Apart from app-unit-tests and `make test`: from a fresh clone, building
# tonic and grpc-java's test classpath takes minutes more than the rest.
grpc-app-unit-tests: deps
	cd apps/grpc/go && go generate && go test ./...
	node --test apps/grpc/node/
	cd apps/grpc/python && python3 -m grpc_tools.protoc -I ../../../contracts/grpc --python_out=. --grpc_python_out=. bench.proto && python3 -m unittest -q
	cd apps/grpc/rust && CARGO_TARGET_DIR=target $(CARGO) test --release -q
	cd apps/grpc/java && mvn -q -B test
