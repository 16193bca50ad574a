"""Where samples are drawn: seeded batches on a local process pool (``sampling``) or a Dask cluster
(``distributed``).  Results never depend on the number of workers.
"""
