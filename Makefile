# The course's commands. Every target creates the virtual environment .venv from the pins first
# when it is missing or older than the pin files / pyproject.toml: what a learner needs (requirements.txt) for
# lab, app and check; also a contributor's tools (requirements-dev.txt) for the others.
#   make lab      open the course in JupyterLab (127.0.0.1, with a token)
#   make lab-zh   the Chinese edition (中文版) in JupyterLab with its Chinese interface and Chinese course messages
#   make app      the learning-rate lab alone, as a classroom app (Voila on 127.0.0.1, with a token)
#   make classroom   the lab for a whole room from this machine (IP=lan ROOM=20 PORT=8866; see INSTRUCTORS.md)
#   make app-zh, make classroom-zh   the same two in Chinese (中文版)
#   make test     the whole test suite: lint, unit tests, every notebook under strict nbval (student copy and a
#                 second Run All in one kernel), the browser tests, real msrun jobs; 2 workers (JOBS=2)
#   make test-quick  lint, unit and hygiene tests only (no notebook, browser or msrun): the edit loop
#   make durations   re-measure each test file's time into tests/durations.json (the suite's scheduling order)
#   make check    the setup check for workshop attendees
#   make execute  re-run the notebooks and store their outputs deterministically (NB=notebooks/03_*.ipynb for one),
#                 then regenerate the Chinese edition (make zh)
#   make zh       the Chinese edition in zh/notebooks/ from notebooks/ and translations/zh/ (tools/zh.py); keeps
#                 the outputs of unchanged code cells (make execute re-runs it)
#   make student     the workshop hand-out in student/ (outputs cleared; .solution() refers to the instructor);
#                    both languages: student/notebooks/ and student/zh/notebooks/ (the same for instructor/)
#   make instructor  the instructor edition in instructor/ (each reference solution inline after its exercise)
#   make browser  install Debian's chromium and a Chinese font for the browser tests, if missing (root; CI runs it)
#   make test-matrix  every notebook on each tested MindSpore (2.7.2 2.8.0 2.9.0 2.10.0; MS="2.8.0 2.9.0" for some),
#                 one fresh venv under /tmp each, removed after: the table in docs/version-matrix.md (opt-in, not
#                 part of make test; measured per version on 2 cores, MATRIX_JOBS=2: 2-3 min install + 7-10 min of
#                 notebooks when idle, up to 19 + 45 min when shared; 3.3 GB of /tmp)
#   make test-py312  the second supported Python: a fresh 3.12 venv (under /tmp, installed from a wheelhouse with no
#                 index), the quick tier and every notebook
#   make slides   slides of each notebook's teaching part, offline (build/slides/en/, build/slides/zh/)
#   make site     the course as a website, English and Chinese, from the stored outputs, offline (build/site/)
#   make site-serve  serve that website on http://127.0.0.1:8000/ (SITE_PORT=8001 for another port)
#   make wheelhouse  every pinned wheel for Linux, Windows and macOS in wheelhouse/ (WHEELHOUSE=<folder>), for a room
#                 with no internet: COURSE_WHEELHOUSE=<folder> then installs from it
#   Without make (Windows, macOS): python course.py lab, python course.py test, ... (python course.py --help)

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
NB     ?= notebooks/*.ipynb app/learning_rate_lab.ipynb
# course.py does the work of every target below (so a learner without make, on Windows or macOS, types the same
# thing: python course.py lab); it creates or updates .venv from the pins first.
COURSE := $(PYTHON) course.py

export GLOG_v := 3

JOBS   ?= 2

.PHONY: site site-serve slides wheelhouse venv dev-venv lab lab-zh app app-zh classroom classroom-zh test test-quick durations check execute zh student instructor clean-venv browser test-py312 test-matrix

venv:
	$(COURSE) venv

dev-venv:
	@$(COURSE) venv --dev >/dev/null

lab:
	$(COURSE) lab

# The Chinese edition (zh/notebooks/), with JupyterLab's menus in Chinese and the course's messages in Chinese.
lab-zh:
	$(COURSE) lab --zh

app:
	$(COURSE) app

app-zh:
	$(COURSE) app --zh

# 127.0.0.1 unless IP is given (IP=lan: this machine's address on the local network, printed with a warning).
IP   ?= 127.0.0.1
ROOM ?= 20
PORT ?= 8866
classroom:
	$(COURSE) classroom --ip $(IP) --room $(ROOM) --port $(PORT)

classroom-zh:
	$(COURSE) classroom --zh --ip $(IP) --room $(ROOM) --port $(PORT)

# Slides of each notebook's teaching part in both languages (tools/slides.py): each folder holds index.html
# and its own copy of reveal.js, so it works from a USB stick (file://) with no network.
slides: dev-venv
	$(BIN)/python tools/slides.py --lang en
	$(BIN)/python tools/slides.py --lang zh

# The course website (tools/site.py, site/): every lesson with its stored outputs, the course map, install and run,
# the glossary, the corrections, the instructor guide and the learning-rate lab, in English (build/site/en/) and
# Chinese (build/site/zh/), with a language switch on every page. Nothing is executed or fetched.
SITE_PORT ?= 8000
site:
	$(COURSE) site

site-serve:
	$(COURSE) site-serve --port $(SITE_PORT)

# Every pinned wheel for Linux, Windows and macOS, Python 3.11 and 3.12 (about 2.9 GB), for a room with no
# internet: copy the folder to each machine (or a USB stick) and set COURSE_WHEELHOUSE=<folder> (INSTRUCTORS.md).
WHEELHOUSE ?= wheelhouse
wheelhouse:
	$(COURSE) wheelhouse $(WHEELHOUSE)

# tests/test_browser.py drives this Chromium through playwright (never `playwright install`, which downloads one).
# A Chinese font too (1.6 MB): without one, the Chinese edition's headings and buttons show empty boxes.
browser:
	@{ command -v chromium >/dev/null 2>&1 && fc-list :lang=zh | grep -q .; } || { \
	  test "$$(id -u)" = 0 || { echo "run as root (or: sudo apt-get install -y chromium fonts-wqy-microhei)"; exit 1; }; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-microhei >/dev/null; }
	@chromium --version 2>/dev/null

# Whole files go to a worker (a notebook's cells share one kernel; a browser or launcher module shares servers).
test:
	$(COURSE) test --jobs $(JOBS)

test-quick:
	$(COURSE) test --quick --jobs $(JOBS)

# Python 3.12 (the course supports 3.11 and 3.12): install both pin files into a fresh venv, then the setup check,
# the quick tier and every notebook under strict nbval (no browser, no msrun: those do not depend on the Python).
# .ci/run calls it after `make test` when a working python3.12 exists (pyenv's shim alone does not count).
PY312   ?= $(shell for p in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12; do \
             "$$p" -c 'import sys; print(sys.executable)' 2>/dev/null && break; done)
VENV312 ?= /tmp/mindspore-course-py312
# It installs from a wheelhouse with pip's index switched off: the offline install a workshop room uses is proven too.
WH312   ?= /tmp/mindspore-course-wheelhouse-py312
test-py312:
	@test -n "$(PY312)" || { echo "no working python3.12 found"; exit 1; }
	@test -x $(VENV312)/bin/python || $(PY312) -m venv $(VENV312)
	$(PY312) course.py wheelhouse $(WH312) --system linux --python 3.12 --dev
	$(VENV312)/bin/python -m pip install --quiet --no-index --find-links $(WH312) -r requirements-dev.txt
	$(VENV312)/bin/python -m pip install --quiet --no-index --find-links $(WH312) --no-deps -e .
	$(VENV312)/bin/python -m course_utils.setup_check --contributor
	$(VENV312)/bin/python -m pytest -n $(JOBS) tests -m "not browser and not msrun" -p no:cacheprovider
	$(VENV312)/bin/python -m pytest -n $(JOBS) notebooks app/learning_rate_lab.ipynb zh/app/learning_rate_lab.ipynb \
	  -p no:cacheprovider

# Which MindSpore runs which lesson (tools/matrix.py): one version at a time, 2 workers (MATRIX_JOBS=1: one).
MS          ?= 2.7.2 2.8.0 2.9.0 2.10.0
MATRIX_JOBS ?= 2
test-matrix:
	$(COURSE) test-matrix $(MS) --jobs $(MATRIX_JOBS)

durations: dev-venv
	COURSE_WRITE_DURATIONS=1 $(BIN)/python -m pytest -n $(JOBS)

check:
	$(COURSE) check

# The Chinese edition of the notebooks just run (those that have one) is rebuilt and run too: its stored outputs
# are what the Chinese edition prints (COURSE_LANG=zh).
execute:
	$(COURSE) execute $(NB)

zh: dev-venv
	$(BIN)/python tools/zh.py build

clean-venv:
	rm -rf $(VENV)

student: dev-venv
	$(BIN)/python tools/make_editions.py student

instructor: dev-venv
	$(BIN)/python tools/make_editions.py instructor
