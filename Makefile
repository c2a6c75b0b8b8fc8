# The two things a newcomer runs (see README.md):
#   make shootout   the main job: every reference app under load, a report at the end
#   make test       every test
# Both install what they need first (make deps), so they work on a fresh machine.

CARGO ?= cargo
STAMPEDE := target/release/stampede

.PHONY: shootout test deps build app-unit-tests

shootout: deps build
	$(STAMPEDE) run scenarios/shootout.toml

test: deps build app-unit-tests
	bash -o pipefail -c '$(CARGO) test --release --workspace 2>&1 | scripts/tally.sh'

build:
	$(CARGO) build --release --workspace

deps:
	@scripts/deps.sh

# The reference apps' own unit tests (the contract's test vectors per runtime).
app-unit-tests:
	cd apps/go && go test ./...
	node --test apps/node/
	cd apps/python && python3 -m unittest -q
