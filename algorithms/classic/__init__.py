"""Correct textbook mechanisms: the controls of the dpverify catalogue.

Each class is a frozen, picklable dataclass ``mechanism(x, n, rng) -> np.ndarray`` (see
``algorithms/__init__.py``) with attributes ``epsilon`` and ``delta`` (the claim) and a
``true_epsilon()`` (pure-DP mechanisms) or ``true_delta(epsilon)`` (Gaussian) method.
"""

from .category_counts import CategoryCounts
from .clipped_sum import ClippedSum
from .continual_counting import BinaryMechanism
from .exponential import ExponentialMechanism, exponential_mechanism_pmf
from .gaussian import Gaussian, gaussian_delta
from .geometric import Geometric
from .histogram import Histogram
from .laplace import Laplace
from .noisy_max import ReportNoisyMax, report_noisy_max_pmf
from .noisy_mean import NoisyMean
from .numerical_svt import NumericalSVT
from .parallel import LaplaceParallel
from .prefix_sum import PrefixSum
from .randomized_response import RandomizedResponse, randomized_response_pmf
from .rappor import OneTimeRappor, Rappor
from .sparse_vector import SparseVector
from .sparse_vector_dwork_roth import SparseVectorDworkRoth
from .truncated_geometric import TruncatedGeometric, truncated_geometric_pmf

__all__ = [
    "BinaryMechanism",
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
