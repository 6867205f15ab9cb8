"""forge_runtime.digest must give exactly hashlib's SHA-256."""

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from forge_runtime import digest


@given(st.binary(max_size=4096))
def test_sha256_hex_is_hashlibs(data):
    assert digest.sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_sha256_hex_of_known_inputs():
    assert digest.sha256_hex(b"") == \
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert digest.sha256_hex(b"abc" * 100000) == hashlib.sha256(b"abc" * 100000).hexdigest()
