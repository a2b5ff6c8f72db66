"""Commitments to secret deals (docs/rules.md section 9, "Commitments")."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import GameCode, InvalidCodeError, Rules
from protocol.commitment import check_commitment, commitment

CODE = "YU1-C-AAAQEAYEAUDAOCAJBIFQYDIOB4"
SALT = "00112233445566778899aabbccddeeff"


def test_a_commitment_is_sha256_of_the_code_a_colon_and_the_salt() -> None:
    expected = hashlib.sha256(f"{CODE}:{SALT}".encode()).hexdigest()
    assert commitment(CODE, SALT) == expected
    # the vector docs/rules.md gives
    assert expected == "28ca9a72228923d3daee33702e43c987cffd0a9ee538fbad4d1e596187c37bd4"
    assert commitment(GameCode.parse(CODE.lower()), SALT) == expected  # canonical code
    assert check_commitment(expected, CODE, SALT)
    assert check_commitment(expected.upper(), CODE.lower(), SALT)


def test_a_commitment_does_not_match_another_code_or_salt() -> None:
    committed = commitment(CODE, SALT)
    other_code = str(GameCode(Rules.parse("CT"), GameCode.parse(CODE).deal))
    assert not check_commitment(committed, other_code, SALT)
    assert not check_commitment(committed, CODE, SALT[:-1] + "0")
    assert not check_commitment(committed, "YU1-C-AAAAAAB", SALT)


@pytest.mark.parametrize(
    ("code", "salt"),
    [
        (CODE, SALT.upper()),  # a salt is lower-case hex
        (CODE, SALT[:-2]),
        (CODE, SALT + "00"),
        (CODE, "g" * 32),
        ("YU1-C-NOPE", SALT),
        (None, SALT),
        (CODE, None),
    ],
)
def test_malformed_parts_never_check_and_never_raise(code: object, salt: object) -> None:
    committed = commitment(CODE, SALT)
    assert check_commitment(committed, code, salt) is False  # type: ignore[arg-type]
    with pytest.raises(InvalidCodeError):
        commitment(code, salt)  # type: ignore[arg-type]


def test_check_takes_whatever_a_server_sent() -> None:
    assert not check_commitment(None, CODE, SALT)  # type: ignore[arg-type]
    assert not check_commitment("ü" * 64, CODE, SALT)
    assert not check_commitment("", CODE, SALT)


@given(st.binary(min_size=16, max_size=16), st.binary(min_size=16, max_size=16))
def test_any_code_and_salt_check(seed: bytes, salt: bytes) -> None:
    code = GameCode(Rules(), seed)
    assert check_commitment(commitment(code, salt.hex()), str(code), salt.hex())
