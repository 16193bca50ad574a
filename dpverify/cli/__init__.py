"""The ``dpverify`` command line: ``run``, ``list``, ``certify``, ``compare``, ``reproduce``, ``bench``
(``commands``), the runs that always end with a final report (``running``), SIGINT/SIGTERM handling
(``interrupts``), its progress display (``progress``) and the registry of paper reproductions (``reproduce``)."""

# numpy's AVX2 sorting kernels where its AVX-512 ones are slow (AMD Zen 4), chosen before anything imports numpy
# (dpverify/__init__.py imports nothing eagerly); see dpverify.execution.cpu_features
from dpverify.execution.cpu_features import use_avx2_sort
from dpverify.execution.memory import keep_freed_memory
from dpverify.execution.worker_threads import use_one_thread

use_avx2_sort()
# freed arrays kept in the process for the next ones (glibc's malloc); see dpverify.execution.memory
keep_freed_memory()
# one BLAS/OpenMP thread per process, set before numpy loads (peers started as subprocesses inherit it); see
# dpverify.execution.worker_threads
use_one_thread()

from dpverify.cli.commands import main  # noqa: E402 -- after use_avx2_sort, which must precede numpy's import

__all__ = ["main"]
