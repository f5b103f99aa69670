"""No input makes a reader raise: random bytes, and real fixtures cut, flipped, re-encoded
and shuffled, go to every reader (and through `audit evidence`'s core); every fault names
the file, and every frame has its family's schema."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.evidence import summarise
from auditor.readers import evidence_kinds

FIXTURES = Path(__file__).parent / "fixtures"
REAL = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.name != "SOURCES.md")
READERS = evidence_kinds.readers()


def check(read, name, family):
    for f in read.faults:
        assert f.file == name and f.message and f.severity in ("error", "warning")
    if read.value is not None:
        from auditor.readers.placement import _frame as placement
        from auditor.readers.power import _frame as power

        schema = power.schema() if family == "power" else placement.schema()
        assert read.value.schema == schema


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.name)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.one_of(
        st.binary(max_size=2000), st.text(max_size=2000).map(lambda t: t.encode("utf-8", "replace"))
    )
)
def test_random_bytes(reader, data):
    r = reader.read(data, name="fuzz.bin")
    check(r, "fuzz.bin", reader.family)


def _mutate(data: bytes, draw) -> bytes:
    how = draw(st.sampled_from(["cut", "flip", "lines", "dup", "utf16", "cp1252"]))
    if how == "cut":
        return data[: draw(st.integers(0, len(data)))]
    if how == "flip":
        out = bytearray(data)
        for _ in range(draw(st.integers(1, 8))):
            if out:
                out[draw(st.integers(0, len(out) - 1))] = draw(st.integers(0, 255))
        return bytes(out)
    lines = data.split(b"\n")
    if how == "lines":
        return b"\n".join(draw(st.permutations(lines[:60])) + lines[60:])
    if how == "dup":
        i = draw(st.integers(0, len(lines) - 1))
        return b"\n".join(lines[: i + 1] + lines[i:])
    text = data.decode("utf-8", "replace")
    return text.encode("utf-16") if how == "utf16" else text.encode("cp1252", "replace")


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:40])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(draw=st.data())
def test_mutated_real_files(path, draw):
    data = _mutate(path.read_bytes(), draw.draw)
    module, r = evidence_kinds.read(data, path.name)
    check(r, path.name, module.family if module else None)
    # the reader the file's own format needs, whatever the sniffing says now
    own = evidence_kinds.choose(path.read_bytes()[:65536], path.name)
    check(own.read(data, name=path.name), path.name, own.family)
    summary = summarise(data, path.name)
    assert summary.exit_code in (0, 1)


def test_implausible_times_and_unknown_xml_encoding(fixture_bytes):
    """Found by mutating digits: a year polars parses but Python cannot hold, and an XML
    declaration naming an unknown encoding, are faults, not crashes."""
    from auditor.readers.power import nvidia_smi_csv, nvidia_smi_xml, powermetrics_text

    csv = fixture_bytes("nvidia-smi/VirtualClient_query-gpu-8xH100.csv").replace(
        b"2024/03/15 13:57:59.815", b"-024/03/15 13:57:59.815", 1
    )
    r = nvidia_smi_csv.read(csv, name="x.csv", local_utc_offset="-12:00")
    assert any(f.kind == "type" and f.line == 3 for f in r.errors)
    xml = fixture_bytes("nvidia-smi/telegraf_q-x_a100-sxm4-v12.xml").replace(b"UTF-8", b"UTF-.")
    r = nvidia_smi_xml.read(xml, name="x.xml")
    assert r.value is None and r.errors[0].kind == "encoding"
    text = b"*** Sampled system activity (Mon Jan  1 00:00:00 0001 +0100) (1.00ms elapsed) ***\n"
    r = powermetrics_text.read(text + b"CPU Power: 5 mW\n", name="x.txt")
    assert any(f.kind == "type" and f.line == 1 for f in r.errors)
