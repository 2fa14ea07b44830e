"""A warm sandbox's first process (standard library only; started as a script inside bubblewrap).

It runs as the init (pid 1) of the sandbox's pid namespace (bubblewrap's --as-pid-1), so no process
inside can kill or stop it: the kernel delivers a signal from inside to an init only when the init
handles it, and never SIGKILL or SIGSTOP; orphans come to it to be reaped. It imports the driver once,
makes itself non-dumpable (no process of the same user can trace it or read its memory or
descriptors, and the processes it forks inherit that), then serves the harness on the control socket
(its fd number is argv[1]), one job at a time:

- the harness sends ``{"fork": true, "exec": bool}`` with five descriptors attached (stdin, stdout,
  stderr, the request pipe's read end, the reply pipe's write end); the zygote forks and closes its
  copies. The child says ``{"started": true}`` (the socket's credentials give the harness its pid),
  closes the control socket and runs the driver, which reads its job from the request pipe: the
  zygote never reads a job, so its memory never holds a program or its input. With ``exec``, the
  child first executes a fresh interpreter for the driver (its own hash seed and address layout, which
  a check of determinism across runs needs); otherwise it runs the driver already imported here.
- when the child has ended, the zygote kills every other process of the namespace (``kill(-1)``:
  every process the job left), reaps them all, empties /tmp and /work (and /dev/shm where it is
  writable) and gives them back their modes without extended attributes, removes System V IPC
  objects, and only then answers ``{"exit": code, "reusable": bool}`` (``-signal`` for a signal).
  Reusable means that nothing else the job could have changed differs from how the sandbox started
  (`state`: the zygote's own limits and scheduling, which a process of the same user may change,
  sockets, keys, scratch space held by deleted files); otherwise, or when it cannot clean up, the
  zygote ends, and with it the whole sandbox and all it held: the harness starts another.
"""

import json
import os
import resource
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver  # noqa: E402  (imported once here, inherited by every job)

PR_SET_DUMPABLE = 4
IPC_RMID = 0
SCRATCH = ("/tmp", "/work", "/dev/shm")


def system_calls():
    """libc (prctl and the System V IPC removers), then ctypes out of sys.modules (a job's code
    imports it afresh, through the seal's import guard where sealed)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for name in list(sys.modules):
        if name in ("ctypes", "_ctypes") or name.startswith("ctypes."):
            del sys.modules[name]
    return libc


def harden(libc):
    """Non-dumpable, and no signal handler (Python's own for SIGINT): a signal from inside reaches an
    init only through a handler."""
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError("prctl(PR_SET_DUMPABLE) failed")
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_job(control, fds, fresh):
    """In the forked child: the job's descriptors become 0-4, nothing else stays open, then the driver
    (in a fresh interpreter with `fresh`)."""
    try:
        send(control, {"started": True})  # the harness learns this process's pid from the message
        control.close()
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in any Python
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(len(fds), 1 << 16)
        os.chdir("/work")
        if fresh:
            os.execv(sys.executable, [sys.executable, "-I", "-S", driver.__file__, "3", "4"])
        sys.argv = [sys.argv[0], "3", "4"]
        driver.main()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except MemoryError:
        code = driver.MEMORY
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(code)


def reap_all(deadline):
    """Kill every process of the namespace but this one, its init, and reap them (all are ours)."""
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return
        if time.monotonic() > deadline:
            raise SystemExit("processes left that would not die")
        time.sleep(0.001)


def empty(folder):
    """Remove everything under `folder`, however deep (a job may have left folders it made unreadable)."""
    stack = [(folder, False)]
    while stack:
        path, listed = stack.pop()
        if listed:
            os.rmdir(path)
            continue
        if path != folder:
            stack.append((path, True))
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    os.chmod(entry.path, 0o700)
                    stack.append((entry.path, False))
                else:
                    os.unlink(entry.path)


def remove_ipc(libc):
    """System V shared memory, message queues and semaphores the job made (the namespace's own)."""
    for kind, remove in (("shm", libc.shmctl), ("msg", libc.msgctl), ("sem", libc.semctl)):
        with open(f"/proc/sysvipc/{kind}") as table:
            ids = [int(line.split()[1]) for line in table.read().splitlines()[1:] if line.strip()]
        for ipc_id in ids:
            if (remove(ipc_id, 0, IPC_RMID, 0) if kind == "sem" else remove(ipc_id, IPC_RMID, None)) != 0:
                raise OSError(f"could not remove System V {kind} {ipc_id}")


def clean(libc, modes):
    """Every process but this one killed and reaped, the scratch folders as they were at the start
    (empty, their modes, no extended attributes), no System V IPC object."""
    reap_all(time.monotonic() + 5.0)
    for folder, mode in modes.items():
        os.chmod(folder, 0o700)
        empty(folder)
        for name in os.listxattr(folder):
            os.removexattr(folder, name)
        os.chmod(folder, mode)
    remove_ipc(libc)


def state(folders):
    """What a job could leave behind that outlives its processes and that the zygote cannot undo: its
    own limits, priority, CPU affinity and scheduling (a job of the same user may change them, and
    every later fork would inherit them: a channel, and a way to starve the next job), sockets of the
    sandbox's network namespace (kept open by descriptors in flight between them), keys (the user's
    keyring) and scratch space held by deleted files."""
    limits = [
        resource.getrlimit(getattr(resource, n)) for n in sorted(dir(resource)) if n.startswith("RLIMIT_")
    ]
    scheduling = [os.getpriority(os.PRIO_PROCESS, 0), sorted(os.sched_getaffinity(0))]
    scheduling += [os.sched_getscheduler(0), os.sched_getparam(0).sched_priority]
    tables = []
    for name in ("unix", "tcp", "tcp6", "udp", "udp6", "raw", "raw6"):
        with open(f"/proc/net/{name}") as table:
            tables.append(table.read().splitlines()[1:])
    with open("/proc/keys") as keys:
        tables.append(keys.read().splitlines())
    used = [(lambda s: (s.f_blocks - s.f_bfree, s.f_files - s.f_ffree))(os.statvfs(f)) for f in folders]
    return limits, scheduling, tables, used


def send(control, message):
    control.send(json.dumps(message).encode())


def serve(control, libc, modes):
    pristine = state(modes)
    send(control, {"ready": os.getpid()})
    while True:
        data, fds, _, _ = socket.recv_fds(control, 1 << 12, 5)
        if not data:
            return
        request = json.loads(data)
        if set(request) != {"fork", "exec"} or type(request["exec"]) is not bool or len(fds) != 5:
            raise SystemExit("malformed request")
        pid = os.fork()
        if pid == 0:
            start_job(control, fds, request["exec"])
        for fd in fds:
            os.close(fd)
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        clean(libc, modes)
        reusable = state(modes) == pristine
        send(control, {"exit": code, "reusable": reusable})
        if not reusable:  # the sandbox ends with this process, and all it held with it
            return


def main():
    if os.getpid() != 1:  # kill(-1) anywhere but a sandbox's own pid namespace would reach the machine
        raise SystemExit("the zygote runs only as the init of its sandbox's pid namespace")
    control = socket.socket(fileno=int(sys.argv[1]))
    libc = system_calls()
    harden(libc)
    modes = {folder: os.stat(folder).st_mode & 0o7777 for folder in SCRATCH if os.access(folder, os.W_OK)}
    clean(libc, modes)
    serve(control, libc, modes)


if __name__ == "__main__":
    main()
