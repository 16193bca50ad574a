"""Correct textbook mechanisms: the controls of the dpverify catalogue.

Each class is a frozen, picklable dataclass ``mechanism(x, n, rng) -> np.ndarray`` (see
``algorithms/__init__.py``) with attributes ``epsilon`` and ``delta`` (the claim) and a
``true_epsilon()`` (pure-DP mechanisms) or ``true_delta(epsilon)`` (Gaussian) method.
"""

from algorithms.classic.category_counts import CategoryCounts
from algorithms.classic.clipped_sum import ClippedSum
from algorithms.classic.exponential import ExponentialMechanism, exponential_mechanism_pmf
from algorithms.classic.gaussian import Gaussian, gaussian_delta
from algorithms.classic.geometric import Geometric
from algorithms.classic.histogram import Histogram
from algorithms.classic.laplace import Laplace
from algorithms.classic.noisy_max import ReportNoisyMax, report_noisy_max_pmf
from algorithms.classic.noisy_mean import NoisyMean
from algorithms.classic.numerical_svt import NumericalSVT
from algorithms.classic.parallel import LaplaceParallel
from algorithms.classic.prefix_sum import PrefixSum
from algorithms.classic.randomized_response import RandomizedResponse, randomized_response_pmf
from algorithms.classic.rappor import OneTimeRappor, Rappor
from algorithms.classic.sparse_vector import SparseVector
from algorithms.classic.sparse_vector_dwork_roth import SparseVectorDworkRoth
from algorithms.classic.truncated_geometric import TruncatedGeometric, truncated_geometric_pmf

__all__ = [
    "CategoryCounts",
    "ClippedSum",
    "ExponentialMechanism",
    "Gaussian",
    "Geometric",
    "Histogram",
    "Laplace",
    "LaplaceParallel",
    "NoisyMean",
    "NumericalSVT",
    "OneTimeRappor",
    "PrefixSum",
    "RandomizedResponse",
    "Rappor",
    "ReportNoisyMax",
    "SparseVector",
    "SparseVectorDworkRoth",
    "TruncatedGeometric",
    "exponential_mechanism_pmf",
    "gaussian_delta",
    "randomized_response_pmf",
    "report_noisy_max_pmf",
    "truncated_geometric_pmf",
]
