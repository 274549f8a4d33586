"""Suites: the model, the TOML loader, and the built-in suites shipped as data files."""
