# nitpicker — the two set-up commands:
#   make crawl [URL=https://example.com/] [ARGS="--max-pages 100"]   install, then crawl
#   make test                                                        install, then run every test
# Both install whatever is missing first (virtual environment, Python packages, system packages).
# While you work:
#   make check     ruff, the layer contract and the fast tests (≤ 60 s): before every commit

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# the Node tools of the analyze plugins (package.json, package-lock.json), installed by npm ci
NODE_STAMP := node_modules/.installed

.PHONY: install system crawl check layers types test docs bench bench-analyze clean

install: $(STAMP) $(NODE_STAMP)

# System packages a fresh Debian machine may lack (only when missing; needs root or sudo).
system:
	@need=""; \
	$(PYTHON) -c "import ensurepip, venv" 2>/dev/null || need="$$need python3-venv"; \
	command -v sqlite3 >/dev/null || need="$$need sqlite3"; \
	command -v chromium >/dev/null || need="$$need chromium"; \
	command -v redis-server >/dev/null || need="$$need redis-server"; \
	command -v node >/dev/null || need="$$need nodejs"; \
	command -v npm >/dev/null || need="$$need npm"; \
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

# npm ci only when package.json or the lock changed since the last install (it empties node_modules)
$(NODE_STAMP): package.json package-lock.json | system
	@node -e "process.exit(+process.versions.node.split('.')[0] >= 20 ? 0 : 1)" || \
	  { echo "Error: the analyze plugins need Node.js 20 or newer (textlint 15), found $$(node --version)"; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error
	@touch $(NODE_STAMP)

crawl: install
ifeq ($(strip $(URL)),)
	@$(PY) -m fixtures.demo $(ARGS)
else
	@$(VENV)/bin/nitpicker crawl $(URL) $(ARGS)
endif

# What ruff lints (both targets start with it).
LINTED := nitpicker plugins tests bench fixtures reports docs
# pytest-xdist workers of make test. The suite waits on crawls, servers, browsers and
# subprocesses more than it computes, so more workers than cores (2 here) pay; tests that share
# a module- or session-scoped crawl stay on one worker (--dist loadgroup, tests/conftest.py).
TEST_WORKERS ?= 4

# The layer contract (.importlinter; docs/ARCHITECTURE.md, "The layers"): each layer imports only
# the layers below it, the query library no crawler, the core no bundled plugin or reporter, no
# cycles. It reads the imports, it runs nothing: about a second.
layers: install
	$(VENV)/bin/lint-imports --no-cache

# The type check (mypy, strict: pyproject.toml): the query library and the archive, the two
# packages every interface and the crawl read and write through, and the policy (the crawl's
# rules, pure functions). About three seconds.
TYPED := nitpicker/query nitpicker/archive nitpicker/policy
types: install
	$(VENV)/bin/mypy $(TYPED)

# make check: ruff, the layer contract, then the tests that are not marked integration
# (tests/conftest.py gives the marker by module and fixture) and the few marked smoke, on 2
# workers, each failing at 60 s. Any non-zero exit — pytest's 5 (no tests) too — fails.
check: install layers types
	$(VENV)/bin/ruff check $(LINTED)
	$(PY) -m pytest -n 2 --dist loadgroup -m "not integration or smoke" --timeout 60 -o faulthandler_timeout=50

# make test (CI, .ci/run): ruff and the layer contract, then two pytest runs: the crawler's
# tests under the Twisted asyncio reactor on $(TEST_WORKERS) workers, their 25 slowest printed
# (the first run also builds the manual strictly and crawls it with nitpicker: tests/test_docs.py,
# docs/crawl_check.py), then the MCP server's (anyio) tests without the reactor. Any non-zero
# exit — pytest's 5 (no tests) too — fails.
test: install layers types
	$(VENV)/bin/ruff check $(LINTED)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=25
	$(PY) -m pytest -p no:twisted -o addopts="" -q --durations=10 tests/mcp

# The manual: the reference pages written from the code, the site built into site/ strictly (a
# broken link or anchor, a page left out of the navigation: any warning fails), then served on
# 127.0.0.1 and crawled by nitpicker itself, which fails on any broken link.
docs: install
	$(PY) docs/gen_reference.py
	$(VENV)/bin/mkdocs build --strict
	$(PY) docs/crawl_check.py site

bench: install
	$(PY) bench/crawl_throughput.py

bench-analyze: install
	$(PY) bench/analyze_engines.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache node_modules site
