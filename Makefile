# Weft's entry points. CI (.ci/run) runs `make ci`, so `make ci` reproduces CI locally.
GO      ?= go
GOFLAGS ?=

.PHONY: run build image compose-files test test-go test-deploy test-sdk test-py test-openapi-ts test-worker-js test-ui test-agent-chat-ui soak lint openapi openapi-check docs-vendor bench bench-servers bench-js-servers bench-long ci

# exec: the server replaces the recipe's shell, so Ctrl-C and SIGTERM reach it and it stops PostgreSQL too
# (`go run` does not forward SIGTERM). Flags: make run ARGS='-addr 127.0.0.1:9000'.
run: build ## Build bin/weft and run it (managed local PostgreSQL under ./.weft unless DATABASE_URL is set)
	exec bin/weft $(ARGS)

build:
	$(GO) build -o bin/weft ./cmd/server

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)

# No Docker needed: a static binary, then the image written with go-containerregistry (deploy/image).
image: ## The server's OCI image without a container engine: dist/weft-oci (an OCI layout) and dist/weft-image.tar (docker load); VERSION=… IMAGE_ARCH=arm64 to choose
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -ldflags "-s -w -X github.com/weftdev/weft/internal/server.Version=$(VERSION)" -o dist/weft-linux-$(IMAGE_ARCH) ./cmd/server
	cd deploy && $(GO) run ./cmd/weft-image -binary ../dist/weft-linux-$(IMAGE_ARCH) -version $(VERSION) \
		-revision "$$(git rev-parse HEAD 2>/dev/null)" -oci ../dist/weft-oci -tar ../dist/weft-image.tar -tag weft:$(VERSION)

# The same two commands as deploy/compose_test.go runs on a copy of the project.
compose-files: build ## The workers' Dockerfiles docker-compose.yml builds: weft dockerfile for examples/langgraph's Python and JS graphs (Dockerfile.py, Dockerfile.js, .weft-build/; not committed)
	bin/weft dockerfile -c examples/langgraph/langgraph.json -worker python -o examples/langgraph/Dockerfile.py
	bin/weft dockerfile -c examples/langgraph/langgraph.json -worker js -o examples/langgraph/Dockerfile.js

test: test-go test-deploy test-sdk test-py test-openapi-ts test-worker-js test-ui test-agent-chat-ui soak ## Every test: Go (race detector), the official JS and Python SDK suites (real agents side by side with LangGraph's servers), clients generated from api/openapi.yaml, the JS worker, the web UI, agent-chat-ui, the 2-minute chaos soak

PY_VENV ?= sdk-tests/py/.venv

test-go: worker-js/node_modules $(PY_VENV)/.installed ## Go tests, all packages sharing one throw-away PostgreSQL cluster (weft dev's tests run the JS and Python workers)
	WEFT_TEST_PYTHON=$(abspath $(PY_VENV))/bin/python $(GO) run ./cmd/weft-testdb $(GO) test -race -count=1 ./...

worker-js/node_modules:
	cd worker-js && npm ci --no-audit --no-fund

test-deploy: worker-js/node_modules $(PY_VENV)/.installed ## The deploy module (deploy/, a Go module of its own): the server's image, docker-compose.yml, the Helm chart, the network-partition suite (root: it makes network namespaces; it runs the JS and Python workers)
	cd deploy && WEFT_TEST_PYTHON=$(abspath $(PY_VENV))/bin/python $(GO) run github.com/weftdev/weft/cmd/weft-testdb $(GO) test -count=1 ./...

test-sdk:
	cd sdk-tests && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm test

# The virtualenv of the Python suites, from pinned requirements (made again when they change), with the Python
# worker installed editable from worker-py (its dependencies are among the pins: nothing else is fetched).
$(PY_VENV)/.installed: sdk-tests/py/requirements.txt worker-py/pyproject.toml
	python3 -m venv $(PY_VENV)
	$(PY_VENV)/bin/pip install -q --disable-pip-version-check -r sdk-tests/py/requirements.txt
	$(PY_VENV)/bin/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e worker-py
	touch $@

sdk-tests/agents-js/node_modules:
	cd sdk-tests/agents-js && npm ci --no-audit --no-fund

test-py: $(PY_VENV)/.installed sdk-tests/agents-js/node_modules ## The official Python SDK (and Python clients) against real servers (sdk-tests/py: the JS agents of sdk-tests/agents-js too), the Python worker's own tests (worker-py/tests)
	PYTHONDONTWRITEBYTECODE=1 $(PY_VENV)/bin/python -m pytest -q -p no:cacheprovider worker-py/tests
	$(PY_VENV)/bin/python -m pytest -q -p no:cacheprovider sdk-tests/py

test-openapi-ts: ## A TypeScript client generated from api/openapi.yaml (openapi-typescript, openapi-fetch), type-checked and run against a real server (the Python ones and Schemathesis run in test-py)
	cd sdk-tests/openapi && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm test

