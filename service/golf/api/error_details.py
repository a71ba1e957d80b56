"""The standard details of a refusal (Google's error model, ``google.rpc.error_details``), built once for both
transports: gRPC packs them into the ``google.rpc.Status`` of ``grpc-status-details-bin`` (followed by the whole
``golf.v1.Error``); REST sends them in the ``Error`` body's ``details``, each in proto3 JSON with its ``@type``."""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message

# Imported for its types as much as for its classes: proto3 JSON writes (and reads) an Any only for a type in the
# descriptor pool, and this import puts ErrorInfo, BadRequest and RetryInfo there.
from google.rpc import error_details_pb2

from golf.api.errors import ApiError, Violation
from golf.v1 import errors_pb2

ERROR_DOMAIN = "golf.v1"
"""``ErrorInfo.domain`` of every refusal: the reasons are those of ``golf.v1.ErrorReason``."""
_PREFIX = "ERROR_REASON_"


def standard_details(failure: ApiError) -> list[Message]:
    """``ErrorInfo`` (the reason without its ``ERROR_REASON_`` prefix, our domain, ``metadata.field``),
    ``BadRequest`` with a field violation for each rule an invalid argument broke, and ``RetryInfo`` when the client
    should wait: in this order, each only when it applies (``ErrorInfo`` always)."""
    body = failure.body
    info = error_details_pb2.ErrorInfo(
        reason=errors_pb2.ErrorReason.Name(body.reason).removeprefix(_PREFIX), domain=ERROR_DOMAIN
    )
    if body.field:
        info.metadata["field"] = body.field
    details: list[Message] = [info]
    if body.field and failure.code == grpc.StatusCode.INVALID_ARGUMENT:
        broken = failure.violations or [Violation(body.field, body.message)]
        violations = [
            error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description, reason=v.rule)
            for v in broken
        ]
        details.append(error_details_pb2.BadRequest(field_violations=violations))
    if failure.retry_after is not None:
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromNanoseconds(int(failure.retry_after * 1e9))
        details.append(retry)
    return details


def pack(details: list[Message]) -> list[any_pb2.Any]:
    """Each message as a ``google.protobuf.Any`` (type URL ``type.googleapis.com/<full name>``)."""
    packed = []
    for detail in details:
        one = any_pb2.Any()
        one.Pack(detail)
        packed.append(one)
    return packed


def rest_body(failure: ApiError) -> errors_pb2.Error:
    """The REST body of a refusal: its ``Error`` with the standard details (a copy: ``failure.body`` is what gRPC
    sends, with the details in the status instead)."""
    body = errors_pb2.Error()
    body.CopyFrom(failure.body)
    body.details.extend(pack(standard_details(failure)))
    return body
