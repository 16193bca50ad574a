"""Packages of the distribution: dpverify, and the repository's top-level algorithms/ installed as dpverify.algorithms
(see the comment in pyproject.toml).  Everything else is in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["dpverify", "dpverify.*"])
    + ["dpverify." + p for p in find_packages(include=["algorithms", "algorithms.*"])],
    package_dir={"dpverify.algorithms": "algorithms"},
)
