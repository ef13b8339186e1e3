"""Hold'em algorithm 3 (docs/provably-fair.md, section 12, "Algorithm 3"): the test vector is
read from the page and recomputed twice, with the engine's functions and with ``hashlib`` /
``hmac`` as an outsider would from the text alone."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import numpy as np
import pytest

from tables.engine import fairness
from tables.engine.cards import card_code
from tables.engine.holdem import (
    bot_rng,
    bot_stream,
    client_seed_commitment,
    deal_cards,
    deal_seed,
    freeze_digest,
    freeze_lines,
    holdem_deck,
)

PAGE = Path(__file__).resolve().parents[3] / "docs" / "provably-fair.md"


@pytest.fixture(scope="module")
def vector() -> dict[str, str]:
    text = PAGE.read_text()
    block = text.split("<!-- holdem-deal-vector:begin -->")[1].split("<!-- holdem-deal-vector:end -->")[0]
    return dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)


def _players(vector: dict[str, str]) -> list[tuple[int, str, str]]:
    return sorted(
        (int(key.removeprefix("seat_")), *value.split(" ", 1))  # type: ignore[misc]
        for key, value in vector.items()
        if key.startswith("seat_")
    )


def test_the_vector_from_the_engine(vector: dict[str, str]) -> None:
    players = _players(vector)
    assert len(players) == 3
    chain_seed = bytes.fromhex(vector["chain_seed"])
    assert hashlib.sha256(chain_seed).hexdigest() == vector["commitment"]
    seats = []
    for seat, name, client_seed in players:
        commitment = client_seed_commitment(name, client_seed)
        assert commitment == vector[f"client_seed_commitment_{seat}"]
        seats.append((seat, name, commitment))
    lines = freeze_lines(
        table_id=int(vector["table_id"]),
        number=int(vector["hand_number"]),
        chain_id=int(vector["chain_id"]),
        chain_index=int(vector["chain_index"]),
        commitment=vector["commitment"],
        button=int(vector["button"]),
        seats=seats,
        deal_round=int(vector["deal_round"]),
    )
    digest = freeze_digest(lines)
    assert digest.hex() == vector["freeze_digest"]
    v2 = fairness.hand_seed(
        chain_seed, int(vector["table_id"]), int(vector["hand_number"]), [(n, s) for _, n, s in players]
    )
    assert v2.hex() == vector["hand_seed_v2"]
    seed = deal_seed(v2, digest, bytes.fromhex(vector["beacon_value"]))
    assert seed.hex() == vector["server_seed"]
    order = [int(s) for s in vector["dealing_order"].split()]
    deal = deal_cards(holdem_deck(seed), len(order))
    for k, seat in enumerate(order):
        assert " ".join(card_code(c) for c in deal.hole[k]) == vector[f"hole_seat_{seat}"]
    assert " ".join(deal.board_codes()) == vector["board"]
    assert bot_stream(seed, 2, 4).hex() == vector["bot_block_seat_2_decision_4"]
    assert float(bot_rng(seed, 2, 4).random()) == float(vector["bot_random_seat_2_decision_4"])


def test_the_vector_from_the_text_alone(vector: dict[str, str]) -> None:
    """An outsider's recomputation with the standard library and numpy: no project code."""
    players = _players(vector)
    chain_seed = bytes.fromhex(vector["chain_seed"])
    lines = [
        "holdem-freeze/1",
        f"table:{vector['table_id']}",
        f"hand:{vector['hand_number']}",
        f"chain:{vector['chain_id']}:{vector['chain_index']}",
        f"commitment:{vector['commitment']}",
        f"button:{vector['button']}",
        f"round:{vector['deal_round']}",
        *(
            f"seat:{seat}:{name}:{hashlib.sha256(f'{name}:{seed}'.encode()).hexdigest()}"
            for seat, name, seed in players
        ),
    ]
    digest = hashlib.sha256("\n".join(lines).encode()).digest()
    assert digest.hex() == vector["freeze_digest"]
    clients = "\n".join(sorted(f"{name}:{seed}" for _, name, seed in players))
    message = f"hand\x00{vector['table_id']}\x00{vector['hand_number']}\x00".encode()
    v2 = hmac.digest(chain_seed, message + hashlib.sha256(clients.encode()).digest(), "sha256")
    seed = hmac.digest(v2, b"holdem-deal\x00" + digest + bytes.fromhex(vector["beacon_value"]), "sha256")
    assert seed.hex() == vector["server_seed"]
    block = hmac.digest(seed, b"holdem-bot\x002\x004", "sha256")
    assert block.hex() == vector["bot_block_seat_2_decision_4"]
    assert float(np.random.default_rng(int.from_bytes(block, "big")).random()) == float(
        vector["bot_random_seat_2_decision_4"]
    )


def test_every_input_moves_the_seed(vector: dict[str, str]) -> None:
    """The round's value, the digest and the algorithm-2 seed each change the hand seed; a
    client seed or a seat changes the digest."""
    v2 = bytes.fromhex(vector["hand_seed_v2"])
    digest = bytes.fromhex(vector["freeze_digest"])
    value = bytes.fromhex(vector["beacon_value"])
    seed = deal_seed(v2, digest, value)
    assert deal_seed(v2, digest, bytes(32)) != seed
    assert deal_seed(v2, bytes(32), value) != seed
    assert deal_seed(bytes(32), digest, value) != seed

    def lines(seats: list[tuple[int, str, str]]) -> list[str]:
        return freeze_lines(
            table_id=7,
            number=3,
            chain_id=1,
            chain_index=3,
            commitment="00" * 32,
            button=2,
            seats=seats,
            deal_round=1000,
        )

    one = lines([(0, "ana", client_seed_commitment("ana", "a"))])
    other = lines([(0, "ana", client_seed_commitment("ana", "b"))])
    moved = lines([(1, "ana", client_seed_commitment("ana", "a"))])
    assert len({freeze_digest(one), freeze_digest(other), freeze_digest(moved)}) == 3
    with pytest.raises(ValueError):
        deal_seed(v2, digest, b"")
    with pytest.raises(ValueError):
        client_seed_commitment("a:b", "x")
    with pytest.raises(ValueError):
        lines([(0, "a", "00"), (0, "b", "00")])
