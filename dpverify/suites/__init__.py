"""Suite files: the TOML schema of ``[[entry]]`` tables, loading and validation, and the runner that turns
entries into outcomes (``suite``)."""
