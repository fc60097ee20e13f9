"""A JupyterHub for a workshop room on one Linux machine: the configuration tried here (INSTRUCTORS.md, JupyterHub).

Tried on 2026-12-02 with JupyterHub 6.1.1 and configurable-http-proxy 4.6.3 (npm), two local Linux users on
127.0.0.1: each logged in, got a server of their own, opened the course and ran MindSpore as themselves.
Replace the DummyAuthenticator (one shared password, for a closed room only) by your institution's login, and
put HTTPS in front of it (a reverse proxy) before opening it beyond 127.0.0.1.

    sudo jupyterhub -f app/jupyterhub/jupyterhub_config.py
"""

c = get_config()  # noqa: F821 (JupyterHub defines it when it reads this file)

COURSE_VENV = "/opt/mindspore-course/.venv"  # the course's pins and jupyterhub, readable and runnable by every user

c.JupyterHub.ip = "127.0.0.1"  # a reverse proxy with HTTPS in front for a room
c.JupyterHub.port = 8000
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = "change me"
c.Authenticator.allowed_users = {"learner1", "learner2"}  # the room's Linux users (useradd -m learnerN)
c.Spawner.cmd = [f"{COURSE_VENV}/bin/jupyterhub-singleuser"]
c.Spawner.notebook_dir = "~/mindspore-course/notebooks"  # each user's own clone of the course
c.Spawner.default_url = "/lab"
c.Spawner.environment = {"GLOG_v": "3"}
c.Spawner.start_timeout = 120
