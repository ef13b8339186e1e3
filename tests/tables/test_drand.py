"""drand quicknet rounds are checked against the chain's public key (docs/provably-fair.md,
section 1.6; tables/drand.py): real recorded rounds verify, in the platform's code and in the
page's reference code (both read here from the page), and nothing else does."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tables import drand

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "provably-fair.md").read_text()
RECORDED = json.loads((Path(__file__).parent / "drand_quicknet.json").read_text())


def page_vector() -> list[dict[str, Any]]:
    block = PAGE.split("<!-- drand-vector:begin -->")[1].split("<!-- drand-vector:end -->")[0]
    rounds: list[dict[str, Any]] = []
    for line in block.strip().splitlines():
        if line.startswith("```"):
            continue
        key, value = (part.strip() for part in line.split(":", 1))
        if key == "round":
            rounds.append({"round": int(value)})
        else:
            rounds[-1][key] = value
    return rounds


def page_reference_code() -> dict[str, Any]:
    section = PAGE.split("### 1.6 The beacon")[1].split("### 1.7")[0]
    code = section.split("```python")[1].split("```")[0]
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/provably-fair.md", "exec"), namespace)  # the page's own reference code
    return namespace


def test_the_page_gives_quicknets_public_facts_as_the_platform_uses_them() -> None:
    info = RECORDED["info"]
    assert (info["hash"], info["public_key"]) == (drand.QUICKNET_CHAIN_HASH, drand.QUICKNET_PUBLIC_KEY)
    assert (info["genesis_time"], info["period"], info["schemeID"]) == (1692803367, 3, drand.SCHEME)
    for fact in (info["hash"], info["public_key"], str(info["genesis_time"]), info["schemeID"], drand.DST.decode()):
        assert fact in PAGE


@pytest.mark.parametrize("recorded", RECORDED["rounds"], ids=lambda r: str(r["round"]))
def test_real_quicknet_rounds_verify_and_their_value_is_the_sha256_of_the_signature(recorded: dict[str, Any]) -> None:
    signature = bytes.fromhex(recorded["signature"])
    assert drand.verify_round(recorded["round"], signature)
    assert drand.randomness(signature).hex() == recorded["randomness"]
    assert not drand.verify_round(recorded["round"] + 1, signature)  # not another round's


def test_forged_and_malformed_signatures_never_verify() -> None:
    good = RECORDED["rounds"][0]
    signature = bytearray(bytes.fromhex(good["signature"]))
    signature[-1] ^= 1
    assert not drand.verify_round(good["round"], bytes(signature))
    assert not drand.verify_round(good["round"], b"\x00" * 48)
    assert not drand.verify_round(good["round"], b"short")
    other_key = "a0b862a7527fee3a731bcb59280ab6abd62d5c0b6ea03dc4ddf6612fdfc9d01f01c31542541771903475eb1ec6615f8d"
    assert not drand.verify_round(good["round"], bytes.fromhex(good["signature"]), other_key + "0" * 96)


def test_the_pages_vector_and_reference_code_agree_with_the_platform() -> None:
    vector = page_vector()
    assert len(vector) >= 3
    recorded = {r["round"]: r for r in RECORDED["rounds"]}
    reference = page_reference_code()
    for item in vector:
        signature = bytes.fromhex(item["signature"])
        assert hashlib.sha256(signature).hexdigest() == item["randomness"]
        assert reference["beacon_value"](signature).hex() == item["randomness"]
        assert reference["drand_round_valid"](item["round"], signature) is True
        assert reference["drand_round_valid"](item["round"] + 1, signature) is False
        assert drand.verify_round(item["round"], signature)
        if item["round"] in recorded:
            assert recorded[item["round"]]["signature"] == item["signature"]


def test_a_round_verifies_in_a_few_milliseconds() -> None:
    good = RECORDED["rounds"][0]
    signature = bytes.fromhex(good["signature"])
    start = time.perf_counter()
    for _ in range(10):
        assert drand.verify_round(good["round"], signature)
    assert (time.perf_counter() - start) / 10 < 0.25  # measured 3-8 ms on the shared machine
