"""The identity memo: one value per live object, never another object's."""

from __future__ import annotations

from golf.app.memo import IdentityMemo


class Box:
    def __init__(self, value: int) -> None:
        self.value = value


def test_one_value_per_object_and_equal_objects_apart() -> None:
    made: list[int] = []

    def make(box: Box) -> int:
        made.append(box.value)
        return box.value * 10

    memo: IdentityMemo[Box, int] = IdentityMemo(make)
    a, b = Box(1), Box(1)
    assert memo(a) == 10 and memo(a) == 10
    assert memo(b) == 10
    assert made == [1, 1]


def test_bounded_and_keeps_its_objects_alive() -> None:
    memo: IdentityMemo[Box, int] = IdentityMemo(lambda box: box.value, limit=3)
    for value in range(10):
        assert memo(Box(value)) == value  # each box dies here, unless the memo keeps it (its id is never reused)
    assert len(memo._entries) <= 3
    kept = [entry[0] for entry in memo._entries.values()]
    assert all(isinstance(box, Box) for box in kept)
