# Two commands do all set-up:  `make course` starts the course, `make test` runs the tests.
# Each creates or updates the local virtual environment (.venv) when needed.
PYTHON ?= python3
VENV   := .venv
STAMP  := $(VENV)/.installed

.PHONY: course test lab bench clean

course: $(STAMP)
	$(VENV)/bin/jaxlings

test: $(STAMP)
	$(VENV)/bin/python -m pytest

lab: $(STAMP)
	$(VENV)/bin/jaxlings train

bench: $(STAMP)
	$(VENV)/bin/python benchmarks/train_variants.py

$(STAMP): pyproject.toml constraints.txt
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -c constraints.txt torch==2.13.0
	$(VENV)/bin/python -m pip install -q -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

clean:
	rm -rf $(VENV) .pytest_cache
