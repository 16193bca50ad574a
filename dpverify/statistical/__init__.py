"""The black-box statistical audit: samples of a mechanism on neighbouring inputs -> candidate events chosen on a
search half (``search``; events in ``events``, features in ``features``, the learned score in ``learned``,
conditional cells in ``cells``, point masses in ``atoms``, thresholds anchored at the pair's inputs in ``anchors``,
item events of integer vectors in ``items``, the prefix unions they share in ``unions``, the unmixing of noise mixed
by a causal linear map in ``innovations`` and by any linear map in ``independent``, the scores of noise scales that
move with the input in ``dispersion`` and of chains of noisy non-linear steps in ``markov``, candidates scored by
the projected bound of ``projection``; every pair's search and the finalists in ``search_phase``, the nested events
tested beside a finalist in ``deeper``) -> Clopper-Pearson or conditional Poisson bounds on fresh samples
(``ratio_tests``, ``stats``) -> an ε lower bound (``auditor``, ``result``).  Also the anytime-valid audit
(``anytime``: its bets in ``betting``, its streams in ``streams``), the sampling-contract checks
(``contract``), the sequential audit (``sequential``), the oracle bound (``oracle``), the auditor's own false-alarm
rate (``calibration``) and the empirical privacy-loss histogram of reports (``privacy_loss``).
"""
