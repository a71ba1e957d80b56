"""Helpers of the deployment tier: the Helm chart rendered by Helm's own engine, and the Dockerfile read as the
image builder reads it (stages, COPY, ENV, ENTRYPOINT/CMD, HEALTHCHECK)."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "golf"
VALUES_FILES = sorted((CHART / "ci").glob("*-values.yaml"))
DOCKERFILE = ROOT / "Dockerfile"


def helm() -> Any:
    """Helm's engine (helm-python-sdk, Linux x86-64 wheels); the tests skip where it cannot be installed."""
    return pytest.importorskip("helm_python.chart", reason="helm-python-sdk is only built for Linux x86-64")


def load_values(path: Path) -> dict[str, Any]:
    values: dict[str, Any] = yaml.safe_load(path.read_text()) or {}
    return values


def render(values: dict[str, Any], name: str = "rel", namespace: str = "games") -> list[dict[str, Any]]:
    """Every manifest ``helm install`` would send (hooks included), parsed."""
    manifests = helm().Chart.load(str(CHART)).render(values=values, name=name, namespace=namespace, is_install=True)
    docs = []
    for template, text in sorted(manifests.items()):
        if template.endswith(".yaml"):
            docs.extend(d for d in yaml.safe_load_all(text) if d)
    return docs


def one(docs: list[dict[str, Any]], kind: str, name_suffix: str = "") -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"].endswith(name_suffix)]
    assert len(found) == 1, f"expected one {kind} *{name_suffix}, got {[d['metadata']['name'] for d in found]}"
    return found[0]


def container_env(docs: list[dict[str, Any]], container: dict[str, Any], secrets: dict[str, str]) -> dict[str, str]:
    """The container's environment as Kubernetes builds it: envFrom ConfigMaps, then env (values or Secret
    keys; ``secrets`` stands in for Secrets that live outside the chart)."""
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        cm = one(docs, "ConfigMap", source["configMapRef"]["name"])
        env.update({k: str(v) for k, v in cm["data"].items()})
    rendered = {d["metadata"]["name"]: d.get("stringData", {}) for d in docs if d["kind"] == "Secret"}
    for item in container.get("env", []):
        if "value" in item:
            env[item["name"]] = str(item["value"])
            continue
        ref = item["valueFrom"]["secretKeyRef"]
        data = rendered.get(ref["name"], {})
        key = f"{ref['name']}/{ref['key']}"
        if ref["key"] in data:
            env[item["name"]] = data[ref["key"]]
        elif key in secrets:
            env[item["name"]] = secrets[key]
        else:
            assert ref.get("optional"), f"{item['name']}: no Secret {key}"
    return env


@dataclass
class Stage:
    name: str
    workdir: str = "/"
    env: dict[str, str] = field(default_factory=dict)
    copies: list[tuple[str | None, str, str]] = field(default_factory=list)
    """(from stage or None for the build context, source, destination)"""
    runs: list[str] = field(default_factory=list)
    entrypoint: list[str] = field(default_factory=list)
    cmd: list[str] = field(default_factory=list)
    healthcheck: list[str] = field(default_factory=list)
    expose: list[int] = field(default_factory=list)
    user: str = ""


def _instructions(text: str) -> list[tuple[str, str]]:
    lines, current = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        current += line[:-1] + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            word, _, rest = current.partition(" ")
            lines.append((word.upper(), rest.strip()))
            current = ""
    return lines


def _env_pairs(rest: str, env: dict[str, str]) -> dict[str, str]:
    out = {}
    for pair in shlex.split(rest):
        key, _, value = pair.partition("=")
        for k, v in {**env, **out}.items():
            value = value.replace(f"${k}", v)
        out[key] = value
    return out


def dockerfile() -> list[Stage]:
    """The Dockerfile's stages, in order (ARG defaults substituted)."""
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for word, rest in _instructions(DOCKERFILE.read_text()):
        if word == "ARG" and not stages:
            key, _, value = rest.partition("=")
            args[key] = value
        elif word == "FROM":
            parts = rest.split()
            stages.append(Stage(parts[2] if len(parts) > 2 else ""))
        elif word == "WORKDIR":
            stages[-1].workdir = rest
        elif word == "ENV":
            stages[-1].env.update(_env_pairs(rest, stages[-1].env))
        elif word == "COPY":
            parts = rest.split()
            source = parts[0].split("=", 1)[1] if parts[0].startswith("--from=") else None
            paths = parts[1:] if source else parts
            for src in paths[:-1]:
                stages[-1].copies.append((source, src, paths[-1]))
        elif word == "RUN":
            stages[-1].runs.append(rest)
        elif word in ("ENTRYPOINT", "CMD"):
            setattr(stages[-1], word.lower(), json.loads(rest))
        elif word == "HEALTHCHECK":
            stages[-1].healthcheck = json.loads(rest[rest.index("CMD") + 3 :])
        elif word == "EXPOSE":
            stages[-1].expose = [int(p) for p in rest.split()]
        elif word == "USER":
            stages[-1].user = rest
    return stages
