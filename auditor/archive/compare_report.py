"""The signed report of `audit compare DIR --report OUT`: the comparison's page (report.html
and report.pdf with comparison.json and .csv attached) and the index it rests on, written
through the run report's machinery (`auditor.report.build.write_signed_dir`), so `audit
verify` checks it the same way."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from auditor.archive import frames, index
from auditor.archive.compare import TEMPLATE, Comparison, compare, counted
from auditor.errors import AuditorError


def viewmodel(cmp: Comparison, *, generated_at: str, signer: str | None) -> dict[str, Any]:
    """The page's tree: JSON values only, every number already written (auditor.present),
    so the page, the text output and the run report write a figure the same way."""
    from auditor import __version__
    from auditor.output.comparison import _cells as cells
    from auditor.report.viewmodel import signature_section

    doc = cmp.to_json()
    choices = [cells.choice(c) for c in cmp.choices]
    return {
        "title": f"Archive comparison: {counted(cmp.compared, 'run')} compared",
        "headline": cmp.headline(),
        "tool": {"name": "gpubench-audit", "version": __version__},
        "generated_at": generated_at,
        "signature": signature_section(signer),
        "index_sha256": cmp.index_sha256,
        "counts": doc["counts"],
        "verdicts": doc["verdicts"],
        "workloads": [cells.workload(w) for w in cmp.workloads],
        "buy": [
            {**cells.workload(w), "choices": [c for c in choices if c["workload"] == w.label]}
            for w in cmp.workloads
            if any(c["workload"] == w.label for c in choices)
        ],
        "choices": choices,
        # each protocol's ranking is its own table (a trial's wall time is not a warm pass's)
        "ranked": cells.ranked_tables(cmp),
        "not_accepted": [cells.row(r) for r in cmp.not_accepted],
        "none_apart": none_apart(cmp),
        "copies": doc["copies"],
        "conflicts": [cells.conflict(c) for c in cmp.conflicts],
        "other_runs": doc["other_runs"],
        "plot_points": [
            {
                "offer_id": r.offer_id,
                "config_id": f"{r.workload_label} {r.config_id}",
                "throughput_per_s": r.throughput_per_s,
                "cost_per_accepted_corpus_usd_minor": r.cost_per_accepted_corpus_minor,
            }
            for r in cmp.ranked
            if r.currency == frames.CURRENCY
        ],
    }


def none_apart(cmp: Comparison) -> str:
    """What the page says when no configuration is listed apart: true of the index, so it
    names the rows that are not accepted and not compared (set aside, nothing to compare,
    not audited) instead of saying every run was accepted."""
    head = f"None: every configuration of the {counted(cmp.compared, 'run')} compared was accepted"
    rest = []
    if cmp.set_aside:
        verdicts = sorted({v for _, v in cmp.set_aside_verdicts})
        rest.append(
            f"{counted(cmp.set_aside, 'conflicting copy', 'conflicting copies')} "
            f"({', '.join(verdicts)}) set aside and not compared (section 5)"
        )
    if cmp.other_runs:
        rest.append(
            f"{counted(len(cmp.other_runs), 'source or run', 'sources or runs')} "
            "with no configuration to compare (section 6)"
        )
    return head + ("; the index also holds " + " and ".join(rest) if rest else "") + "."


def build_comparison_report(
    archive_dir: Path,
    out_dir: Path,
    *,
    key: Path | None = None,
    cert: Path | None = None,
    chain: Path | None = None,
    now: Callable[[], Any] | None = None,
    tsa: str | None = None,
) -> Comparison:
    """Write the signed comparison report of ARCHIVE_DIR's index into OUT_DIR: report.html,
    report.pdf (comparison.json and .csv attached), comparison.json, comparison.csv, and a
    copy of the index and findings it rests on (`archive/`), all listed in the DSSE bundle."""
    from auditor import output
    from auditor.report import dsse, html, plots
    from auditor.report.build import (
        StepTimer,
        load_signing,
        subject,
        timestamp,
        write_signed_dir,
    )

    archive_dir, out_dir = Path(archive_dir), Path(out_dir)
    if out_dir.resolve() == archive_dir.resolve():
        raise AuditorError(f"{out_dir}: the report cannot replace the archive's folder")
    signer = load_signing(key, cert, chain, tsa)
    cmp = compare(archive_dir)
    generated_at = timestamp(now)
    vm = viewmodel(
        cmp, generated_at=generated_at, signer=subject(cert) if cert is not None else None
    )
    page = html.render_page(TEMPLATE, vm, {"cost": plots.cost_vs_throughput(vm["plot_points"])})
    as_json = output.render(output.COMPARISON, "json", cmp).encode()
    as_csv = output.render(output.COMPARISON, "csv", cmp).encode()
    files = {
        "comparison.json": as_json,
        "comparison.csv": as_csv,
        f"archive/{index.INDEX}": (archive_dir / index.INDEX).read_bytes(),
    }
    if (archive_dir / index.FINDINGS).is_file():
        files[f"archive/{index.FINDINGS}"] = (archive_dir / index.FINDINGS).read_bytes()
    attachments = [
        ("comparison.json", as_json, "The comparison (audit compare --format json)"),
        ("comparison.csv", as_csv, "The comparison table (audit compare --format csv)"),
    ]

    def predicate(digests: Mapping[str, str]) -> dict[str, Any]:
        from auditor import __version__

        return {
            "kind": "comparison",
            "index_sha256": cmp.index_sha256,
            "runs": cmp.compared,
            "index_rows": cmp.index_rows,
            "ranked": len(cmp.ranked),
            "not_accepted": len(cmp.not_accepted),
            "other_runs": len(cmp.other_runs),
            "conflicts": len(cmp.conflicts),
            "verdicts": dict(cmp.verdicts),
            "tool": {"name": "gpubench-audit", "version": __version__},
            "generated_at": generated_at,
        }

    from auditor.report.build import author
    from auditor.report.pdf import Metadata

    metadata = Metadata(
        title=vm["title"],
        author=author(vm["signature"]["signer"]),
        subject=(
            f"gpubench-audit comparison of {cmp.runs} run(s), {len(cmp.ranked)} "
            f"configuration(s) ranked; archive index SHA-256 {cmp.index_sha256}"
        ),
        keywords=("gpubench-audit", "archive comparison", f"index sha256 {cmp.index_sha256}"),
        created=generated_at,
    )
    write_signed_dir(
        out_dir,
        page=page,
        files=files,
        attachments=attachments,
        signer=signer,
        cert=cert,
        key=key,
        predicate=predicate,
        predicate_type=dsse.COMPARISON_PREDICATE_TYPE,
        timer=StepTimer(),
        metadata=metadata,
    )
    return cmp
