# Two commands on a fresh machine:  make run  |  make test
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PROTOS := $(wildcard proto/golf/v1/*.proto)
VENDOR_PROTOS := $(shell find proto/vendor -name '*.proto')
GEN_STAMP := service/golf/v1/.generated
CONTRACT := service/golf/v1/contract.binpb
TS_CLIENT := clients/ts/gen/.generated
BUF := node_modules/.bin/buf

.PHONY: run test install gen docs lint typecheck tscheck buf buf-breaking hadolint chromium pytest bench clean

run: install
	$(VENV)/bin/golf migrate
	$(VENV)/bin/golf serve

test: install lint typecheck tscheck buf buf-breaking hadolint pytest

install: $(STAMP) $(GEN_STAMP)

# The install also compiles the solver's search (setup.py: Cython, in place); a changed .pyx compiles it again.
$(STAMP): pyproject.toml setup.py service/golf/engine/solitaire/_search.pyx
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

# Protobuf and gRPC code is generated at install time, never committed, so it can never be stale. Beside it:
# protovalidate's rules module (buf.validate, imported by ours) and the contract as a descriptor set with its
# comments, from which the REST gateway's OpenAPI document takes each field's description. proto/vendor holds the
# other projects' files the contract imports (google.api's Python code comes from googleapis-common-protos).
$(GEN_STAMP): $(PROTOS) $(VENDOR_PROTOS) $(STAMP)
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(PY) -m grpc_tools.protoc -Iproto/vendor -Iproto \
	  --python_out=service --mypy_out=service --grpc_python_out=service --mypy_grpc_out=service $(PROTOS)
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(PY) -m grpc_tools.protoc -Iproto/vendor --python_out=service --mypy_out=service \
	  buf/validate/validate.proto
	$(PY) -m grpc_tools.protoc -Iproto/vendor -Iproto --include_imports --include_source_info \
	  --descriptor_set_out=$(CONTRACT) $(PROTOS)
	touch $(GEN_STAMP)

gen: $(GEN_STAMP) $(TS_CLIENT)

# The TypeScript client (clients/ts/README.md): generated like the Python code, never committed, with buf from the
# root buf.yaml (so buf.validate and google.api come from proto/vendor) and the protoc-gen-es of package.json.
$(TS_CLIENT): $(PROTOS) $(VENDOR_PROTOS) buf.yaml clients/ts/buf.gen.yaml $(BUF)
	rm -rf clients/ts/gen
	$(BUF) generate . --template clients/ts/buf.gen.yaml --include-imports
	touch $(TS_CLIENT)

$(BUF): package.json
	npm install --no-audit --no-fund --silent
	touch $(BUF)

# The parts of the docs pages that would drift if written by hand (the settings, the RPCs of each service, the card
# Golf presets and house rules), written again from what they describe; tests/unit/test_docs.py fails when one is stale.
docs: install
	$(PY) tools/gen_docs.py

# lint-imports: the import rules of pyproject.toml's [tool.importlinter] (layers, no import cycle, a pure table
# aggregate, an engine on the standard library alone), on the graph of golf built afresh each time.
lint: install
	$(VENV)/bin/ruff check service tests bench migrations tools
	$(VENV)/bin/ruff format --check service tests bench migrations tools
	$(VENV)/bin/lint-imports --no-cache

typecheck: install
	$(VENV)/bin/mypy
	$(VENV)/bin/mypy tools

# Type checks of our JavaScript: the TypeScript client's Node script (strict, against the generated declarations)
# and the web client's modules (against the browser's DOM).
tscheck: $(TS_CLIENT)
	node_modules/.bin/tsc -p clients/ts
	node_modules/.bin/tsc -p service/golf/web

buf: $(BUF)
	$(BUF) lint proto
	$(BUF) format --diff --exit-code proto

# API compatibility: the contract must not break apps built against the last commit of main before this change.
# On a branch that is the merge base with main; when HEAD is main itself (CI runs on a clone of main) it is HEAD's
# first parent. BUF_AGAINST=<commit> overrides it (a CI that knows the pushed range: its first commit's parent).
# Both sides are built as whole images (the contract and the files it imports from proto/vendor, which is a module
# of its own, and which earlier commits lack); only golf/ is compared.
buf-breaking: $(BUF)
	@against="$${BUF_AGAINST:-}"; \
	if [ -z "$$against" ]; then \
	  main=$$(git rev-parse -q --verify refs/heads/main || git rev-parse -q --verify refs/remotes/origin/main); \
	  if [ -n "$$main" ] && [ "$$(git rev-parse HEAD)" != "$$main" ]; then against=$$(git merge-base HEAD $$main); \
	  else against=$$(git rev-parse -q --verify 'HEAD~1^{commit}'); fi; \
	fi; \
	if [ -z "$$against" ]; then echo "buf breaking: no earlier commit to compare with"; exit 0; fi; \
	echo "buf breaking: the contract against $$against"; \
	images=$$(mktemp -d); trap 'rm -rf "$$images"' EXIT; \
	$(BUF) build . -o "$$images/now.binpb" && $(BUF) build ".git#ref=$$against" -o "$$images/then.binpb" && \
	$(BUF) breaking "$$images/now.binpb" --against "$$images/then.binpb" --exclude-path buf --exclude-path google \
	  --config '{"version": "v2", "breaking": {"use": ["FILE"]}}'

hadolint: install
	$(VENV)/bin/hadolint Dockerfile

# Debian's Chromium, for the browser test of /docs and /redoc (Playwright drives it; it never downloads a browser).
chromium:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then sudo=; elif command -v sudo >/dev/null; then sudo=sudo; \
	  else echo "chromium is missing and neither root nor sudo can install it: the browser test will skip" >&2; exit 0; fi; \
	  $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

# Two workers; each test file runs on one of them, so a module's server (tests/e2e) starts once per database. (Not
# --dist loadgroup: with pytest 9.2 pytest-xdist 3.8 no longer groups by the xdist_group mark.)
pytest: install chromium $(TS_CLIENT)
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(VENV)/bin/pytest -q -n 2 --dist loadfile

bench: install
	$(PY) bench/playmove.py

clean:
	rm -rf $(VENV) node_modules service/golf/v1/*_pb2*.py* service/buf $(CONTRACT) $(GEN_STAMP) clients/ts/gen golf.db build service/build service/golf/engine/solitaire/_search.c service/golf/engine/solitaire/_search.*.so
