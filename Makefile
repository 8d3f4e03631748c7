# nitpicker — the two set-up commands:
#   make crawl [URL=https://example.com/] [ARGS="--max-pages 100"]   install, then crawl
#   make test                                                        install, then run every test
# Both install whatever is missing first (virtual environment, Python packages, system packages).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install system crawl test bench clean

install: $(STAMP)

# System packages a fresh Debian machine may lack (only when missing; needs root or sudo).
system:
	@need=""; \
	$(PYTHON) -c "import ensurepip, venv" 2>/dev/null || need="$$need python3-venv"; \
	command -v sqlite3 >/dev/null || need="$$need sqlite3"; \
	command -v chromium >/dev/null || need="$$need chromium"; \
	if [ -n "$$need" ]; then \
	  echo "Installing system packages:$$need"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$need; \
	fi

$(STAMP): pyproject.toml | system
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@touch $(STAMP)

crawl: install
ifeq ($(strip $(URL)),)
	@$(PY) -m fixtures.demo $(ARGS)
else
	@$(VENV)/bin/nitpicker crawl $(URL) $(ARGS)
endif

# ruff (lint) first, then two pytest runs: the crawler's tests under the Twisted asyncio reactor, then the MCP
# server's (anyio) tests without it. Any non-zero exit — pytest's 5 (no tests) too — fails.
test: install
	$(VENV)/bin/ruff check nitpicker plugins tests bench fixtures
	$(PY) -m pytest
	$(PY) -m pytest -p no:twisted -o addopts="" -q tests/mcp

bench: install
	$(PY) bench/crawl_throughput.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache
