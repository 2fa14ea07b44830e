"""Warm sandboxes: a bubblewrap sandbox kept between jobs, forking each job's driver from a zygote.

Starting bubblewrap and Python costs tens of milliseconds a program; a fork from a zygote that has
already imported the driver costs about one. A `Worker` is one sandbox running zygote.py; it runs one
job at a time and, before it takes the next, its zygote has killed and reaped every process the last
job left, emptied the scratch folders and found nothing else changed (else it ends; see zygote.py).
Idle workers wait in a pool per disk size. Each job still gets its own pipes, rlimits, cgroup (joined
by the harness before the job is sent) and wall clock; a worker that misbehaves (it died, stopped
answering, or could not clean up) is killed and replaced, and the job it held ends as an error of its
own, never silently.
"""

from __future__ import annotations

import array
import atexit
import json
import os
import select
import signal
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

from harness import HarnessError
from harness.sandbox import isolation
from harness.sandbox.cgroup import Cgroup

ANCILLARY = socket.CMSG_SPACE(12) + socket.CMSG_SPACE(4)  # a sender's credentials and one descriptor
START_SECONDS = 30.0  # a worker's bubblewrap and zygote starting, on a loaded machine
CLEAN_SECONDS = 10.0  # a job's leftovers killed and its folders emptied, after the job ended
# workers are started from one long-lived thread: bubblewrap's --die-with-parent follows the thread
# that started it, and the scorers' threads come and go
_spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="harness-sandbox-spawner")
_idle: dict[int, list[Worker]] = {}
_lock = threading.Lock()


class WorkerLost(HarnessError):
    """The worker's zygote ended or broke its protocol (from a new worker: the sandbox cannot run)."""


class Worker:
    """One warm sandbox (bubblewrap around zygote.py) and its control socket."""

    def __init__(self, disk_mb: int):
        self.disk_mb = disk_mb
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)  # each message names its sender
        argv = isolation.warm_command(disk_mb) + [str(theirs.fileno())]
        try:
            self.popen = _spawner.submit(
                subprocess.Popen,
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                env={},
                cwd="/",
                start_new_session=True,
            ).result()
        except OSError:
            self.control.close()
            raise
        finally:
            theirs.close()
        try:
            message, _, _ = self.receive(time.monotonic() + START_SECONDS)
        except WorkerLost:
            self.close()
            raise
        if message is None or "ready" not in message:
            self.close()
            raise WorkerLost("the warm sandbox did not start")

    def receive(self, deadline: float) -> tuple[dict | None, int, list[int]]:
        """The zygote's (or a just-forked child's) next message, its sender's pid on this machine and
        the descriptors attached; (None, 0, []) if none came before `deadline`."""
        ready, _, _ = select.select([self.control], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return None, 0, []
        try:
            data, ancillary, _, _ = self.control.recvmsg(1 << 12, ANCILLARY)
        except OSError as e:
            raise WorkerLost(str(e)) from None
        sender, fds = 0, []
        for level, kind, body in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(body) >= 12:
                sender = struct.unpack("3i", body[:12])[0]
            elif level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds += array.array("i", body[: len(body) - len(body) % 4]).tolist()
        if not data:
            raise WorkerLost("the zygote ended")
        try:
            message = json.loads(data)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            for fd in fds:
                os.close(fd)
            raise WorkerLost("malformed message from the zygote")
        return message, sender, fds

    def fork(self, fds: list[int], fresh: bool) -> tuple[int, int]:
        """Start a job's driver on `fds` (stdin, stdout, stderr, requests, replies), in a fresh
        interpreter with `fresh`; its pid here and a pidfd of it (the child's own)."""
        try:
            socket.send_fds(self.control, [json.dumps({"fork": True, "exec": fresh}).encode()], fds)
        except OSError as e:
            raise WorkerLost(str(e)) from None
        message, sender, pidfds = self.receive(time.monotonic() + START_SECONDS)
        if message != {"started": True} or sender <= 0 or len(pidfds) != 1:
            for fd in pidfds:
                os.close(fd)
            raise WorkerLost("the zygote did not start the job")
        return sender, pidfds[0]

    def alive(self) -> bool:
        return self.popen.poll() is None

    def close(self) -> None:
        """Kill the whole sandbox (its bubblewraps take every process inside with them)."""
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.popen.wait()
        self.control.close()


def _workers(disk_mb: int) -> Iterator[Worker]:
    """The idle workers, the last put back first, then a new one."""
    while True:
        with _lock:
            idle = _idle.setdefault(disk_mb, [])
            worker = idle.pop() if idle else None
        if worker is None:
            break
        if worker.alive():
            yield worker
        else:
            worker.close()
    yield Worker(disk_mb)


def _give_back(worker: Worker) -> None:
    with _lock:
        _idle.setdefault(worker.disk_mb, []).append(worker)


def close_all() -> None:
    """Kill every idle worker (the next job starts a fresh one); also at exit, where the rest die with
    the spawner thread anyway (--die-with-parent)."""
    with _lock:
        workers = [w for idle in _idle.values() for w in idle]
        _idle.clear()
    for worker in workers:
        worker.close()


atexit.register(close_all)


class Job:
    """One job forked in a warm worker: the process handle `Proc` drives (poll, kill, wait). Its
    `returncode` comes as soon as the job's process has ended; `lost` says the worker ended or broke
    before it was clean again (the job's own verdict stands if its exit code had come)."""

    def __init__(self, disk_mb: int, fds: list[int], group: Cgroup | None, fresh: bool):
        for worker in _workers(disk_mb):  # an idle one may have died since it was put back: the next
            try:
                self.pid, self.pidfd = worker.fork(fds, fresh)
                self.worker = worker
                break
            except WorkerLost:
                worker.close()
        else:
            raise WorkerLost("a new warm sandbox could not start a job")
        self.returncode: int | None = None
        self.reusable: bool | None = None  # the zygote's word, once it has cleaned up after the job
        self.lost = False
        if group is not None:
            try:
                group.add(self.pid)
            except OSError:
                self._lose()
                os.close(self.pidfd)
                raise

    def fileno(self) -> int:
        """Readable when the zygote has something to say (the job's end)."""
        return self.worker.control.fileno()

    def poll(self) -> int | None:
        if self.returncode is None and not self.lost:
            self._receive(time.monotonic())
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None and not self.lost:
            try:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def wait(self) -> None:
        """Until the zygote has cleaned up after the job; else the worker is lost. Then the worker goes
        back to the pool (once), if the zygote found it as it started."""
        if self.pidfd < 0:
            return
        deadline = time.monotonic() + CLEAN_SECONDS
        while self.reusable is None and not self.lost:
            if time.monotonic() > deadline:
                self._lose()
                break
            self._receive(deadline)
        os.close(self.pidfd)
        self.pidfd = -1
        if self.reusable:
            _give_back(self.worker)
        elif not self.lost:  # the job changed what the zygote cannot undo: the zygote has ended
            self.worker.close()

    def _receive(self, deadline: float) -> None:
        try:
            message, _, fds = self.worker.receive(deadline)
        except WorkerLost:
            self._lose()
            return
        if message is None:
            return
        if fds:
            for fd in fds:
                os.close(fd)
            self._lose()
        elif self.returncode is None and set(message) == {"exit"} and type(message["exit"]) is int:
            self.returncode = message["exit"]
        elif (
            self.returncode is not None and set(message) == {"reusable"} and type(message["reusable"]) is bool
        ):
            self.reusable = message["reusable"]
        else:
            self._lose()

    def _lose(self) -> None:
        self.lost = True
        self.worker.close()
