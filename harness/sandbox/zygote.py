"""A warm sandbox's first process (standard library only; started as a script inside bubblewrap).

It runs as the init (pid 1) of the sandbox's pid namespace (bubblewrap's --as-pid-1), so no process
inside can kill or stop it: the kernel delivers a signal from inside to an init only when the init
handles it, and never SIGKILL or SIGSTOP; orphans come to it to be reaped. It imports the driver once,
makes itself non-dumpable (no process of the same user can trace it or read its memory or
descriptors; the processes it forks inherit that until they execute a fresh interpreter), then serves
the harness on the control socket (its fd number is argv[1]), one job at a time:

- the harness sends ``{"fork": true, "exec": bool}`` with five descriptors attached (stdin, stdout,
  stderr, the request pipe's read end, the reply pipe's write end); the zygote forks and closes its
  copies. The child says ``{"started": true}`` with a pidfd of itself attached (the socket's
  credentials give the harness its pid), closes the control socket and runs the driver, which reads
  its job from the request pipe: the zygote never reads a job, so its memory never holds a program or
  its input. With ``exec``, the child first executes a fresh interpreter for the driver (its own hash
  seed and address layout, which a check of determinism across runs needs); otherwise it runs the
  driver already imported here.
- the zygote reaps whatever ends meanwhile (orphans the job left) and, when the child has ended,
  answers ``{"exit": code}`` (``-signal`` for a signal). Then it kills every other process of the
  namespace (``kill(-1)``: every process the job left), reaps them all, empties /tmp and /work (and
  /dev/shm where it is writable), gives them back their modes and times without extended
  attributes, removes System V IPC objects, and answers ``{"reusable": bool}``. Reusable means that
  nothing else the job could have changed differs from how the sandbox started (`state`: the zygote's
  own limits, scheduling and I/O priority, which a process of the same user may change, sockets,
  keys, scratch space held by deleted files); otherwise, or when it cannot clean up, the zygote ends,
  and with it the whole sandbox and all it held: the harness starts another.
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
IOPRIO_GET = {"x86_64": 252, "aarch64": 31}  # syscall numbers; elsewhere the I/O priority is not compared
NETWORK_TABLES = ("unix", "tcp", "tcp6", "udp", "udp6", "raw", "raw6")


def system_calls():
    """libc (prctl, syscall and the System V IPC removers), then ctypes out of sys.modules (a job's
    code imports it afresh, through the seal's import guard where sealed)."""
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
        itself = os.pidfd_open(os.getpid())  # the harness kills this process by it, never by a number
        socket.send_fds(control, [json.dumps({"started": True}).encode()], [itself])
        os.close(itself)
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


def wait_for(pid):
    """The exit code of `pid`, reaping every orphan that ends before it (zombies count against the
    job's process limits)."""
    while True:
        reaped, status = os.waitpid(-1, 0)
        if reaped == pid:
            return os.waitstatus_to_exitcode(status)


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
    """Remove everything under `folder`, however deep or long its paths: walked by changing into each
    folder (every process of the job is gone, so nothing moves meanwhile), making each one ours first
    (a job may have left folders it made unreadable)."""
    os.chdir(folder)
    below = []  # the names of the folders entered, deepest last
    while True:
        inner = None
        with os.scandir(".") as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    inner = entry.name
                    break
                os.unlink(entry.name)
        if inner is not None:
            os.chmod(inner, 0o700)
            os.chdir(inner)
            below.append(inner)
        elif below:
            os.chdir("..")
            os.rmdir(below.pop())
        else:
            os.chdir("/")
            return


def remove_ipc(libc):
    """System V shared memory, message queues and semaphores the job made (the namespace's own)."""
    for kind, remove in (("shm", libc.shmctl), ("msg", libc.msgctl), ("sem", libc.semctl)):
        with open(f"/proc/sysvipc/{kind}") as table:
            ids = [int(line.split()[1]) for line in table.read().splitlines()[1:] if line.strip()]
        for ipc_id in ids:
            if (remove(ipc_id, 0, IPC_RMID, 0) if kind == "sem" else remove(ipc_id, IPC_RMID, None)) != 0:
                raise OSError(f"could not remove System V {kind} {ipc_id}")


def clean(libc, scratch):
    """Every process but this one killed and reaped, the scratch folders as they were at the start
    (empty, their modes and times, no extended attributes), no System V IPC object."""
    reap_all(time.monotonic() + 5.0)
    for folder, (mode, atime, mtime) in scratch.items():
        os.chmod(folder, 0o700)
        empty(folder)
        for name in os.listxattr(folder):
            os.removexattr(folder, name)
        os.chmod(folder, mode)
        os.utime(folder, ns=(atime, mtime))
    remove_ipc(libc)


def lines(path, keep=slice(None)):
    """The lines of a table under /proc (without its header), each cut to the columns `keep`; none
    where this kernel has no such table."""
    try:
        with open(path) as table:
            return [line.split()[keep] for line in table.read().splitlines()]
    except FileNotFoundError:
        return []


def state(libc, folders):
    """What a job could leave behind that outlives its processes and that the zygote cannot undo: its
    own limits, priority, CPU affinity, scheduling and I/O priority (a job of the same user may change
    them, and every later fork would inherit them: a channel, and a way to starve the next job),
    sockets of the sandbox's network namespace (kept open by descriptors in flight between them), keys
    (the user's keyring: id, permissions, owner, type and name; not the usage counts) and the space
    used on the scratch folders, / and /dev (deleted files held the same way)."""
    limits = [
        resource.getrlimit(getattr(resource, n)) for n in sorted(dir(resource)) if n.startswith("RLIMIT_")
    ]
    scheduling = [os.getpriority(os.PRIO_PROCESS, 0), sorted(os.sched_getaffinity(0))]
    scheduling += [os.sched_getscheduler(0), os.sched_getparam(0).sched_priority]
    if os.uname().machine in IOPRIO_GET:
        scheduling.append(libc.syscall(IOPRIO_GET[os.uname().machine], 1, 0))
    tables = [lines(f"/proc/net/{name}")[1:] for name in NETWORK_TABLES]
    tables.append([key[:1] + key[4:] for key in lines("/proc/keys")])
    used = [(s.f_blocks - s.f_bfree, s.f_files - s.f_ffree) for s in map(os.statvfs, [*folders, "/", "/dev"])]
    return limits, scheduling, tables, used


def send(control, message):
    control.send(json.dumps(message).encode())


def serve(control, libc, scratch):
    pristine = state(libc, scratch)
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
        send(control, {"exit": wait_for(pid)})
        clean(libc, scratch)
        reusable = state(libc, scratch) == pristine
        send(control, {"reusable": reusable})
        if not reusable:  # the sandbox ends with this process, and all it held with it
            return


def main():
    if os.getpid() != 1:  # kill(-1) anywhere but a sandbox's own pid namespace would reach the machine
        raise SystemExit("the zygote runs only as the init of its sandbox's pid namespace")
    control = socket.socket(fileno=int(sys.argv[1]))
    libc = system_calls()
    harden(libc)
    scratch = {}
    for folder in SCRATCH:
        if os.access(folder, os.W_OK):
            found = os.stat(folder)
            scratch[folder] = (found.st_mode & 0o7777, found.st_atime_ns, found.st_mtime_ns)
    clean(libc, scratch)
    serve(control, libc, scratch)


if __name__ == "__main__":
    main()
