"""SHA-256 for the hooks' goal path, without `hashlib`.

Every charge hashes its records, the state's progress and the transcript's anchor.
`hashlib` costs a lean interpreter a few milliseconds on import, most of it loading
OpenSSL (`_hashlib`) to offer algorithms forge never uses. CPython also builds in its
own SHA-256 (`_sha256`, `_sha2` from 3.12), which gives the same digests (tests/test_digest.py
compares them with hashlib); hashlib is the fallback for an interpreter built without it.
"""

try:
    from _sha256 import sha256
except ImportError:  # pragma: no cover - Python 3.12+, or a build without it
    try:
        from _sha2 import sha256
    except ImportError:
        from hashlib import sha256


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of `data` in lowercase hex, as `hashlib.sha256(data).hexdigest()`."""
    return sha256(data).hexdigest()
