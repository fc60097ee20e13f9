"""The lab's widget: an anywidget whose ES module (``web/lab.js``) draws every slider move in the browser.

The kernel sends a setting's payload once (``payload.sweep_payload``: every slider position's run and what
the lab says about it); a drag is drawn from it with no message to the kernel; a release, a button or a
typed value reaches the kernel as one action, which ``LearningRateLab`` answers by changing the traits.
"""

import pathlib

import anywidget
import traitlets

WEB = pathlib.Path(__file__).resolve().parent / "web"


class LabWidget(anywidget.AnyWidget):
    _esm = WEB / "lab.js"
    _css = WEB / "lab.css"
    mode = traitlets.Unicode("kernel").tag(sync=True)  # "kernel": a notebook's live lab (lab.js asks it is alive)
    live = traitlets.Unicode("").tag(sync=True)  # a banner line, when the host has one to show
    surface = traitlets.Dict().tag(sync=True)
    labels = traitlets.Dict().tag(sync=True)
    payload = traitlets.Bytes(b"").tag(sync=True)
    state = traitlets.Dict().tag(sync=True)
    steps_options = traitlets.List().tag(sync=True)
    tries = traitlets.List().tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    alarm = traitlets.Bool(False).tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)
    message_error = traitlets.Bool(False).tag(sync=True)
    challenge = traitlets.Dict().tag(sync=True)
    busy = traitlets.Bool(False).tag(sync=True)
