"""Exports of records over either transport: the gRPC stream and the REST NDJSON download, as parsed records."""

from __future__ import annotations

from google.protobuf import json_format

from golf.v1 import record_service_pb2 as rpb
from golf.v1 import record_service_pb2_grpc
from tests.e2e.support import Grpc, Rest

NDJSON = "application/x-ndjson"


def rest_export(rest: Rest, **params: str) -> list[rpb.Record]:
    with rest.http.stream("GET", "/v1/records:export", params=params) as resp:
        assert resp.status_code == 200 and resp.headers["content-type"] == NDJSON
        lines = [line for line in resp.iter_lines() if line]
    out = []
    for line in lines:
        record = rpb.Record()
        json_format.Parse(line, record)  # strict: each line one Record
        out.append(record)
    return out


def grpc_export(client: Grpc, **fields: object) -> list[rpb.Record]:
    stub = record_service_pb2_grpc.RecordServiceStub(client.channel)
    call = stub.ExportRecords(rpb.ExportRecordsRequest(**fields), metadata=client.metadata, timeout=60)  # type: ignore[arg-type]
    return [reply.record for reply in call]