test-worker-js: worker-js/node_modules sdk-tests/agents-js/node_modules ## The JS worker (worker-js): LangGraph.js graphs served through the worker API, driven by the SDK (and bench/servers.mjs --quick, which needs LangGraph.js's dev server from sdk-tests/agents-js)
	cd worker-js && npm test

test-ui: $(PY_VENV)/.installed ## The web UI and the API reference page (/docs, offline) in headless Chromium against a real server (web/test; screenshots in web/test/artifacts; a Python graph's threads through the Python worker)
	cd web/test && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && WEFT_PYTHON=$(abspath $(PY_VENV))/bin/python npm test

test-agent-chat-ui: $(PY_VENV)/.installed ## agent-chat-ui (create-agent-chat-app's Vite template, built at test time) showing a deep agent's threads served by weft dev, in headless Chromium
	cd sdk-tests/agent-chat-ui && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && WEFT_PYTHON=$(abspath $(PY_VENV))/bin/python npm test

# SOAK_ARGS='-duration 30m -seed 42 -out /tmp/soak' for a longer one (docs/soak.md).
soak: worker-js/node_modules ## Chaos soak, 2 minutes: 3 servers + Go and JS workers on one PostgreSQL, SIGKILLs and a PostgreSQL restart, then the invariants
	$(GO) run ./cmd/weft-soak -duration 2m $(SOAK_ARGS)

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd deploy && $(GO) vet ./...

openapi: ## Regenerate api/openapi.yaml from the swag annotations, then the Go client generated from it
	$(GO) run ./cmd/openapi-gen api/openapi.yaml
	$(GO) generate ./internal/apiclient

SWAGGER_UI_VERSION ?= 5.35.0

docs-vendor: ## Fetch swagger-ui-dist (npm pack) into api/reference/vendor: the page of GET /docs (api/reference/README.md)
	@tmp=$$(mktemp -d); cd $$tmp && npm pack --silent swagger-ui-dist@$(SWAGGER_UI_VERSION) >/dev/null && tar xzf swagger-ui-dist-*.tgz && cd - >/dev/null && \
	for f in swagger-ui-bundle.js swagger-ui-bundle.js.LICENSE.txt swagger-ui.css LICENSE NOTICE; do cp $$tmp/package/$$f api/reference/vendor/$$f; done; \
	rm -rf $$tmp; sha256sum api/reference/vendor/swagger-ui-bundle.js api/reference/vendor/swagger-ui.css

openapi-check: ## Fail when api/openapi.yaml or the client generated from it is stale
	@tmp=$$(mktemp); $(GO) run ./cmd/openapi-gen $$tmp >/dev/null 2>&1 || { rm -f $$tmp; echo "openapi-gen failed"; exit 1; }; \
	if ! cmp -s $$tmp api/openapi.yaml; then diff -u api/openapi.yaml $$tmp | head -40; rm -f $$tmp; echo "api/openapi.yaml is stale: run make openapi"; exit 1; fi; \
	gen=$$(mktemp); $(GO) tool oapi-codegen -config internal/apiclient/oapi-codegen.yaml $$tmp >$$gen || { rm -f $$tmp $$gen; echo "oapi-codegen failed"; exit 1; }; \
	if ! cmp -s $$gen internal/apiclient/client.gen.go; then diff -u internal/apiclient/client.gen.go $$gen | head -40; rm -f $$tmp $$gen; echo "internal/apiclient/client.gen.go is stale: run make openapi"; exit 1; fi; rm -f $$tmp $$gen

bench: ## Benchmarks: HTTP load on threads, then the Go benchmarks
	$(GO) run ./cmd/weft-load
	$(GO) test -run '^$$' -bench . -benchtime 2s ./...

AEGRA_VENV ?= worker-py/bench/.venv-aegra

# Aegra's own virtualenv for bench-servers (its dependencies do not fit the test pins).
$(AEGRA_VENV)/.installed: worker-py/bench/aegra-requirements.txt
	python3 -m venv $(AEGRA_VENV)
	$(AEGRA_VENV)/bin/pip install -q --disable-pip-version-check -r worker-py/bench/aegra-requirements.txt
	touch $@

bench-servers: build $(PY_VENV)/.installed $(AEGRA_VENV)/.installed ## Four servers side by side on the same Python graphs: langgraph dev, Aegra, weft dev (Python worker), weft in process (docs/performance.md); ARGS='--quick' for a short run
	WEFT_BIN=$(abspath bin/weft) $(PY_VENV)/bin/python worker-py/bench/bench.py --aegra-python $(abspath $(AEGRA_VENV))/bin/python $(ARGS)

bench-js-servers: build sdk-tests/agents-js/node_modules ## Weft's JS worker (weft dev) beside LangGraph.js's dev server on the same graphs (worker-js/bench/README.md); ARGS='--quick' for a short run
	WEFT_BIN=$(abspath bin/weft) node worker-js/bench/servers.mjs $(ARGS)

bench-long: ## Long threads (issue 16): storage per turn, the stock PostgresSaver side by side, reads on long threads
	$(GO) run ./cmd/weft-load -suite long

ci: lint openapi-check test
