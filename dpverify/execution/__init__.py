"""Where samples are drawn: seeded batches on a local process pool (``sampling``, with one worker process per
``lane`` for work that keeps state in its worker: ``lanes``) or a Dask cluster (``distributed``), which seeds each
input's batches use so that pairs sharing an input share its outputs (``sources``), and the process-wide settings
the command line and the pool's workers make for speed, never for results: numpy's sorting kernels
(``cpu_features``), freed memory kept in the process (``memory``) and the workers' BLAS and OpenMP threads
(``worker_threads``).  Results never depend on the number of workers.
"""
