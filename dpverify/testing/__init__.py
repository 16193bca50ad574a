"""dpverify inside a user's test suite: Hypothesis strategies of neighbouring inputs (``strategies``),
``assert_private`` / ``assert_theorem`` (``asserts``) and the pytest plugin (``pytest_plugin``).
"""
