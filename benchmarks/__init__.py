"""Benchmarks: speed goals are measured here (``python -m benchmarks.<name>``), not in timed tests."""

# the same choice of numpy's kernels as the dpverify command line (numpy's AVX2 sorting kernels on AMD Zen 4, whose
# AVX-512 ones are slow), before any benchmark imports numpy; the peers' runners, started as subprocesses, inherit it
from dpverify.execution.cpu_features import use_avx2_sort
from dpverify.execution.memory import keep_freed_memory
from dpverify.execution.worker_threads import use_one_thread

use_avx2_sort()
# and the same malloc setting (freed arrays kept in the process); the peers get it through their environment
keep_freed_memory()
# one BLAS/OpenMP thread per process, set before numpy loads (peers started as subprocesses inherit it); see
# dpverify.execution.worker_threads
use_one_thread()
