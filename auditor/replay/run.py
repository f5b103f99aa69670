"""The one thing from a run that replay executes: its ONNX graph, checked first, then run by
ONNX Runtime on the CPU.

`inspect` reads the model's bytes (the very bytes whose SHA-256 was checked against the
manifest) with the `onnx` protobuf parser and refuses, before any session exists: a file over
`MAX_BYTES`; one that does not parse; an opset or a node (subgraphs included) outside the
standard domains `STANDARD_DOMAINS`; model-local functions; a tensor whose data lives in an
external file (which ONNX Runtime would read from disk beside the model); graph inputs and
outputs other than the contract's. `Session` then builds an `InferenceSession` from those
bytes (never from a path: nothing beside the file can be pulled in) with the CPU execution
provider only, no custom operator library, default graph optimisations and `THREADS`
intra-op threads, and checks the provider ONNX Runtime really uses.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_BYTES = 512 << 20
"""The largest model file replay loads (the default classifier's is about 1.5 MB)."""
STANDARD_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml"})
"""Operator domains of the ONNX standard (ai.onnx and ONNX-ML); any other is a custom op."""
THREADS = 1
"""ONNX Runtime intra-op threads: a few hundred texts of a small model gain nothing from
more, and replay shares the reviewer's machine."""
BATCH = 256
"""Texts per `run` call (bounds the memory of one call); a tokenizer kind whose tensors grow
with the batch's longest text asks for fewer (`batch`)."""

_DTYPES = {"float32": 1, "int32": 6, "int64": 7, "float16": 10, "float64": 11}
"""Contract dtype -> ONNX TensorProto element type."""
_NUMPY = {"int64": np.int64, "int32": np.int32, "float32": np.float32}
_EXTERNAL = 1
"""TensorProto.DataLocation.EXTERNAL."""


class ModelRefused(Exception):
    """The model cannot be replayed; the message says why, in one sentence."""


def _graphs(graph: Any) -> Iterator[Any]:
    """GRAPH and every subgraph of its nodes' attributes (Loop and If bodies), depth first."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("g"):
                yield from _graphs(attr.g)
            for sub in attr.graphs:
                yield from _graphs(sub)


def _tensors(graph: Any) -> Iterator[Any]:
    """Every tensor a graph holds: initializers, sparse initializers, constant attributes."""
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield sparse.values
        yield sparse.indices
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors


def inspect(data: bytes, model: Mapping[str, Any]) -> dict[str, Any]:
    """Check the model's bytes against the rules above and the contract's MODEL section
    (`inputs`, `outputs`); return what the file declares (`opset`, `ir_version`,
    `producer`). Raises `ModelRefused`."""
    if len(data) > MAX_BYTES:
        raise ModelRefused(
            f"the file is {len(data):,} bytes; replay loads a model up to {MAX_BYTES:,} bytes"
        )
    import onnx

    try:
        proto = onnx.load_model_from_string(data)
    except Exception as exc:  # protobuf's DecodeError, onnx's own errors: bytes, not a model
        raise ModelRefused(
            f"the file does not parse as an ONNX model ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    if not len(proto.graph.node):
        raise ModelRefused("the file holds no graph (no node): not an exported model")
    custom = sorted({o.domain for o in proto.opset_import} - STANDARD_DOMAINS)
    if custom:
        raise ModelRefused(
            f"the model imports operator set(s) of custom domain(s) "
            f"{', '.join(map(repr, custom))}; replay runs standard ONNX only"
        )
    if len(proto.functions):
        raise ModelRefused(
            f"the model defines {len(proto.functions)} local function(s) "
            f"({proto.functions[0].domain}.{proto.functions[0].name}); replay "
            "runs standard ONNX operators only"
        )
    for graph in _graphs(proto.graph):
        for node in graph.node:
            if node.domain not in STANDARD_DOMAINS:
                raise ModelRefused(
                    f"node {node.name or node.op_type!r} is operator "
                    f"{node.domain}.{node.op_type}, outside the standard ONNX "
                    "domains; replay runs no custom operator"
                )
        for tensor in _tensors(graph):
            if tensor.data_location == _EXTERNAL or len(tensor.external_data):
                raise ModelRefused(
                    f"tensor {tensor.name!r} keeps its data in an external "
                    "file; replay loads a single self-contained file only"
                )
    _check_signature(proto.graph, model)
    opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), None)
    return {
        "opset": opset,
        "ir_version": proto.ir_version,
        "producer": f"{proto.producer_name} {proto.producer_version}".strip(),
    }


def _check_signature(graph: Any, model: Mapping[str, Any]) -> None:
    inits = {t.name for t in graph.initializer}
    actual_in = {i.name: i.type.tensor_type.elem_type for i in graph.input if i.name not in inits}
    declared_in = {i["name"]: i["dtype"] for i in model["inputs"]}
    if set(actual_in) != set(declared_in):
        raise ModelRefused(
            f"the graph's inputs are {sorted(actual_in)}; the manifest declares "
            f"{sorted(declared_in)}"
        )
    for name, dtype in declared_in.items():
        if actual_in[name] != _DTYPES[dtype]:
            raise ModelRefused(
                f"graph input {name!r} has ONNX element type {actual_in[name]}, "
                f"not the declared {dtype}"
            )
    actual_out = {o.name: o.type.tensor_type.elem_type for o in graph.output}
    for out in model["outputs"]:
        if out["name"] not in actual_out:
            raise ModelRefused(
                f"the graph has no output {out['name']!r} (it has {sorted(actual_out)})"
            )
        if actual_out[out["name"]] != _DTYPES[out["dtype"]]:
            raise ModelRefused(
                f"graph output {out['name']!r} has ONNX element type "
                f"{actual_out[out['name']]}, not the declared {out['dtype']}"
            )


@dataclass
class Session:
    """An ONNX Runtime session of the checked model, CPU only."""

    session: Any
    inputs: tuple[tuple[str, str, str], ...]
    """(graph input, tokenizer tensor, dtype) from the contract."""
    output: str
    runtime: str
    """`onnxruntime <version> CPUExecutionProvider`."""

    @classmethod
    def create(cls, data: bytes, model: Mapping[str, Any]) -> Session:
        """A session of the model bytes DATA (already `inspect`ed); `ModelRefused` when ONNX
        Runtime refuses it or would run it elsewhere than on the CPU."""
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = THREADS
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        try:
            session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # ORT raises its own exception types on a bad graph
            raise ModelRefused(
                f"ONNX Runtime refused the model ({type(exc).__name__}: {str(exc)[:300]})"
            ) from None
        if session.get_providers() != ["CPUExecutionProvider"]:
            raise ModelRefused(
                f"ONNX Runtime would run the model on {session.get_providers()}, "
                "not the CPU execution provider alone"
            )
        return cls(
            session,
            tuple((i["name"], i["tensor"], i["dtype"]) for i in model["inputs"]),
            model["outputs"][0]["name"],
            f"onnxruntime {ort.__version__} CPUExecutionProvider",
        )

    def scores(
        self, encode: Any, texts: Sequence[str], n_labels: int, *, batch: int = BATCH
    ) -> np.ndarray:
        """One row of N_LABELS float64 scores per text: the texts encoded by ENCODE (the
        tokenizer's), BATCH at a time (a tokenizer kind may ask for fewer). `ModelRefused`
        when a run fails or its output is not of that shape."""
        rows = []
        for start in range(0, len(texts), batch):
            chunk = texts[start : start + batch]
            tensors = encode(chunk)
            feed = {
                name: np.asarray(tensors[tensor], dtype=_NUMPY[dtype])
                for name, tensor, dtype in self.inputs
            }
            try:
                (out,) = self.session.run([self.output], feed)
            except Exception as exc:  # ORT's own exception types, or a shape it rejects
                raise ModelRefused(
                    f"ONNX Runtime failed on the sampled texts "
                    f"({type(exc).__name__}: {str(exc)[:300]})"
                ) from None
            out = np.asarray(out)
            if out.shape != (len(chunk), n_labels):
                raise ModelRefused(
                    f"the model's output {self.output!r} has shape "
                    f"{list(out.shape)} for {len(chunk)} texts; expected "
                    f"[{len(chunk)}, {n_labels}] (one score per label)"
                )
            if not np.isfinite(out).all():
                raise ModelRefused(
                    f"the model's output {self.output!r} holds a score that is not a finite number"
                )
            rows.append(out.astype(np.float64))
        return np.concatenate(rows) if rows else np.zeros((0, n_labels))
