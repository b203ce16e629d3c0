"""The trace as data, in four layers; nothing here knows of the terminal.

- the core (this folder's modules): the `Trace` type, errors, patterns, text, time scale and
  interval queries;
- `ingest`: reading files into a `Trace` (sources, cache, the intermediate, one sub-package per
  input format);
- `analysis`: what the numbers are (attribution, ops, kernels, gaps, memory, steps, verdict);
- `present`: what is shown (rasterised rows, navigation, details, the table spec, reports).

The core imports none of the three; ingest and analysis never import each other or present
(contracts in pyproject.toml).
"""
