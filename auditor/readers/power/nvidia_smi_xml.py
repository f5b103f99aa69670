"""`nvidia-smi -q -x` XML (one report), or `nvidia-smi -q -x -l N` (reports one after the
other, each with its own `<?xml` declaration).

Each `<nvidia_smi_log>` gives `<timestamp>` (local ctime to the second, no zone: `end`, with
the manifest's `local_utc_offset`) and one `<gpu id="bus id">` per GPU, in index order
(`device` = position). Power comes from the power sections of `_nvsmi` (DTD v12
`<gpu_power_readings><power_draw>`, older `<power_readings><power_draw>`, v13
`<average_power_draw>` and `<instant_power_draw>`); `source` is `section/field`, e.g.
`gpu_power_readings/instant_power_draw`. `N/A` is no reading (no row). A report cut short
keeps the readings before the cut. The `<!DOCTYPE ... SYSTEM "nvsmi_device_v13.dtd">` is
never fetched; entity declarations are refused (`_xml`).
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl

from auditor.readers import _xml
from auditor.readers._common import EvidenceReader, FaultLog, ReaderInfo, line_of_offset
from auditor.readers.base import Read
from auditor.readers.power import _nvsmi

INFO = ReaderInfo(
    name="nvidia-smi-xml",
    family="power",
    tool="nvidia-smi",
    extensions=(".xml",),
    description="nvidia-smi -q -x report(s) (XML, DTD v11-v13)",
)

_DOC = re.compile(rb"<\?xml")
_DTD = re.compile(r"nvsmi_device_(v\d+)\.dtd")


def sniff(head: bytes) -> bool:
    return b"<nvidia_smi_log" in head


def read(
    data: bytes, *, name: str, local_utc_offset: str | None = None, **_: Any
) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {
        "tool": "nvidia-smi",
        "format": "xml",
        "timestamps": True,
        "units": ["W"],
    }
    starts = [m.start() for m in _DOC.finditer(data)] or [0]
    starts[0] = 0
    snapshots = []
    for begin, stop in zip(starts, [*starts[1:], len(data)], strict=True):
        first_line = line_of_offset(data, begin)
        root = _xml.parse(
            data[begin:stop], log, first_line=first_line, what="The nvidia-smi XML report"
        )
        if root is None:
            continue
        if root.tag != "nvidia_smi_log":
            log.error(
                f"The root element is <{root.tag}>, not <nvidia_smi_log>.",
                kind="schema",
                line=root.line,
            )
            continue
        snapshots.append(_snapshot(root))
    dtd = sorted(set(_DTD.findall(data[:4096].decode("ascii", "replace"))))
    if dtd:
        meta["dtd"] = dtd[0] if len(dtd) == 1 else dtd
    frame = _nvsmi.snapshot_frame(
        snapshots, log, meta, local_utc_offset, lambda r: f"{r.section}/{r.name}"
    )
    return Read(frame, log.faults(), meta)


def _snapshot(root: _xml.Element) -> _nvsmi.Snapshot:
    stamp = root.find("timestamp")
    snap = _nvsmi.Snapshot(
        line=stamp.line if stamp else root.line,
        stamp=stamp.text.strip() if stamp else None,
        attached=root.findtext("attached_gpus"),
    )
    driver = root.findtext("driver_version")
    for gpu in root.findall("gpu"):
        g = _nvsmi.Gpu(
            line=gpu.line,
            info={
                "bus_id": gpu.attrib.get("id"),
                "name": gpu.findtext("product_name"),
                "minor_number": gpu.findtext("minor_number"),
                "uuid": gpu.findtext("uuid"),
                "serial": gpu.findtext("serial"),
                "driver_version": driver,
            },
        )
        for section in gpu.children:
            if section.tag in _nvsmi.SECTIONS:
                g.readings += [
                    _nvsmi.Reading(section.tag, r.tag, r.text, r.line) for r in section.children
                ]
        snap.gpus.append(g)
    return snap


READER = EvidenceReader(INFO, rank=60, sniff=sniff, read=read, doc=__doc__ or "")
