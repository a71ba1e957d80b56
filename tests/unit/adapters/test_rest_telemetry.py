"""FastAPI's own OpenTelemetry is turned off only when nothing would receive it: with no provider set up and no
automatic setup asked for (left on, it costs every request a look at the providers)."""

from __future__ import annotations

import pytest

from golf.adapters import rest


def test_off_when_nothing_is_set_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FASTAPI_OTEL_AUTO_CONFIGURE", raising=False)
    assert rest._fastapi_telemetry() == {"tracing": False, "metrics": False, "logs": False}


def test_as_it_comes_when_asked_to_set_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FASTAPI_OTEL_AUTO_CONFIGURE", "true")
    assert rest._fastapi_telemetry() is None


def test_as_it_comes_when_a_provider_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry import trace

    class SdkProvider(trace.NoOpTracerProvider):
        """Stands for an SDK's provider."""

    monkeypatch.delenv("FASTAPI_OTEL_AUTO_CONFIGURE", raising=False)
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: SdkProvider())
    assert rest._fastapi_telemetry() is None
