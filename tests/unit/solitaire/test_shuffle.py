"""golf-shuffle-v1 is a specification: the same seed must give the same deal forever."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from golf.engine.cards import new_deck
from golf.engine.shuffle import commitment, new_seed, shuffled
from golf.engine.solitaire.rules import PRESETS
from golf.engine.solitaire.state import Layout


def spec_shuffle(items: list[int], seed: str) -> list[int]:
    """An independent reading of the algorithm as the module's docstring specifies it."""
    out = list(items)
    words: list[int] = []
    block = 0

    def word() -> int:
        nonlocal block
        if not words:
            digest = hashlib.sha256(seed.encode() + block.to_bytes(8, "big")).digest()
            words.extend(int.from_bytes(digest[k : k + 8], "big") for k in (24, 16, 8, 0))
            block += 1
        return words.pop()

    for i in range(len(out) - 1, 0, -1):
        n = i + 1
        while True:
            w = word()
            if w < 2**64 - 2**64 % n:
                break
        j = w % n
        out[i], out[j] = out[j], out[i]
    return out


def test_pinned_vectors_never_change() -> None:
    assert shuffled(list(range(10)), "abc") == [5, 6, 1, 8, 0, 7, 2, 4, 3, 9]
    layout = Layout.from_seed(PRESETS["standard"], "golf-test-vector")
    assert layout.start.code == "2H"
    assert " ".join(c.code for c in layout.stock) == "6S TD 7C 3D AH 8H QS 8S 7D TS 6D 5H 7S TC KS 6H"
    assert [" ".join(c.code for c in col) for col in layout.columns][:2] == ["7H AC 2D 4C 3S", "5S 3H 9D JH TH"]


@given(st.text(min_size=1, max_size=40), st.integers(min_value=0, max_value=120))
def test_matches_the_specification(seed: str, n: int) -> None:
    assert shuffled(list(range(n)), seed) == spec_shuffle(list(range(n)), seed)


@given(st.text(min_size=1, max_size=20))
def test_is_a_permutation(seed: str) -> None:
    deck = new_deck(2)
    assert sorted(shuffled(deck, seed)) == sorted(deck)


def test_seeds_are_fresh_and_long() -> None:
    seeds = {new_seed() for _ in range(100)}
    assert len(seeds) == 100
    assert all(len(s) == 32 for s in seeds)


def test_commitment_binds_seed_and_rules() -> None:
    rules = PRESETS["standard"].canonical()
    algo = "golf-shuffle-v1"
    assert commitment(algo, "a", rules) != commitment(algo, "b", rules)
    assert commitment(algo, "a", rules) != commitment(algo, "a", PRESETS["wrap"].canonical())
    assert commitment(algo, "a", rules) != commitment("pysolfc", "a", rules)
    assert commitment(algo, "a", rules) == hashlib.sha256(f"golf-shuffle-v1\na\n{rules}".encode()).hexdigest()
