"""Placement evidence readers: one module per format (ONNX Runtime profile, our runner's ORT
and torch records, the Windows ML record, Core ML compute plan, profiling CSV and NSLog text),
each returning the frame of `schemas/placement-nodes.frame.json`; `_frame.placement_shares`
computes the shares protocol B uses. docs/evidence-formats.md describes each."""
