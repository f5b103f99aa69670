# Two entry points for a fresh machine: `make demo` and `make test`.
# TORCH is what gets installed when the venv has no torch yet. The default is the CPU build;
# a GPU user installs their CUDA torch into .venv first (see README) and it is kept.
# onnxruntime (CPU) comes with the package; `make ort-gpu` swaps in ORT_GPU, and a later
# install keeps that swap (both distributions install the same `onnxruntime` module).
PYTHON ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
ORT_GPU ?= onnxruntime-gpu>=1.24
BIN := $(VENV)/bin
RUN_DIR ?= runs/demo
REPORT_DIR ?= reports/demo
KEY_DIR ?= keys/demo

.PHONY: install install-dev demo test lint typecheck bench clean ort-gpu keep-ort-gpu lock

$(BIN)/python:
	@echo "==> Creating the virtual environment $(VENV)"
	@$(PYTHON) -m venv $(VENV)

# Installs are pinned: requirements/runtime.lock (what the commands need) and
# requirements/dev.lock (that plus the tests' tools) hold every dependency at an exact version
# with its hashes, for every platform; pip installs exactly those (--require-hashes, --no-deps).
# torch stays outside the locks: the machine decides its build (TORCH, or a CUDA torch the
# user installed first). `make lock` refreshes both locks to today's releases.
LOCK_INSTALL := $(BIN)/pip install -qq --require-hashes --no-deps -r

$(VENV)/.installed-runtime: $(BIN)/python pyproject.toml requirements/runtime.lock
	@$(BIN)/python -c "import torch" 2>/dev/null || { \
	  echo "==> Installing $(TORCH) into $(VENV) (the CPU build unless you installed another;" \
	       "a few hundred MB, a few minutes the first time)"; \
	  $(BIN)/pip install -q "$(TORCH)"; }
	@echo "==> Installing the pinned runtime dependencies (requirements/runtime.lock) into $(VENV)"
	@$(LOCK_INSTALL) requirements/runtime.lock
	@echo "==> Installing gpubench-audit into $(VENV) (editable)"
	@$(BIN)/pip install -qq --no-deps -e .
	@$(MAKE) --no-print-directory keep-ort-gpu
	@touch $@

$(VENV)/.installed-dev: $(VENV)/.installed-runtime requirements/dev.lock
	@echo "==> Installing the pinned test and development tools (requirements/dev.lock) into" \
	      "$(VENV)"
	@$(LOCK_INSTALL) requirements/dev.lock
	@$(MAKE) --no-print-directory keep-ort-gpu
	@touch $@

# A GPU user's onnxruntime-gpu survives a lock install: the lock's CPU onnxruntime (the same
# module under another name) is removed again and the GPU build put back.
keep-ort-gpu:
	@if $(BIN)/pip show -q onnxruntime-gpu 2>/dev/null; then \
	  echo "==> Keeping onnxruntime-gpu: removing the CPU onnxruntime the lock put in"; \
	  v=$$($(BIN)/python -c "import importlib.metadata as m; print(m.version('onnxruntime-gpu'))"); \
	  $(BIN)/pip uninstall -q -y onnxruntime onnxruntime-gpu && \
	  $(BIN)/pip install -q "onnxruntime-gpu==$$v"; fi

# For CUDA machines: replace the CPU onnxruntime by the GPU build (CUDA and TensorRT providers).
ort-gpu: install
	$(BIN)/pip uninstall -q -y onnxruntime onnxruntime-gpu
	$(BIN)/pip install -q "$(ORT_GPU)"
	$(BIN)/python -c "import onnxruntime as o; print(o.__version__, o.get_available_providers())"

# The runtime is what `make demo` needs; `make test` adds the tests' tools.
install: $(VENV)/.installed-runtime
install-dev: $(VENV)/.installed-dev

# Refresh both locks to today's releases (uv, from the dev lock). Then run `make test` on the
# refreshed locks before committing them (README, "Pinned installs").
LOCK_FLAGS := --universal --python-version 3.11 --generate-hashes --upgrade --quiet \
	--override requirements/overrides.txt --no-emit-package torch
lock: install-dev
	$(BIN)/uv pip compile pyproject.toml --extra gpu $(LOCK_FLAGS) -o requirements/runtime.lock
	$(BIN)/uv pip compile pyproject.toml --extra gpu --extra hf --extra cluster --extra macos --extra dev \
	  $(LOCK_FLAGS) -o requirements/dev.lock
	@echo "==> Locks refreshed. Now: make test, and commit requirements/*.lock only if it passes."

# Each step says what it does; each path is printed once, at the end.
demo: install
	@rm -rf $(RUN_DIR) $(REPORT_DIR)
	@echo "==> [1/4] Running protocol A on this machine: 3 batch sizes, 1 cold + 5 warm" \
	      "passes each over 1,000 texts (about 20 s on an idle 2-core machine, a minute on a busy one; a line per pass)"
	@$(BIN)/runner execute --out $(RUN_DIR) > /dev/null
	@echo "==> [2/4] Auditing the run: every artifact and every rule, each claim recomputed"
	@$(BIN)/audit check $(RUN_DIR)
	@test -f $(KEY_DIR)/signer.key || { \
	  echo "==> Making a local test CA and signing key (not for procurement use)"; \
	  $(BIN)/audit keygen --out $(KEY_DIR) > /dev/null; }
	@echo "==> [3/4] Rendering the report (HTML and PDF), replaying 200 IDs of the archived" \
	     "model into it, and signing it"
	@$(BIN)/audit report $(RUN_DIR) --out $(REPORT_DIR) --replay 200 \
	  --key $(KEY_DIR)/signer.key --cert $(KEY_DIR)/signer.pem --chain $(KEY_DIR)/ca.pem \
	  > /dev/null
	@echo "==> [4/4] Verifying the signed report"
	@$(BIN)/audit verify $(REPORT_DIR) --ca $(KEY_DIR)/ca.pem
	@echo "==> Done. Signed report: $(REPORT_DIR)/report.pdf (page 1 is the summary; also" \
	      "report.html). Run directory: $(RUN_DIR). Test key and CA: $(KEY_DIR)."

# The suite runs over every core (pytest-xdist), a test file per worker: a file's module
# fixtures (runs built once, then read by many tests) stay in one process. Files go out in
# collection order, the longest first (tests/conftest.py's FIRST), not by test count.
test: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n auto --dist loadfile --no-loadscope-reorder

lint: install-dev typecheck
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy over auditor/, runner/ and schemas/ (mypy.ini); CI runs it after `make test`.
typecheck: install-dev
	$(BIN)/python -m mypy

bench: install-dev
	$(BIN)/python bench/runner_overhead.py
	$(BIN)/python bench/audit_bench.py
	$(BIN)/python bench/report_bench.py
	$(BIN)/python bench/readers_bench.py
	$(BIN)/python bench/archive_bench.py
	$(BIN)/python bench/replay_bench.py
	$(BIN)/python bench/schema_bench.py

clean:
	rm -rf $(VENV) runs reports keys build *.egg-info
