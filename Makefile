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

.PHONY: install demo test lint bench clean ort-gpu

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/pip install -q "$(TORCH)"
	$(BIN)/pip install -q -e ".[dev]"
	@if $(BIN)/pip show -q onnxruntime-gpu 2>/dev/null; then \
	  echo "keeping onnxruntime-gpu: removing the CPU onnxruntime the install pulled in"; \
	  v=$$($(BIN)/python -c "import importlib.metadata as m; print(m.version('onnxruntime-gpu'))"); \
	  $(BIN)/pip uninstall -q -y onnxruntime onnxruntime-gpu && \
	  $(BIN)/pip install -q "onnxruntime-gpu==$$v"; fi
	touch $@

# For CUDA machines: replace the CPU onnxruntime by the GPU build (CUDA and TensorRT providers).
ort-gpu: install
	$(BIN)/pip uninstall -q -y onnxruntime onnxruntime-gpu
	$(BIN)/pip install -q "$(ORT_GPU)"
	$(BIN)/python -c "import onnxruntime as o; print(o.__version__, o.get_available_providers())"

install: $(VENV)/.installed

demo: install
	rm -rf $(RUN_DIR) $(REPORT_DIR)
	$(BIN)/runner execute --out $(RUN_DIR)
	$(BIN)/audit check $(RUN_DIR)
	test -f $(KEY_DIR)/signer.key || $(BIN)/audit keygen --out $(KEY_DIR)
	$(BIN)/audit report $(RUN_DIR) --out $(REPORT_DIR) \
	  --key $(KEY_DIR)/signer.key --cert $(KEY_DIR)/signer.pem --chain $(KEY_DIR)/ca.pem
	$(BIN)/audit verify $(REPORT_DIR) --ca $(KEY_DIR)/ca.pem
	@echo "Signed report: $(abspath $(REPORT_DIR))/report.pdf"

test: install
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: install
	$(BIN)/python bench/runner_overhead.py
	$(BIN)/python bench/audit_bench.py
	$(BIN)/python bench/report_bench.py
	$(BIN)/python bench/readers_bench.py

clean:
	rm -rf $(VENV) runs reports keys build *.egg-info
