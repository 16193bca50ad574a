"""Deliberately broken mechanisms: the catalogue the auditor must catch.

One module per real-world bug pattern (the StatDP / DP-Sniper benchmarks and the bugs of Google's DP library
tests, dp-recorder and DP-Auditorium); every module docstring names the
bug, its source, and the mechanism's true ε (or δ). The attribute ``epsilon`` (and ``delta``) is
what the buggy code *claims*.
"""

from algorithms.broken.budget_spent_twice import BudgetSpentTwice
from algorithms.broken.data_dependent_scale import MeanDataDependentScale
from algorithms.broken.exponential_no_half import ExponentialMechanismNoHalf
from algorithms.broken.float_laplace import FloatingPointLaplace
from algorithms.broken.gaussian_classic_large_epsilon import GaussianClassicLargeEpsilon
from algorithms.broken.geometric_ignores_sensitivity import GeometricIgnoresSensitivity
from algorithms.broken.histogram_scale_epsilon import HistogramScaleEpsilon
from algorithms.broken.laplace_half_noise import LaplaceHalfNoise
from algorithms.broken.laplace_mst_l1_scale_for_linf import LaplaceMSTL1ScaleForLInf
from algorithms.broken.laplace_mst_true_weights import LaplaceMSTTrueWeights
from algorithms.broken.pamst_data_dependent_sensitivity import PAMSTDataDependentSensitivity
from algorithms.broken.pamst_full_budget_each_step import PAMSTFullBudgetEachStep
from algorithms.broken.pamst_no_half import PAMSTNoHalf
from algorithms.broken.pamst_releases_weights import PAMSTReleasesWeights
from algorithms.broken.missing_clipping import SumMissingClipping
from algorithms.broken.nan_through_clipping import SumNaNThroughClipping
from algorithms.broken.no_noise import NoNoise
from algorithms.broken.noisy_max_returns_value import NoisyMaxReturnsValue
from algorithms.broken.rr_binary_formula import RandomizedResponseBinaryFormula
from algorithms.broken.svt_no_cutoff import SVTNoCutoff
from algorithms.broken.svt_no_query_noise import SVTNoQueryNoise
from algorithms.broken.svt_outputs_value import SVTOutputsValue
from algorithms.broken.svt_unscaled_query_noise import SVTUnscaledQueryNoise
from algorithms.broken.truncated_geometric_rejection import TruncatedGeometricByRejection

__all__ = [
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
