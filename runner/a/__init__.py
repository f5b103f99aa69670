"""Protocol A (`runner execute`; docs/run-dir.md): an accepted corpus before cost. Trains the
workload, runs cold passes (each in a fresh process) and warm passes in seeded, alternating
rounds, reads every output back for the set and quality check, and writes the CSV, timeline,
set check, claims and economics of the run directory; `runner memory-probe` is the seed's
exercise of the same memory measurement (A7).

Modules: `config` (the TOML run configuration), `economics` (the offer, A9), `execute` (the
stages, from configuration to the published run dir), `write` (stage 4: the files read back
and the files written from them, the manifest's sections), `passes` (one measured pass and one
warm-up block, the same in both processes), `pass_worker` (a cold pass in a fresh
`python -m runner.a.pass_worker` process), `memory` (A7 memory and A4.2 placement evidence),
`setcheck` (A2, from the files as written), `claims` (`claims.json`), `probe`
(`runner memory-probe`). It imports only its own modules and the shared ones of `runner/`,
never `runner.b`.
"""
