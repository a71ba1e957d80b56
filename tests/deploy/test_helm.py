"""The Helm chart, rendered by Helm's engine with each values file of helm/golf/ci: required fields, probes that
point at ports the container opens and at paths the service serves, Secrets that exist, hooks in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from golf.adapters.auth.tokens import TrustedIssuer
from golf.adapters.edge import Edge
from golf.adapters.health import LIVENESS
from golf.adapters.ratelimit import limits_from_settings
from golf.adapters.rest import build_rest_app
from golf.adapters.settings import Settings
from tests.deploy.support import CHART, VALUES_FILES, container_env, dockerfile, helm, load_values, one, render

SERVICE = "golf.v1.SolitaireService"
# Paths the REST app serves, whatever the RPC table holds.
SERVED_PATHS = {getattr(r, "path", "") for r in build_rest_app([], Edge(None, None)).routes}  # type: ignore[arg-type]
IDS = [p.name.removesuffix("-values.yaml") for p in VALUES_FILES]


@pytest.fixture(params=VALUES_FILES, ids=IDS)
def case(request: pytest.FixtureRequest) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    values = load_values(request.param)
    return values, render(values)


def test_values_files_exist() -> None:
    assert len(VALUES_FILES) >= 3


@pytest.mark.parametrize("path", VALUES_FILES, ids=IDS)
def test_helm_lint_strict(path: Path) -> None:
    report = helm().lint(str(CHART), load_values(path), strict=True)
    assert report["errors"] == [] and report["messages"] == [], report


def test_required_fields(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    _, docs = case
    for doc in docs:
        assert doc.get("apiVersion") and doc.get("kind"), doc
        meta = doc["metadata"]
        assert meta["name"].startswith("rel-golf"), meta
        assert meta["labels"]["app.kubernetes.io/instance"] == "rel"
    kinds = {d["kind"] for d in docs}
    assert {"Deployment", "Service", "ConfigMap"} <= kinds


def _container(docs: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    deployment = one(docs, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    return pod, container


def test_deployment(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    values, docs = case
    deployment = one(docs, "Deployment")
    pod, container = _container(docs)
    assert (
        deployment["spec"]["selector"]["matchLabels"].items()
        <= deployment["spec"]["template"]["metadata"]["labels"].items()
    )
    assert container["image"] and container["args"] == ["serve"]
    assert container["resources"]["requests"]["cpu"] and container["resources"]["requests"]["memory"]
    assert container["resources"]["limits"]["memory"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
    # The image's user is the one the pod runs as.
    final = dockerfile()[-1]
    assert final.user.split(":")[0] == str(pod["securityContext"]["runAsUser"])
    assert (deployment["spec"].get("replicas") is None) == values.get("autoscaling", {}).get("enabled", True)


def test_probes_point_at_real_ports_and_paths(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    _, docs = case
    _, container = _container(docs)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert set(ports) == {"http", "grpc"}
    env = container_env(
        docs, container, {"golf-database/url": "postgresql://x@y/z", "golf-database/token-key": "k" * 40}
    )
    # The ports the service opens (its settings) are the ports the container declares.
    assert int(env["GOLF_HTTP_PORT"]) == ports["http"]
    assert int(env["GOLF_GRPC_PORT"]) == ports["grpc"]
    for kind in ("startupProbe", "livenessProbe", "readinessProbe"):
        probe = container[kind]
        if "httpGet" in probe:
            port = probe["httpGet"]["port"]
            assert ports.get(port, port) == ports["http"], kind
            assert probe["httpGet"]["path"] in SERVED_PATHS, kind
            assert probe["httpGet"]["path"] == ("/readyz" if kind == "readinessProbe" else "/healthz")
        else:
            assert probe["grpc"]["port"] == ports["grpc"], kind
            assert probe["grpc"]["service"] == (SERVICE if kind == "readinessProbe" else LIVENESS)
        assert probe["periodSeconds"] > 0 and probe["timeoutSeconds"] > 0


def test_service_targets_container_ports(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    _, docs = case
    _, container = _container(docs)
    service = one(docs, "Service")
    names = {p["name"] for p in container["ports"]}
    assert {p["targetPort"] for p in service["spec"]["ports"]} == names
    labels = one(docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()


def test_secrets_and_migration_hook(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    values, docs = case
    _, container = _container(docs)
    existing = values.get("database", {}).get("existingSecret", "")
    env = container_env(
        docs, container, {f"{existing}/url": "postgresql://from-existing-secret", f"{existing}/token-key": "k" * 40}
    )
    assert env["GOLF_DATABASE_URL"].startswith("postgresql://")
    # Every replica gets the same signing key: the one given, the Secret's own, or a random one made once.
    assert len(env["GOLF_TOKEN_KEY"]) >= 32
    if values.get("tokenKey"):
        assert env["GOLF_TOKEN_KEY"] == values["tokenKey"]
    assert env.get("GOLF_REDIS_URL") == (values.get("redisUrl") or None)
    jobs = [d for d in docs if d["kind"] == "Job"]
    if not values.get("migrations", {}).get("enabled", True):
        assert jobs == []
        return
    (job,) = jobs
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
    (migrate,) = job["spec"]["template"]["spec"]["containers"]
    assert migrate["args"] == ["migrate"] and migrate["image"] == container["image"]
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    ref = next(e for e in migrate["env"] if e["name"] == "GOLF_DATABASE_URL")["valueFrom"]["secretKeyRef"]
    if existing:
        assert ref["name"] == existing
    else:
        # A hook runs before the release's own resources exist: its Secret must be a hook created before it.
        secret = one(docs, "Secret", "-migrate")
        hook = secret["metadata"]["annotations"]
        assert ref["name"] == secret["metadata"]["name"]
        assert int(hook["helm.sh/hook-weight"]) < int(job["metadata"]["annotations"]["helm.sh/hook-weight"])
        assert secret["stringData"][ref["key"]] == env["GOLF_DATABASE_URL"]


def test_autoscaler_and_disruption_budget(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    values, docs = case
    deployment = one(docs, "Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    hpas = [d for d in docs if d["kind"] == "HorizontalPodAutoscaler"]
    if values.get("autoscaling", {}).get("enabled", True):
        (hpa,) = hpas
        assert hpa["spec"]["scaleTargetRef"] == {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": deployment["metadata"]["name"],
        }
        assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
        assert hpa["spec"]["metrics"]
    else:
        assert hpas == []
    pdbs = [d for d in docs if d["kind"] == "PodDisruptionBudget"]
    if values.get("podDisruptionBudget", {}).get("enabled", True):
        (pdb,) = pdbs
        assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
        assert ("minAvailable" in pdb["spec"]) != ("maxUnavailable" in pdb["spec"])
    else:
        assert pdbs == []


def test_shutdown_fits_the_grace_period(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    _, docs = case
    pod, container = _container(docs)
    env = container_env(
        docs, container, {"golf-database/url": "postgresql://x@y/z", "golf-database/token-key": "k" * 40}
    )
    pause = int(container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", ["sleep", "0"])[-1])
    needed = pause + float(env["GOLF_SHUTDOWN_GRACE_SECONDS"]) + float(env["GOLF_SHUTDOWN_DRAIN_SECONDS"])
    assert pod["terminationGracePeriodSeconds"] > needed


def test_dockerfile_ports_are_the_chart_defaults() -> None:
    defaults = load_values(CHART / "values.yaml")
    assert sorted(dockerfile()[-1].expose) == sorted(defaults["ports"].values())


def test_a_database_is_required() -> None:
    with pytest.raises(Exception, match=r"database\.url"):
        render({})


def test_the_settings_the_chart_renders_are_valid(
    case: tuple[dict[str, Any], list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service reads the rendered environment without an error: rate limits parse, portals load."""
    values, docs = case
    _, container = _container(docs)
    existing = values.get("database", {}).get("existingSecret", "")
    env = container_env(docs, container, {f"{existing}/url": "postgresql://x@y/z", f"{existing}/token-key": "k" * 40})
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    limits_from_settings(settings)  # raises on a malformed limit
    issuers = [TrustedIssuer(**t.model_dump()) for t in settings.trusted_issuers]  # as bootstrap makes them
    assert [t.issuer for t in issuers] == [t["issuer"] for t in values.get("config", {}).get("trustedIssuers", [])]
    assert settings.private_issuers == values.get("config", {}).get("privateIssuers", [])
    wanted = values.get("config", {}).get("rateLimits", {}).get("address")
    assert settings.rate_limit_address == (wanted or "200/second")
