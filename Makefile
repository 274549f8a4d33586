# The README's two commands: `make demo` installs fio and disklab (scripts/setup.sh lab) and runs the quick
# profile on a temporary directory; `make test` also installs what the tests use (PostgreSQL, Chromium ...:
# scripts/setup.sh tests) and runs the whole test suite.
.PHONY: setup demo test postgresql man

VENV := .venv
LAB := $(VENV)/.installed-lab
TESTS := $(VENV)/.installed-tests
POSTGRESQL := $(VENV)/.installed-postgresql

$(LAB): pyproject.toml scripts/setup.sh
	scripts/setup.sh lab
	touch $@

$(POSTGRESQL): pyproject.toml scripts/setup.sh
	scripts/setup.sh postgresql
	touch $@ $(LAB)

$(TESTS): pyproject.toml scripts/setup.sh
	scripts/setup.sh tests
	touch $@ $(POSTGRESQL) $(LAB)

setup: $(LAB)

postgresql: $(POSTGRESQL)

demo: $(LAB)
	@dir=$$(mktemp -d -p /var/tmp disklab-demo.XXXXXX); \
	$(VENV)/bin/disklab doctor --target "$$dir" && \
	$(VENV)/bin/disklab run quick --target "$$dir"; status=$$?; \
	rm -rf "$$dir"; exit $$status

test: $(TESTS)
	$(VENV)/bin/python -m pytest -q --durations=15

# One man page per command, from the CLI's own help (scripts/man.py; the build writes the same): man -l docs/man/disklab.1
man: $(LAB)
	$(VENV)/bin/python scripts/man.py docs/man
