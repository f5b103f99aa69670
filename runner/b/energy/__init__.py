"""Energy instruments for protocol B (B3, B6): NVML (GPU energy counter and power samples)
and RAPL (CPU package energy counters), behind one small interface (`base.Instrument`) so
tests can hand in fakes; a `Recorder` that keeps every reading raw as runner power records
(`schemas/runner-power-record.schema.json`); and `window.analyse`, which turns the records
of one trial's window back into energy, or says why it cannot (not measured, below
resolution). Nothing here estimates: a counter that cannot be read gives no number."""
