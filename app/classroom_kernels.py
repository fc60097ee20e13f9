"""The classroom server's kernel manager: Jupyter Server's, with a fixed number of places.

Voila (``--preheat_kernel``) wraps this class with its pool of pre-heated kernels; Jupyter Server culls idle
kernels. What this class adds, and only this:

- at most ``max_kernels`` lab kernels run at once, pre-heated spares included. One more is refused with
  HTTP 503, which Voila renders with the template's ``503.html``: "the room is full", retried by the page;
- when a place frees up (a learner leaves, a kernel is culled or killed), pool entries that were refused or
  whose kernel died are dropped and the pool refilled (Voila does not refill after handing out a refusal),
  so the next learner gets a lab, not that refusal;
- a kernel that dies (killed by the OS, e.g. out of memory) is not restarted blank behind the learner's
  back (``KernelRestarter.restart_limit=0``, set by app/classroom.py): it is removed and its place freed;
  the learner's page says the lab stopped and to reload.

Voila imports it by name (``--VoilaConfiguration.multi_kernel_manager_class=classroom_kernels.
ClassroomKernelManager``) with app/ on PYTHONPATH (app/classroom.py sets both).
"""

import asyncio
import uuid

from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from tornado import web
from traitlets import Integer


class ClassroomKernelManager(AsyncMappingKernelManager):
    max_kernels = Integer(20, min=1, config=True,
                          help="Lab kernels that may run at once (pre-heated spares included); one more is refused.")

    def __init__(self, **kwargs):
        self._reserved = set()  # ids of kernels being started: not yet in _kernels or _pending_kernels
        self._closing = False
        super().__init__(**kwargs)

    def places_taken(self):
        return len(set(self._kernels) | set(self._pending_kernels) | self._reserved)

    async def start_kernel(self, *, kernel_id=None, **kwargs):
        if kernel_id is not None and kernel_id in self:
            return await super().start_kernel(kernel_id=kernel_id, **kwargs)
        if self._closing:
            raise web.HTTPError(503, "the classroom server is shutting down", reason="Server stopping")
        if self.places_taken() >= self.max_kernels:
            raise web.HTTPError(503, "all %d places of this room are taken", self.max_kernels, reason="Room full")
        kernel_id = kernel_id or str(uuid.uuid4())
        self._reserved.add(kernel_id)  # counted at once: 50 learners arriving together see each other
        try:
            return await super().start_kernel(kernel_id=kernel_id, **kwargs)
        finally:
            self._reserved.discard(kernel_id)

    def remove_kernel(self, kernel_id):
        removed = super().remove_kernel(kernel_id)
        self._place_freed()
        return removed

    async def shutdown_all(self, now=False):
        """Every lab, also those still starting (Jupyter's own shutdown_all fails on a kernel that is not
        ready yet, and Voila then exits without shutting the rest down)."""
        self._closing = True  # no refill, no new lab while everything is shut down
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 20
        while (self._reserved or self._pending_kernels) and loop.time() < deadline:
            await asyncio.sleep(0.2)
        await asyncio.gather(*(self._shutdown_quietly(kernel_id, now) for kernel_id in list(self._kernels)))

    async def _shutdown_quietly(self, kernel_id, now):
        try:
            await self.shutdown_kernel(kernel_id, now=now)
        except Exception as err:  # noqa: BLE001 - one kernel must not keep the others running
            self.log.warning("could not shut lab kernel %s down: %s", kernel_id, err)

    def _place_freed(self):
        """Drop refused or dead entries of Voila's pool and refill it (only when Voila pre-heats)."""
        pools = getattr(self, "_pools", None)
        if self._closing or not pools:
            return
        for notebook, pool in pools.items():
            # A refused learner took a refused entry without a refill, so the pool may also be short.
            pool[:] = [task for task in pool if not task.done() or self._usable(task)]
            self.fill_if_needed(notebook_name=notebook)

    def _usable(self, task):
        if task.cancelled() or task.exception() is not None:
            return False
        return task.result().get("kernel_id") in self
