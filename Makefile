# Two commands do all set-up:  `make course` starts the course, `make test` runs the tests.
# Each creates or updates the local virtual environment (.venv) when needed.
PYTHON ?= python3
VENV   := .venv
STAMP  := $(VENV)/.installed

# The translations: course/locale/<lang>/LC_MESSAGES/<domain>.po are the sources, kept in git;
# the .mo files are compiled from them here (and again at run time if they are stale).
LOCALES := course/locale
MO      := $(patsubst %.po,%.mo,$(wildcard $(LOCALES)/*/LC_MESSAGES/*.po))

.PHONY: course test lab bench clean catalogs

course: $(STAMP) $(MO)
	$(VENV)/bin/jaxlings

test: $(STAMP) $(MO)
	$(VENV)/bin/python -m pytest -n 2 --dist loadgroup

lab: $(STAMP) $(MO)
	$(VENV)/bin/jaxlings train

bench: $(STAMP)
	$(VENV)/bin/python benchmarks/train_variants.py

%.mo: %.po $(STAMP)
	$(VENV)/bin/pybabel -q compile -i $< -o $@

# After changing English text: extract it again and merge it into every language's .po
# (new messages arrive untranslated; tests/test_i18n.py fails until they are translated).
catalogs: $(STAMP)
	$(VENV)/bin/pybabel -q extract -F babel-ui.cfg -k N_ --sort-by-file --no-wrap -c "" \
	  --project jaxlings -o $(LOCALES)/jaxlings.pot .
	$(VENV)/bin/pybabel -q extract -F babel-app.cfg -k N_ --sort-by-file --no-wrap -c "" \
	  --project jaxlings -o $(LOCALES)/app.pot .
	$(VENV)/bin/pybabel -q extract -F babel-content.cfg --sort-by-file --no-wrap \
	  --project jaxlings -o $(LOCALES)/content.pot .
	for domain in jaxlings app content; do \
	  $(VENV)/bin/pybabel -q update -D $$domain -i $(LOCALES)/$$domain.pot -d $(LOCALES) \
	    --no-wrap --ignore-obsolete --no-fuzzy-matching; done
	rm -f $(LOCALES)/*.pot

$(STAMP): pyproject.toml constraints.txt
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -c constraints.txt torch==2.13.0
	$(VENV)/bin/python -m pip install -q -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

clean:
	rm -rf $(VENV) .pytest_cache
