"""Batches: many models (``harness parity --batch``) or captures (``harness swing --batch``)
run as one task each on an executor handed in by the composition root (Dask by default),
each writing its own normal output folder, gathered into one survey folder: survey.json
(one row per model or capture) and index.html (the survey report).

inputs.py: what a batch holds (a folder searched recursively, or a list file), the slugs;
survey.py: the survey.json document, its strict reader, the output-folder kind, the rows;
report.py: index.html (Jinja2, tables only); run.py: the run (temporary folder, tasks,
survey, one atomic swap). No stage, engine or executor is imported here: the task
functions and the executor come from harness/api.py.
"""
