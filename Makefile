# The course's commands. Every target creates the virtual environment .venv from the pins first
# when it is missing or older than requirements.txt / pyproject.toml.
#   make lab      open the course in JupyterLab (127.0.0.1, with a token)
#   make app      the learning-rate lab alone, as a classroom app (Voila on 127.0.0.1, with a token)
#   make test     the whole test suite: lint, unit tests, every notebook under strict nbval (student copy and a
#                 second Run All in one kernel), the browser tests, real msrun jobs; 2 workers (JOBS=2)
#   make test-quick  lint, unit and hygiene tests only (no notebook, browser or msrun): the edit loop
#   make durations   re-measure each test file's time into tests/durations.json (the suite's scheduling order)
#   make check    the setup check for workshop attendees
#   make execute  re-run the notebooks and store their outputs deterministically (NB=notebooks/03_*.ipynb for one)
#   make student     the workshop hand-out in student/ (outputs cleared; .solution() refers to the instructor)
#   make instructor  the instructor edition in instructor/ (each reference solution inline after its exercise)
#   make browser  install Debian's chromium for the browser tests, if missing (root; CI runs it)

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NB     ?= notebooks/*.ipynb app/learning_rate_lab.ipynb
# JupyterLab refuses to start as root unless told; a root user is common in containers and CI.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

export GLOG_v := 3

JOBS   ?= 2

.PHONY: venv lab app test test-quick durations check execute student instructor clean-venv browser

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade --quiet pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@touch $(STAMP)

lab: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=notebooks $(ROOT_FLAG)

app: $(STAMP)
	$(BIN)/python app/serve.py

# tests/test_browser.py drives this Chromium through playwright (never `playwright install`, which downloads one).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  test "$$(id -u)" = 0 || { echo "run as root (or: sudo apt-get install -y chromium)"; exit 1; }; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	@chromium --version 2>/dev/null

# Whole files go to a worker (a notebook's cells share one kernel; a browser or launcher module shares servers).
test: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS)

test-quick: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) tests -m "not browser and not msrun"

durations: $(STAMP)
	COURSE_WRITE_DURATIONS=1 $(BIN)/python -m pytest -n $(JOBS)

check: $(STAMP)
	$(BIN)/python -m course_utils.setup_check

execute: $(STAMP)
	$(BIN)/python tools/execute_notebooks.py $(NB)

clean-venv:
	rm -rf $(VENV)

student: $(STAMP)
	$(BIN)/python tools/make_editions.py student

instructor: $(STAMP)
	$(BIN)/python tools/make_editions.py instructor
