"""Monte-Carlo checks of utility theorems: a theorem object gives a quantity, a bound and a sampler;
``check`` estimates the quantity with a confidence interval and says holds / violated / inconclusive.
"""
