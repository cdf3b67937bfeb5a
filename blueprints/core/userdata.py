"""How node user data travels: the cloud-init text, gzip-compressed, then Base64 (pure).

ECS takes user data Base64-encoded and "cannot exceed 16 KB before it is encoded"
(https://www.alibabacloud.com/help/doc-detail/52012.htm); Linux images run it through cloud-init, which
uncompresses "content found to be gzip compressed ... typically useful because user-data is limited to ~16384
bytes" (https://github.com/canonical/cloud-init/blob/20.2/doc/rtd/topics/format.rst). So the limit applies to
the compressed bytes, and every reader (plan, diff, guardrails) decodes with ``decode``.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import struct
import zlib

_GZIP_MAGIC = b"\x1f\x8b"


# The gzip member header (RFC 1952): magic, deflate, no flags, MTIME 0, XFL 2 (best compression), OS 3 (Unix). Written
# here rather than by gzip.compress, whose OS byte changed in Python 3.13 (3 before, 255 after): plans must be
# byte-identical on every Python aitrain supports.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03"


def compressed(text: str) -> bytes:
    """The bytes ECS receives (before Base64): one gzip member at level 9 with MTIME 0, the same on every Python."""
    data = text.encode("utf-8")
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = deflate.compress(data) + deflate.flush()
    return _GZIP_HEADER + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def encode(text: str) -> str:
    """The ``user_data`` argument: Base64 of the gzip-compressed cloud-init text."""
    return base64.b64encode(compressed(text)).decode("ascii")


def decode(value: object) -> str | None:
    """The cloud-init text of a ``user_data`` value (Base64, gzip or not); None when it is not Base64 of UTF-8."""
    if not isinstance(value, str):
        return None
    try:
        raw = base64.b64decode(value, validate=True)
        if raw.startswith(_GZIP_MAGIC):
            raw = gzip.decompress(raw)
        return raw.decode("utf-8")
    except (binascii.Error, ValueError, EOFError, OSError, zlib.error):
        return None
