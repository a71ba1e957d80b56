# The Golf service: REST on 8080 and gRPC on 50051, one process. Build: docker build -t golf-service .
# Settings are GOLF_* environment variables (docs/configuration.md); GOLF_DATABASE_URL is the one to set (PostgreSQL).
ARG PYTHON_IMAGE=python:3.12.8-slim-bookworm

# -- build: runtime dependencies in a venv, and the Protobuf/gRPC code generated from proto/ -----------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
COPY pyproject.toml ./
# Only the runtime dependencies listed in pyproject.toml, into the venv the final image takes as it is.
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > requirements.txt \
    && python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir --requirement requirements.txt
# The code generator lives in a venv of its own that the final image does not take.
RUN python -m venv /opt/gen \
    && /opt/gen/bin/pip install --no-cache-dir "grpcio-tools>=1.80"
COPY proto/ proto/
COPY service/golf/ service/golf/
COPY migrations/ migrations/
# The solver's compiled search (setup.py: Cython to C, built in place beside solver.py). The C compiler stays in
# this stage; the interpreter and its headers are the final image's own, so the module loads there as built.
COPY setup.py ./
# Debian's gcc of the base image's release, unpinned: a pinned version breaks with each point release.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/* \
    && /opt/gen/bin/pip install --no-cache-dir "cython>=3.1" "setuptools>=68" \
    && /opt/gen/bin/python setup.py build_ext --inplace \
    && rm -rf build service/golf/engine/solitaire/_search.c
# As `make gen` does: our code, protovalidate's rules module (buf.validate) and the contract with its comments.
RUN /opt/gen/bin/python -m grpc_tools.protoc -Iproto/vendor -Iproto --python_out=service --grpc_python_out=service \
        proto/golf/v1/*.proto \
    && /opt/gen/bin/python -m grpc_tools.protoc -Iproto/vendor --python_out=service buf/validate/validate.proto \
    && /opt/gen/bin/python -m grpc_tools.protoc -Iproto/vendor -Iproto --include_imports --include_source_info \
        --descriptor_set_out=service/golf/v1/contract.binpb proto/golf/v1/*.proto \
    && /opt/venv/bin/python -m compileall -q service/golf service/buf migrations

# -- final: the venv, the package and the migrations; no compilers, no pip cache, no tests ----------------------
FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="golf-service" \
      org.opencontainers.image.description="Golf card-game service: gRPC and REST from one Protobuf contract"
RUN groupadd --system --gid 10001 golf \
    && useradd --system --uid 10001 --gid golf --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin golf \
    && mkdir /data && chown golf:golf /data
COPY --from=build /opt/venv /opt/venv
# The repository's layout under /app: golf.adapters.db.migrate finds /app/migrations beside /app/service.
COPY --from=build /src/service/golf /app/service/golf
COPY --from=build /src/service/buf /app/service/buf
COPY --from=build /src/migrations /app/migrations
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONPATH=/app/service \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    GOLF_HOST=0.0.0.0 \
    GOLF_HTTP_PORT=8080 \
    GOLF_GRPC_PORT=50051 \
    GOLF_LOG_FORMAT=json \
    GOLF_DATABASE_URL=sqlite:////data/golf.db
WORKDIR /app
USER 10001:10001
EXPOSE 8080 50051
# Liveness over HTTP (GET /healthz on GOLF_HTTP_PORT); Kubernetes uses its own probes (helm/golf).
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 CMD ["python", "-m", "golf.adapters.probe"]
# `golf migrate` applies the migrations (the Helm chart runs it as a Job); `golf serve` serves both ports.
ENTRYPOINT ["python", "-m", "golf"]
CMD ["serve"]
