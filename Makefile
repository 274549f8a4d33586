# The README's two commands: `make demo` installs everything and runs the quick
# profile on a temporary directory; `make test` runs the whole test suite.
.PHONY: setup demo test

VENV := .venv
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml scripts/setup.sh
	scripts/setup.sh
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	@dir=$$(mktemp -d -p /var/tmp disklab-demo.XXXXXX); \
	$(VENV)/bin/disklab doctor --target "$$dir" && \
	$(VENV)/bin/disklab run quick --target "$$dir"; status=$$?; \
	rm -rf "$$dir"; exit $$status

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q
