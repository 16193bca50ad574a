"""The hard suite's mechanisms (``audits/hard.toml``): violations the auditor was not tuned on.

Each module is one family: a leak hidden in a rare event (:mod:`.rare_leak`), violations that only a joint event
in several coordinates shows (:mod:`.joint`; at answers the inputs do not give, running counts released with
noise on each: :mod:`.running_sums`), privacy amplification by subsampling claimed wrongly
(:mod:`.subsampling`), randomized response on one-hot vectors with the budget spent per bit (:mod:`.one_hot`),
the exponential mechanism over hundreds of candidates (:mod:`.many_candidates`) and a Gaussian mechanism whose σ
is too small (:mod:`.gaussian_sigma`) -- each with its correct twin; and the same classes as parametric
families whose parameters ``benchmarks/random_cases.py`` draws at random (:mod:`.planted`).  Every class is a
frozen, picklable ``mechanism(x, n, rng) -> ndarray`` with ``true_epsilon()`` (the planted ones:
``epsilon_on(x0, x1)``, the true ε of a pair) and, where the law has a closed form,
``log_density(x, out)`` or ``pmf(x)`` for :mod:`dpverify.statistical.oracle`.
"""
