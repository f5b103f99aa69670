"""What a protocol package provides to the engine, which knows no protocol itself.

A protocol package (`auditor/protocols/<x>/__init__.py`) defines `PROTOCOL`, a `Protocol`:
the manifest's `protocol` value it audits, the code prefix of its rules, which files it
parses, how it loads a run dir into its own immutable view (through the readers), where its
rules are (one module each, discovered), how it places findings (a CSV row on its line) and
how it summarises a run for an archive and a report. Everything protocol-specific lives in
that package: the engine picks it from `manifest.json`'s `protocol`.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any
from typing import Protocol as TypingProtocol

from auditor.model import Finding, RunSummary
from auditor.rule import Rule
from auditor.rundir import RunFiles


class LoadedRun(TypingProtocol):
    """What the engine needs of any protocol's run view."""

    root: Path
    manifest: dict | None
    files_on_disk: Mapping[str, str]
    load_findings: tuple[Finding, ...]
    available: frozenset[str]
    unavailable_reason: Mapping[str, str]


RULE_MODULE = re.compile(r"^[a-z]\d{4}_\w+$")


@dataclass(frozen=True)
class ReportPart:
    """What a protocol adds to the signed report, formatting its facts and summary only
    (each protocol's `report.py` declares one as `REPORT`)."""

    template: str
    """The Jinja2 template of its sections (in `templates/`), included by report.html.j2."""
    sections: Callable[..., dict[str, Any]]
    """`sections(view, result, *, inputs={})`: its view-model sections, JSON values only,
    among them `summary` (the rows of page 1, drawn by the shared template); INPUTS are the
    files given on the command line that it takes (`inputs`), each as (data, label)."""
    figures: Callable[[dict[str, Any]], dict[str, tuple[str, Any]]]
    """`figures(vm)`: name -> (plot kind of `auditor.report.plots`, its data from VM)."""
    finding_scope: Callable[[Any, Finding], str | None]
    """`finding_scope(view, finding)`: the part of the run a finding affects, in words."""
    attachments: Callable[[Any], list[tuple[str, str]]]
    """`attachments(view)`: the run files the signed PDF carries besides the manifest."""
    inputs: Mapping[str, Callable[[Path], Any]] = dataclasses.field(default_factory=dict)
    """The files its report can take from the command line, by option name, each with the
    function that reads and checks one (`offers`: protocol A's `--offers`); none for a
    protocol whose report takes none."""


@dataclass(frozen=True)
class ComparisonPart:
    """What a protocol gives `audit compare` and its outputs (`auditor/protocols/<p>/
    comparison.py`): how its configurations are named, ranked and shown. The comparison, the
    archive and the outputs know no protocol: they read this."""

    letter: str
    """How a table names the protocol in one letter (`A`)."""
    hardware: Callable[[Mapping[str, Any]], str]
    """`hardware(config)`: what a configuration ran on, from an index configuration with its
    figures parsed (`figures`): the GPU model as evidenced, a runtime and compute units."""
    rank_figure: str
    """The `ConfigRow` field ranked first, fewest first (then the median)."""
    figure_cell: str
    """The comparison cell (`auditor/output/comparison/_cells.row`) that writes it."""
    figure_heading: str
    """Its column's heading on page 1 (`Per accepted corpus`)."""
    hardware_words: str
    """What `hardware` names, in words (`the GPU model as the placement evidence names
    it`)."""
    unit: str
    """Of the throughput: `texts/s`, `inferences/s`."""
    costed: bool
    """Its configurations are costed per offer of the hardware measured (then a ranked row
    without an offer says why)."""
    passes_told_apart: bool
    """The index keeps each configuration's pass range, so a choice and its runner-up can be
    told apart by their passes."""
    row_figures: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """`ConfigRow` field -> the name of the run summary's figure it is the median of."""
    not_told_apart: str = ""
    """Why a choice is not told apart from its runner-up (`passes_told_apart` False)."""
    ranked_title: str = ""
    """The heading of its ranked table in the text output and on the page."""
    ranked_columns: tuple[tuple[str, str], ...] = ()
    """(heading, `_cells.row` key) of its ranked table."""


@dataclass(frozen=True, eq=False)
class Protocol:
    name: str
    """The manifest's `protocol` value, e.g. `accepted-corpus-cost`."""
    prefix: str
    """Code prefix of its rules (`A`), and of its section references (`A2.1`)."""
    title: str
    rules_package: str
    """Dotted name of the package holding one module per rule (`a0201_ids_exactly_once`)."""
    parsed_prefixes: tuple[str, ...]
    """Run dir paths whose bytes the loader parses (kept in memory after hashing)."""
    signature_files: tuple[str, ...]
    """Files that identify such a run when its manifest is missing or unreadable."""
    load: Callable[[RunFiles], LoadedRun]
    internal_error_ref: str
    """Protocol section an auditor crash is reported under (the dossier rule)."""
    locate: Callable[[LoadedRun, Finding], Finding] = lambda view, f: f
    """Complete a finding's place from the view (a CSV row's physical line)."""
    summarize: Callable[[LoadedRun, Any], RunSummary] | None = None
    """The per-run summary an archive keeps (view, AuditResult) -> RunSummary."""
    parse_limits: tuple[tuple[str, int], ...] = ()
    """(path prefix, bytes): the largest file under the prefix the loader parses, checked
    before the file is read (first match; others `rundir.MAX_PARSED_BYTES`), so what a run
    holds bounds memory before anything is parsed."""
    streamed_prefixes: tuple[str, ...] = ()
    """Run dir paths the loader reads one file at a time (`RunFiles.stream`), never all at
    once: the parsed files that can be many and large (a run's outputs)."""
    report: Callable[[], ReportPart] | None = None
    """The protocol's report part, imported on first use (`auditor.registry.lazy`)."""
    comparison: ComparisonPart | None = None
    """What `audit compare` needs of the protocol to rank and show its configurations."""
    replay_sources: Callable[[Mapping[str, Any], list[str]], list[Any]] | None = None
    """`replay_sources(manifest, files)`: the answers files `audit replay` compares and the
    floor each is judged against (`auditor.replay.contract.Source`), imported on first use."""

    @property
    def internal_error_code(self) -> str:
        return f"{self.prefix}0000"

    @cached_property
    def rules(self) -> tuple[Rule, ...]:
        """Every rule of the package, sorted by code. A module that looks like a rule but
        defines no `RULE`, or a code without this protocol's prefix, is a bug: it raises here
        (and in the meta-tests) instead of silently never running."""
        package = importlib.import_module(self.rules_package)
        found: list[Rule] = []
        for info in pkgutil.iter_modules(package.__path__):
            if not RULE_MODULE.match(info.name):
                continue  # helpers: _derive, _memory ...
            module = importlib.import_module(f"{self.rules_package}.{info.name}")
            rule = getattr(module, "RULE", None)
            if not isinstance(rule, Rule):
                raise TypeError(f"{module.__name__} defines no RULE")
            if (
                not rule.code.startswith(self.prefix)
                or info.name[1:5] != rule.code[len(self.prefix) : len(self.prefix) + 4]
            ):
                raise ValueError(
                    f"{module.__name__}: code {rule.code} does not match the "
                    f"module name and the protocol prefix {self.prefix}"
                )
            found.append(rule)
        return tuple(sorted(found, key=lambda r: r.code))

    def get_rule(self, code: str) -> Rule | None:
        return next((r for r in self.rules if r.code == code), None)
