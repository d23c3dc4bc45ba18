"""`profiles.base.hmac_sha256` gives the standard library's HMAC-SHA256 bytes for keys
shorter than, as long as and longer than SHA-256's 64-byte block, and messages around
it; a message given in two parts is signed as the two joined; a key's pad states kept
do not leak into another key's."""

from __future__ import annotations

import hmac
import random

import pytest

from hookproof.simulator.profiles.base import hmac_sha256


@pytest.mark.parametrize("key_len", [0, 1, 32, 63, 64, 65, 200])
@pytest.mark.parametrize("message_len", [0, 1, 55, 64, 1518, 5000])
def test_hmac_sha256_is_the_standard_librarys(key_len: int, message_len: int) -> None:
    rng = random.Random(key_len * 10_000 + message_len)
    key, message = rng.randbytes(key_len), rng.randbytes(message_len)
    assert hmac_sha256(key, message) == hmac.digest(key, message, "sha256")
    assert hmac_sha256(key, message) == hmac.digest(key, message, "sha256")  # from the kept pads


@pytest.mark.parametrize("split", [0, 1, 11, 64, 1518])
def test_a_tail_is_hashed_after_the_message(split: int) -> None:
    rng = random.Random(split)
    key, data = rng.randbytes(40), rng.randbytes(1518)
    assert hmac_sha256(key, data[:split], data[split:]) == hmac.digest(key, data, "sha256")


def test_keys_do_not_share_pads() -> None:
    message = b"1790000000.{}"
    first, second = hmac_sha256(b"whsec_a", message), hmac_sha256(b"whsec_b", message)
    assert first != second
    assert first == hmac.digest(b"whsec_a", message, "sha256")
    assert second == hmac.digest(b"whsec_b", message, "sha256")
