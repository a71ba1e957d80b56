"""The text check every request passes on both transports: a NUL anywhere is refused, naming the field."""

from __future__ import annotations

import pytest

from golf.api.errors import ApiError
from golf.api.text import check_text
from golf.v1 import solitaire_service_pb2 as pb


def test_clean_requests_pass() -> None:
    req = pb.PlayMoveRequest(game_id="g", idempotency_key="k")
    req.move.play_column.card.code = "AH"
    check_text(req)
    check_text(pb.ListGamesRequest())


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda r: setattr(r, "game_id", "\x00"), "gameId"),
        (lambda r: setattr(r, "idempotency_key", "key\x00"), "idempotencyKey"),
        (lambda r: setattr(r.move.play_column.card, "code", "A\x00H"), "move.playColumn.card.code"),
    ],
)
def test_a_nul_is_refused_with_its_field(build: object, field: str) -> None:
    req = pb.PlayMoveRequest(game_id="g", idempotency_key="k")
    build(req)  # type: ignore[operator]
    with pytest.raises(ApiError) as err:
        check_text(req)
    assert err.value.body.field == field and err.value.http_status == 400
    assert "\x00" not in err.value.body.message


def test_maps_are_checked_keys_and_values() -> None:
    """A map's keys are text too (``map<string, int32>``), refused naming the map."""
    from golf.v1 import table_service_pb2

    req = table_service_pb2.CreateTableRequest()
    req.rules.special_values["QS"] = 40
    req.rules.powers["J"] = 1  # type: ignore[assignment]
    check_text(req)
    req.rules.special_values["Q\x00S"] = 40
    with pytest.raises(ApiError) as err:
        check_text(req)
    assert err.value.body.field == "rules.specialValues"
