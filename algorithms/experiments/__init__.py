"""Reproductions of the experiments of the seed papers, run by ``dpverify reproduce NAME``.

Each module exposes ``reproduce(*, quick: bool, seed: int, out_dir: Path, workers: int | None) -> str``:
it runs the experiment from scratch (seeded, independent of ``workers``), may write files into
``out_dir``, and returns a markdown report.  ``dpverify.cli.reproduce`` maps the reproduction names to
these functions by import-path strings, so this package is only imported when a reproduction runs.

* :mod:`algorithms.experiments.pinot_table_3_1` -- seed 002 Table 3.1 (Laplace MST vs PAMST error);
* :mod:`algorithms.experiments.ptclust_figures` -- the PTClust figures.

Like the rest of :mod:`algorithms`, this package never imports :mod:`dpverify`.
"""
