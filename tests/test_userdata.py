"""User data travels gzip-compressed and Base64-encoded; every reader decodes it the same way."""

from __future__ import annotations

import base64
import gzip

from blueprints.components.base import encoded_user_data
from blueprints.core import userdata

TEXT = "#cloud-config\nruncmd:\n  - echo 你好\n"


def test_encoded_user_data_is_base64_of_gzip_that_cloud_init_uncompresses():
    raw = base64.b64decode(encoded_user_data(TEXT), validate=True)
    assert raw[:2] == b"\x1f\x8b" and gzip.decompress(raw).decode() == TEXT


def test_the_same_text_gives_the_same_bytes_so_plans_and_diffs_are_stable():
    assert userdata.encode(TEXT) == userdata.encode(TEXT)
    raw = userdata.compressed(TEXT)
    assert raw[4:8] == b"\x00\x00\x00\x00"  # gzip MTIME field: 0, not the clock
    # OS byte fixed (gzip.compress writes 3 before Python 3.13 and 255 from it): goldens equal on every Python.
    assert raw[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03"
    assert gzip.decompress(raw) == TEXT.encode()


def test_decode_reads_compressed_and_plain_base64_and_refuses_the_rest():
    assert userdata.decode(userdata.encode(TEXT)) == TEXT
    assert userdata.decode(base64.b64encode(TEXT.encode()).decode()) == TEXT  # plans written before compression
    assert userdata.decode("not base64!") is None
    assert userdata.decode(base64.b64encode(b"\x1f\x8btruncated").decode()) is None
    assert userdata.decode(base64.b64encode(b"\xff\xfe").decode()) is None
    assert userdata.decode(None) is None
