"""Deliberately broken mechanisms: the catalogue the auditor must catch.

One module per real-world bug pattern (the StatDP / DP-Sniper benchmarks and the bugs of Google's DP library
tests, dp-recorder and DP-Auditorium); every module docstring names the
bug, its source, and the mechanism's true ε (or δ). The attribute ``epsilon`` (and ``delta``) is
what the buggy code *claims*.
"""

from .binary_mechanism_missing_level import BinaryMechanismMissingLevel
from .budget_spent_twice import BudgetSpentTwice
from .data_dependent_scale import MeanDataDependentScale
from .exponential_no_half import ExponentialMechanismNoHalf
from .means_data_dependent_scale import MeansDataDependentScale
from .float_laplace import FloatingPointLaplace
from .gaussian_classic_large_epsilon import GaussianClassicLargeEpsilon
from .geometric_ignores_sensitivity import GeometricIgnoresSensitivity
from .histogram_scale_epsilon import HistogramScaleEpsilon
from .laplace_half_noise import LaplaceHalfNoise
from .laplace_mst_l1_scale_for_linf import LaplaceMSTL1ScaleForLInf
from .laplace_mst_true_weights import LaplaceMSTTrueWeights
from .pamst_data_dependent_sensitivity import PAMSTDataDependentSensitivity
from .pamst_full_budget_each_step import PAMSTFullBudgetEachStep
from .pamst_no_half import PAMSTNoHalf
from .pamst_releases_weights import PAMSTReleasesWeights
from .missing_clipping import SumMissingClipping
from .nan_through_clipping import SumNaNThroughClipping
from .no_noise import NoNoise
from .noisy_max_returns_value import NoisyMaxReturnsValue
from .rr_binary_formula import RandomizedResponseBinaryFormula
from .svt_no_cutoff import SVTNoCutoff
from .svt_no_query_noise import SVTNoQueryNoise
from .svt_outputs_value import SVTOutputsValue
from .svt_unscaled_query_noise import SVTUnscaledQueryNoise
from .truncated_geometric_rejection import TruncatedGeometricByRejection

__all__ = [
    "BinaryMechanismMissingLevel",
    "BudgetSpentTwice",
    "ExponentialMechanismNoHalf",
    "FloatingPointLaplace",
    "GaussianClassicLargeEpsilon",
    "GeometricIgnoresSensitivity",
    "HistogramScaleEpsilon",
    "LaplaceHalfNoise",
    "LaplaceMSTL1ScaleForLInf",
    "LaplaceMSTTrueWeights",
    "MeanDataDependentScale",
    "MeansDataDependentScale",
    "NoNoise",
    "NoisyMaxReturnsValue",
    "PAMSTDataDependentSensitivity",
    "PAMSTFullBudgetEachStep",
    "PAMSTNoHalf",
    "PAMSTReleasesWeights",
    "RandomizedResponseBinaryFormula",
    "SVTNoCutoff",
    "SVTNoQueryNoise",
    "SVTOutputsValue",
    "SVTUnscaledQueryNoise",
    "SumMissingClipping",
    "SumNaNThroughClipping",
    "TruncatedGeometricByRejection",
]
