# Two commands on a fresh machine:  make run  |  make test
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PROTOS := $(wildcard proto/golf/v1/*.proto)
GEN_STAMP := service/golf/v1/.generated
BUF := node_modules/.bin/buf

.PHONY: run test install gen lint typecheck buf pytest bench clean

run: install
	$(VENV)/bin/golf migrate
	$(VENV)/bin/golf serve

test: install lint typecheck buf pytest

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

pytest: install
	$(VENV)/bin/pytest -q -n 2 --dist loadgroup

bench: install
	$(PY) bench/playmove.py

clean:
	rm -rf $(VENV) node_modules service/golf/v1/*_pb2*.py* $(GEN_STAMP) golf.db
