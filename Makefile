# Two commands on a fresh machine:  make run  |  make test
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PROTOS := $(wildcard proto/golf/v1/*.proto)
GEN_STAMP := service/golf/v1/.generated
BUF := node_modules/.bin/buf

.PHONY: run test install gen lint typecheck buf buf-breaking hadolint pytest bench clean

run: install
	$(VENV)/bin/golf migrate
	$(VENV)/bin/golf serve

test: install lint typecheck buf buf-breaking hadolint pytest

install: $(STAMP) $(GEN_STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

# Protobuf and gRPC code is generated at install time, never committed, so it can never be stale.
$(GEN_STAMP): $(PROTOS) $(STAMP)
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(PY) -m grpc_tools.protoc -Iproto --python_out=service --mypy_out=service \
	  --grpc_python_out=service --mypy_grpc_out=service $(PROTOS)
	touch $(GEN_STAMP)

gen: $(GEN_STAMP)

$(BUF): package.json
	npm install --no-audit --no-fund --silent
	touch $(BUF)

lint: install
	$(VENV)/bin/ruff check service tests bench migrations
	$(VENV)/bin/ruff format --check service tests bench migrations

typecheck: install
	$(VENV)/bin/mypy

buf: $(BUF)
	$(BUF) lint proto
	$(BUF) format --diff --exit-code proto

# API compatibility: the contract must not break apps built against the last commit of main before this change.
# On a branch that is the merge base with main; when HEAD is main itself (CI runs on a clone of main) it is HEAD's
# first parent. BUF_AGAINST=<commit> overrides it (a CI that knows the pushed range: its first commit's parent).
buf-breaking: $(BUF)
	@against="$${BUF_AGAINST:-}"; \
	if [ -z "$$against" ]; then \
	  main=$$(git rev-parse -q --verify refs/heads/main || git rev-parse -q --verify refs/remotes/origin/main); \
	  if [ -n "$$main" ] && [ "$$(git rev-parse HEAD)" != "$$main" ]; then against=$$(git merge-base HEAD $$main); \
	  else against=$$(git rev-parse -q --verify 'HEAD~1^{commit}'); fi; \
	fi; \
	if [ -z "$$against" ]; then echo "buf breaking: no earlier commit to compare with"; exit 0; fi; \
	echo "buf breaking proto --against .git#ref=$$against"; \
	$(BUF) breaking proto --against ".git#ref=$$against,subdir=proto"

hadolint: install
	$(VENV)/bin/hadolint Dockerfile

pytest: install
	$(VENV)/bin/pytest -q -n 2 --dist loadgroup

bench: install
	$(PY) bench/playmove.py

clean:
	rm -rf $(VENV) node_modules service/golf/v1/*_pb2*.py* $(GEN_STAMP) golf.db
