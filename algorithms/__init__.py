"""Reference implementations audited by :mod:`dpverify`.

Every mechanism here follows dpverify's mechanism contract (README.md; :mod:`dpverify.statistical.contract`)::

    mechanism(x, n, rng) -> np.ndarray

``n`` independent outputs on input ``x``, first axis of length ``n``, all randomness drawn from the
``numpy.random.Generator`` ``rng``.  Discrete outputs are integer codes, continuous outputs floats.
Samplers are vectorised over ``n`` (one Python call per batch).

* :mod:`algorithms.classic` -- correct textbook mechanisms (the controls of the catalogue);
* :mod:`algorithms.broken` -- deliberately broken twins, one module per real-world bug pattern, each
  docstring naming the bug and the mechanism's true epsilon.

This package never imports :mod:`dpverify`.
"""
