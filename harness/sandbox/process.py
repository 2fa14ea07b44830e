"""One sandboxed driver process: start it, talk to it by JSON lines, bound and kill it.

Everything is read outside the sandbox with hard limits: stdout is kept up to a cap (more kills the
process), stderr keeps its first bytes, a message on the reply channel is at most `output_mb`, and
every wait has a wall-clock deadline after which the whole tree (the process, its cgroup, and the rest
of its warm sandbox's pid namespace or, unisolated, its process group) is killed. With a `key`, every
message must carry HMAC-SHA256(key, "n:" + line) for its sequence number n (the trusted checker's
channel: a line written by anyone else ends the exchange).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness.sandbox import cgroup, exits, isolation, warm
from harness.sandbox.limits import Limits


class Ended(Exception):
    """The process stopped answering: it exited, was killed at a limit, or broke the protocol."""


@dataclass(frozen=True)
class Exit:
    """How a process ended. `status`: ok, timeout, memory or error, from the exit status and the harness's
    own accounting (its wall clock, the cgroup's OOM count, the rlimits' signals and the driver's
    MEMORY status); `stderr` is only ever shown, never read for a status."""

    status: str
    reason: str
    returncode: int | None
    stdout: bytes
    stderr: str
    seconds: float


def _dead(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    return False


@functools.cache
def remove_stale() -> None:
    """Once per harness process: remove what a killed harness left (its cgroups and work folders)."""
    cgroup.remove_stale(_dead)
    for folder in Path(tempfile.gettempdir()).glob("harness-sandbox-*-*"):
        owner = folder.name.split("-")[2]
        if owner.isdigit() and _dead(int(owner)):
            shutil.rmtree(folder, ignore_errors=True)


class Unisolated:
    """A driver process started on its own, without isolation (only where the user opted in)."""

    def __init__(self, fds: list[int], group: cgroup.Cgroup | None):
        argv, env = isolation.unisolated_command()
        argv += [str(fds[3]), str(fds[4])]
        if group is not None:  # join the group before anything runs
            joins = " && ".join(f'echo $$ > "{d}/cgroup.procs"' for d in set(group.dirs.values()))
            argv = ["/bin/sh", "-c", f'{joins} && exec "$@"', "sh", *argv]
        self.tempdir = tempfile.TemporaryDirectory(prefix=f"harness-sandbox-{os.getpid()}-")
        self.popen = subprocess.Popen(
            argv,
            stdin=fds[0],
            stdout=fds[1],
            stderr=fds[2],
            pass_fds=(fds[3], fds[4]),
            env=env,
            cwd=self.tempdir.name,
            start_new_session=True,
        )
        self.lost = False

    def fileno(self) -> None:
        return None

    def poll(self) -> int | None:
        return self.popen.poll()

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    def kill(self) -> None:
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def wait(self) -> None:
        self.popen.wait()
        self.tempdir.cleanup()


class Proc:
    """One job's driver process. Isolated, it is forked in a warm sandbox (warm.py; with
    `fresh_interpreter`, a new Python there, with its own hash seed and address layout); without
    isolation, where the user opted in, a process of its own (`Unisolated`)."""

    def __init__(
        self,
        job: dict,
        limits: Limits,
        stdin: bytes | None = None,
        key: bytes | None = None,
        fresh_interpreter: bool = False,
    ):
        self.limits = limits
        remove_stale()
        self.key, self._received = key, 0
        self.group = (
            cgroup.Cgroup(limits.processes, limits.memory_mb << 20) if cgroup.available()[0] else None
        )
        stdin_r, self._stdin = os.pipe()
        self._stdout, stdout_w = os.pipe()
        self._stderr, stderr_w = os.pipe()
        to_child, self._requests = os.pipe()
        self._replies, from_child = os.pipe()
        theirs = [stdin_r, stdout_w, stderr_w, to_child, from_child]
        self.started = time.monotonic()
        try:
            self.child = (
                warm.Job(limits.disk_mb, theirs, self.group, fresh_interpreter)
                if isolation.isolated()
                else Unisolated(theirs, self.group)
            )
        except BaseException:
            for fd in (self._stdin, self._stdout, self._stderr, self._requests, self._replies):
                os.close(fd)
            if self.group is not None:
                self.group.remove()
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        self._open = {self._stdin, self._stdout, self._stderr, self._requests, self._replies}
        self.stdout, self.stderr, self._reply_buffer = bytearray(), bytearray(), bytearray()
        self.stderr_dropped = 0
        self.failure: tuple[str, str] | None = None  # (status, reason) of a limit we enforced
        self._ended: Exit | None = None
        self._outgoing = {self._requests: bytearray(), self._stdin: bytearray(stdin or b"")}
        self._selector = selectors.DefaultSelector()
        for fd in (self._stdout, self._stderr, self._replies):
            os.set_blocking(fd, False)
            self._selector.register(fd, selectors.EVENT_READ)
        self._watched = self.child.fileno()  # readable when the process has ended (warm sandboxes)
        if self._watched is not None:
            self._selector.register(self._watched, selectors.EVENT_READ)
        for fd in self._outgoing:
            os.set_blocking(fd, False)
            self._selector.register(fd, selectors.EVENT_WRITE)
        if not stdin:
            self._close_output(self._stdin)
        self.send({**job, "limits": limits.for_driver(), "packages": isolation.packages_path()})

    def send(self, message: dict) -> None:
        if self._ended is None and self._requests in self._outgoing:
            self._outgoing[self._requests] += (json.dumps(message) + "\n").encode()
            if self._requests not in self._selector.get_map():
                self._selector.register(self._requests, selectors.EVENT_WRITE)

    def recv(self, deadline: float) -> dict:
        """The next message on the reply channel; Ended if there is none before `deadline`."""
        if self._ended is not None:
            raise Ended("the process has ended")
        while b"\n" not in self._reply_buffer:
            if self._replies not in self._selector.get_map():
                raise Ended("reply channel closed")
            self._pump(deadline)
        line, _, rest = bytes(self._reply_buffer).partition(b"\n")
        self._reply_buffer = bytearray(rest)
        if self.key is not None:
            line = self._authenticated(line)
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            self._fail("error", "malformed message from the sandbox")
            raise Ended("malformed message") from None
        if not isinstance(message, dict):
            self._fail("error", "malformed message from the sandbox")
            raise Ended("malformed message")
        return message

    def _authenticated(self, line: bytes) -> bytes:
        mac, _, body = line.partition(b" ")
        expected = hmac.new(self.key, b"%d:" % self._received + body, hashlib.sha256).hexdigest().encode()
        self._received += 1
        if not hmac.compare_digest(mac, expected):
            self._fail("error", "a message on the checker's channel was not the checker's (forged)")
            raise Ended("forged message")
        return body

    @property
    def received(self) -> bytes:
        """What the process wrote on the reply channel that `recv` has not taken."""
        return bytes(self._reply_buffer)

    def wait(self, deadline: float) -> Exit:
        """Let the process finish (killing it at `deadline`) and say how it ended."""
        try:
            while self.child.poll() is None and not self.child.lost:
                self._pump(deadline)
        except Ended:
            pass
        self.kill()  # whatever it left behind
        try:
            while self._pump(time.monotonic() + 1.0, poll=0.0):  # what is still in the pipes
                pass
        except Ended:
            pass
        return self._exit()

    def _pump(self, deadline: float, poll: float = 0.1) -> bool:
        """Move bytes for up to `poll` seconds; False if nothing was ready."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            self._fail("timeout", f"wall-clock limit of {self.limits.wall:g}s")
            raise Ended("timeout")
        if not self._selector.get_map():  # the process closed every pipe but may still run
            time.sleep(min(remaining, poll))
            return False
        events = self._selector.select(min(remaining, poll))
        for key, _ in events:
            fd = key.fd
            if fd == self._watched:
                if self.child.poll() is not None or self.child.lost:
                    self._selector.unregister(fd)
                continue
            if fd in self._outgoing:
                self._write(fd)
                continue
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                self._selector.unregister(fd)
                continue
            if fd == self._replies:
                self._reply_buffer += chunk
                if len(self._reply_buffer) > self.limits.output_mb << 20:
                    self._fail("error", f"reply larger than {self.limits.output_mb} MB")
                    raise Ended("reply too large")
            elif fd == self._stdout:
                self.stdout += chunk
                if len(self.stdout) > self.limits.output_mb << 20:
                    self._fail("error", f"output limit of {self.limits.output_mb} MB")
                    raise Ended("output limit")
            else:
                room = (self.limits.stderr_kb << 10) - len(self.stderr)
                self.stderr += chunk[: max(room, 0)]
                self.stderr_dropped += max(len(chunk) - max(room, 0), 0)
                if self.stderr_dropped > self.limits.output_mb << 20:
                    self._fail("error", f"stderr larger than {self.limits.output_mb} MB")
                    raise Ended("output limit")
        return bool(events)

    def _write(self, fd: int) -> None:
        pending = self._outgoing[fd]
        if not pending:
            if fd != self._requests:
                self._close_output(fd)
            else:
                self._selector.unregister(fd)  # until the next send
            return
        try:
            written = os.write(fd, pending[: 1 << 16])
        except BlockingIOError:
            return
        except BrokenPipeError:
            self._close_output(fd)
            return
        del pending[:written]

    def _close_output(self, fd: int) -> None:
        if fd in self._outgoing:
            del self._outgoing[fd]
            if fd in self._selector.get_map():
                self._selector.unregister(fd)
            self._close(fd)

    def _close(self, fd: int) -> None:
        if fd in self._open:
            self._open.discard(fd)
            os.close(fd)

    def _fail(self, status: str, reason: str) -> None:
        if self.failure is None:
            self.failure = (status, reason)
        self.kill()

    def kill(self) -> None:
        """SIGKILL the whole tree: the job's process and its cgroup; what is left, the warm sandbox's
        zygote kills (or, unisolated, the kill of the process group) before the job counts as ended."""
        if self._ended is not None:
            return
        self.child.kill()
        if self.group is not None:
            self.group.kill()
        self.child.wait()

    def _exit(self) -> Exit:
        if self._ended is None:
            self._ended = self._collect()
        return self._ended

    def _collect(self) -> Exit:
        code = self.child.returncode
        stderr = self.stderr.decode(errors="replace")
        if self.group is not None:
            memory = self.group.out_of_memory()
            self.group.remove()
        else:
            memory = False
        for fd in list(self._selector.get_map()):
            self._selector.unregister(fd)
        for fd in list(self._open):
            self._close(fd)
        seconds = time.monotonic() - self.started
        if self.failure is not None:
            status, reason = self.failure
        elif code is None:  # a warm sandbox's zygote never said the job ended
            status, reason = "error", "the sandbox's worker ended or stopped answering during the job"
        elif memory or code == exits.MEMORY:  # the cgroup's count, or the driver's status: never the text
            status, reason = "memory", f"memory limit of {self.limits.memory_mb} MB"
        elif code in (-signal.SIGXCPU, -signal.SIGKILL, 128 + signal.SIGXCPU, 128 + signal.SIGKILL):
            status, reason = "timeout", f"killed by a signal (CPU time limit of {self.limits.cpu:g}s)"
        elif code != 0:
            last = stderr.strip().splitlines()[-1:] or [f"exit code {code}"]
            status, reason = "error", last[0][:300]
        else:
            status, reason = "ok", ""
        return Exit(status, reason, code, bytes(self.stdout), stderr, seconds)

    def close(self) -> Exit:
        """Kill the process now and say how it ended (for served processes no longer needed)."""
        self.kill()
        return self._exit()
