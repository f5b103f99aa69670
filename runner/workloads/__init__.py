"""Workloads: what a pass runs. The interface is in `base.py`; a config selects one as
`module:callable` (`workload.callable`). Built in: `runner.workloads.bow:BagOfWords` (the
default, a small torch classifier trained at run time),
`runner.workloads.hf:SequenceClassifier` (a local Hugging Face checkpoint or ONNX file as it
is, loaded as `hf_inference`'s tokenizer and classifier; needs the optional extra `hf`) and
`runner.workloads.minilm:MiniLM` (all-MiniLM-L6-v2 embeddings + a linear head; needs the
optional extra `minilm`)."""

from __future__ import annotations

import importlib

from runner.errors import RunnerError
from runner.workloads.base import TrainingData, Workload, WorkloadFactory

__all__ = ["TrainingData", "Workload", "WorkloadFactory", "resolve"]


def resolve(spec: str) -> WorkloadFactory:
    """The factory named by `module:callable`: a WorkloadFactory instance, or a class or
    function that returns one when called without arguments."""
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise RunnerError(f"workload {spec}: cannot import module {module_name} ({exc})") from None
    obj = getattr(module, attr, None)
    if obj is None:
        raise RunnerError(f"workload {spec}: module {module_name} has no {attr}")
    factory = obj if isinstance(obj, WorkloadFactory) else obj()
    if not isinstance(factory, WorkloadFactory):
        raise RunnerError(
            f"workload {spec}: {attr} is not a WorkloadFactory (got {type(factory).__name__})"
        )
    return factory
