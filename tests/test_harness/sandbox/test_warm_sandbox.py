"""Warm sandboxes (harness/sandbox/warm.py, zygote.py): programs that attack the programs before and
after them in the same worker. Each test runs a program A, then a program B in the same worker (both
print the worker's hash seed, which forked jobs share, so a test cannot pass by running B elsewhere),
and checks that nothing A did reaches B: no process, file, IPC object, signal or byte of A's input."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sandbox_helpers import marker, survivors

from harness.sandbox import CallFailed, Limits, Served, cgroup, isolated, run_program, warm

pytestmark = pytest.mark.skipif(not isolated(), reason="bubblewrap isolation unavailable: no warm sandboxes")

LIMITS = Limits(wall=10.0, cpu=5.0, memory_mb=256, processes=16)
WORKER = "print('worker', hash('which worker'))\n"


def run(code: str, stdin: str = "") -> tuple[str, list[str]]:
    """(the worker's identity, the other lines the program printed)."""
    ended = run_program(WORKER + code, stdin, LIMITS)
    assert ended.status == "ok", (ended.reason, ended.stderr[-2000:])
    first, *rest = ended.stdout.decode().splitlines()
    return first, rest


LEFTOVERS = {
    "sleeping daemon": "os.execv('/bin/sleep', ['sleep', MARK])",
    "stopped daemon": "os.kill(os.getpid(), signal.SIGSTOP)\nos.execv('/bin/sleep', ['sleep', MARK])",
    "forking daemon": (
        "while True:\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            os.execv('/bin/sleep', ['sleep', MARK])\n"
        "    except OSError:\n"
        "        time.sleep(0.01)"
    ),
}


@pytest.fixture(params=["cgroup", "zygote alone"])
def killers(request, monkeypatch):
    """With the job's cgroup (killed by the harness) and without (the zygote's kill(-1) alone)."""
    if request.param == "zygote alone":
        monkeypatch.setattr(cgroup, "available", lambda: (None, "turned off by the test"))
    elif cgroup.available()[0] is None:
        pytest.skip("no cgroup here")


@pytest.mark.parametrize("name", list(LEFTOVERS))
def test_a_daemon_left_behind_is_gone_before_the_next_job(name, killers):
    mark = marker()
    body = "\n".join("        " + line for line in LEFTOVERS[name].splitlines())
    daemon = (
        f"import os, signal, time\nMARK = {mark!r}\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"{body}\n"
        "    os._exit(0)\n"
        "time.sleep(0.3)\n"
        "print('left')\n"
    )
    worker, lines = run(daemon)
    assert lines == ["left"]
    assert survivors(mark) == []  # gone when run_program returned, not later
    seen = (
        "import os\n"
        "for p in os.listdir('/proc'):\n"
        "    if p.isdigit():\n"
        "        try:\n"
        "            print(open(f'/proc/{p}/cmdline', 'rb').read().replace(b'\\0', b' ').decode())\n"
        "        except OSError:\n"
        "            pass\n"
    )
    after, commands = run(seen)
    assert after == worker
    assert not [c for c in commands if mark in c]


def test_signals_to_the_zygote_and_to_everyone_reach_nobody():
    """The zygote is its namespace's init: SIGKILL, SIGSTOP and the rest from inside are not delivered,
    and kill(-1) finds nothing else to signal."""
    attack = (
        "import os, signal\n"
        "for sig in (signal.SIGKILL, signal.SIGSTOP, signal.SIGTERM, signal.SIGINT, signal.SIGSEGV):\n"
        "    os.kill(1, sig)\n"
        "try:\n"
        "    os.kill(-1, signal.SIGKILL)\n"
        "    print('killed something')\n"
        "except ProcessLookupError:\n"
        "    print('nothing to kill')\n"
    )
    worker, lines = run(attack)
    assert lines == ["nothing to kill"]
    after, _ = run("pass")
    assert after == worker


NAMES = st.text("abcdefgh._-", min_size=1, max_size=8).filter(lambda n: n not in (".", ".."))
PLANTS = st.lists(
    st.tuples(
        st.sampled_from(["/tmp", "/work"]),
        st.lists(NAMES, min_size=1, max_size=3),
        st.sampled_from(["file", "locked folder", "fifo", "link", "unix socket"]),
    ),
    min_size=1,
    max_size=4,
)
PLANT = """
import os, socket, stat
for top, parts, kind in PLANTS:
    folder = os.path.join(top, *parts[:-1])
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, parts[-1])
    if os.path.lexists(path):
        continue
    if kind == "file":
        open(path, "w").write("secret")
    elif kind == "locked folder":
        os.mkdir(path)
        open(os.path.join(path, "inside"), "w").write("secret")
        os.chmod(path, 0)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "link":
        os.symlink("/etc", path)
    else:
        socket.socket(socket.AF_UNIX).bind(path)
os.setxattr("/tmp", "user.secret", b"from the last job")
os.utime("/tmp", ns=(123456789, 987654321))  # times a job could set to carry bits
os.chmod("/work", 0o500)
print("planted")
"""
LOOK = """
import os
for top in ("/tmp", "/work", "/dev/shm"):
    found = os.stat(top)
    print(top, oct(found.st_mode), sorted(os.listdir(top)), os.listxattr(top), found.st_mtime_ns)
"""


@pytest.fixture(scope="module")
def new_sandbox() -> list[str]:
    """What a job sees in a worker no job has used."""
    warm.close_all()
    _, seen = run(LOOK)
    assert [line.split(" ")[2:4] for line in seen] == [["[]", "[]"]] * 3
    return seen


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plants=PLANTS)
def test_files_a_job_plants_are_gone_for_the_next(plants, new_sandbox):
    worker, lines = run(f"PLANTS = {plants!r}\n" + PLANT)
    assert lines == ["planted"]
    assert run(LOOK) == (worker, new_sandbox)


def test_system_v_ipc_objects_are_removed_between_jobs():
    make = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.shmget(4242, 4096, 0o1000 | 0o600) >= 0, libc.msgget(4242, 0o1000 | 0o600) >= 0,\n"
        "      libc.semget(4242, 1, 0o1000 | 0o600) >= 0)\n"
    )
    worker, lines = run(make)
    assert lines == ["True True True"]
    table = (
        "for kind in ('shm', 'msg', 'sem'):\n"
        "    print(kind, len(open(f'/proc/sysvipc/{kind}').readlines()))\n"
    )
    after, counts = run(table)
    assert after == worker
    assert counts == ["shm 1", "msg 1", "sem 1"]  # the header line only


SCAN = r"""
import ctypes, sys
ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # dumpable again (forked from the zygote, it is not): /proc/self/mem
first, second = sys.stdin.read().split()
first, second = first.encode(), second.encode()

def found():
    count = 0
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as memory:
        for line in maps.read().splitlines():
            span, perms = line.split()[:2]
            start, end = (int(x, 16) for x in span.split("-"))
            if "r" not in perms or end - start > 64 << 20:
                continue
            try:
                memory.seek(start)
                chunk = memory.read(end - start)
            except (OSError, ValueError, OverflowError):
                continue
            at = chunk.find(first)
            while at >= 0:
                count += chunk[at + len(first) : at + len(first) + len(second)] == second
                at = chunk.find(first, at + 1)
    return count

print("before", found())
joined = first + second  # the scan finds the secret where it is
print("after", found() > 0)
"""


def test_the_next_job_finds_no_byte_of_the_last_jobs_input():
    """A holds a secret from its stdin; B, forked from the same zygote next, scans its own memory (all
    it inherited) for it and finds nothing, then finds it once B itself has made it."""
    first, second = os.urandom(12).hex(), os.urandom(12).hex()
    worker, lines = run("import sys\nsecret = sys.stdin.read()\nprint(len(secret))\n", first + second)
    assert lines == ["48"]
    after, scanned = run(SCAN, f"{first} {second}")
    assert after == worker
    assert scanned == ["before 0", "after True"]


# what a job can leave that outlives its processes (the fifth probe's): each attack, and what the next
# job prints when nothing of it is left
OUTLIVING = {
    "a limit of the zygote raised to carry a secret": (
        "import resource\nresource.prlimit(1, resource.RLIMIT_RTTIME, (31337, resource.RLIM_INFINITY))",
        "import resource\nprint(resource.getrlimit(resource.RLIMIT_RTTIME)[0] != 31337)",
    ),
    "a hard limit of the zygote lowered": (
        "import resource\nresource.prlimit(1, resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))",
        "open('/work/big', 'wb').write(bytes(2 << 20))\nprint(True)",
    ),
    "the zygote's memory cut": (
        "import resource\nresource.prlimit(1, resource.RLIMIT_DATA, (64 << 20, 64 << 20))",
        "x = bytearray(100 << 20)\nprint(len(x) > 0)",
    ),
    "the zygote's priority and scheduling": (
        "import os\nos.setpriority(os.PRIO_PROCESS, 1, 19)\n"
        "os.sched_setscheduler(1, os.SCHED_IDLE, os.sched_param(0))",
        "import os\nprint(os.getpriority(os.PRIO_PROCESS, 0) == 0 and os.sched_getscheduler(0) == 0)",
    ),
    "a key in the user's keyring": (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\n"
        "s = b'secret'\nprint(libc.syscall(248, b'user', b'left', s, len(s), ctypes.c_long(-4)) > 0)",
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\n"
        "print(libc.syscall(250, 10, ctypes.c_long(-4), b'user', b'left', 0) < 0)",
    ),
    "an abstract socket kept by descriptors in flight": (
        "import array, socket\ns = socket.socket(socket.AF_UNIX)\ns.bind(b'\\0left')\ns.listen(1)\n"
        "a, b = socket.socketpair()\nfds = array.array('i', [s.fileno(), a.fileno(), b.fileno()])\n"
        "for end in (a, b):\n    end.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])",
        "import socket\ntry:\n    socket.socket(socket.AF_UNIX).connect(b'\\0left')\n    print(False)\n"
        "except OSError:\n    print(True)",
    ),
    "scratch space held by deleted files": (
        "import array, os, socket\nfd = os.open('/work/fill', os.O_CREAT | os.O_RDWR)\n"
        "try:\n    while True:\n        os.write(fd, bytes(1 << 20))\nexcept OSError:\n    pass\n"
        "a, b = socket.socketpair()\nfds = array.array('i', [fd, a.fileno(), b.fileno()])\n"
        "for end in (a, b):\n    end.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])",
        "open('/work/room', 'wb').write(bytes(2 << 20))\nprint(True)",
    ),
}


@pytest.mark.parametrize("name", list(OUTLIVING))
def test_what_outlives_a_jobs_processes_ends_its_worker(name):
    """The zygote cannot undo these (a lowered hard limit, a socket cycle), so a job that leaves one
    ends its worker: its own verdict stands, and the next job runs in a new sandbox as on a clean one."""
    attack, check = OUTLIVING[name]
    worker, _ = run(attack)
    after, lines = run(check)
    assert after != worker and lines == ["True"], name


def test_orphans_are_reaped_while_the_job_runs():
    """Orphans of a running job come to the zygote: reaped at once, they do not count against the
    job's process limit (16 here) as zombies would."""
    orphans = (
        "import os, time\nfor _ in range(40):\n    if os.fork() == 0:\n        if os.fork() == 0:\n"
        "            os._exit(0)\n        os._exit(0)\n    os.wait()\n    time.sleep(0.005)\nprint('forked')"
    )
    _, lines = run(orphans)
    assert lines == ["forked"]


def test_no_posix_message_queue_can_be_made():
    """The IPC namespace is the worker's, and no mqueue filesystem is mounted to list queues: a job's
    RLIMIT_MSGQUEUE is 0, so none exists to outlive it."""
    make = (
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]\n"
        "print(libc.mq_open(b'/left', os.O_CREAT | os.O_WRONLY, 0o600, None), ctypes.get_errno())\n"
    )
    _, lines = run(make)
    assert lines == ["-1 24"]  # EMFILE: over the limit


def test_a_folder_deeper_than_the_stack_is_emptied_and_the_worker_kept():
    deep = "import os\nos.chdir('/tmp')\nfor _ in range(1500):\n    os.mkdir('d')\n    os.chdir('d')\n"
    worker, lines = run(deep + "print('deep')")
    assert lines == ["deep"]
    assert run(LOOK)[0] == worker


def test_jobs_run_when_every_idle_worker_has_died():
    held = [Served("def f():\n    return 1\n", LIMITS) for _ in range(3)]
    for served in held:
        served.close()
    for idle in warm._idle.values():
        for dead in idle:
            os.killpg(dead.popen.pid, signal.SIGKILL)
            dead.popen.wait()
    _, lines = run("print('ran')")
    assert lines == ["ran"]


def test_the_zygote_cannot_be_traced_or_read():
    attack = (
        "import ctypes, os\n"
        "parent = [l.split()[1] for l in open('/proc/self/status') if l.startswith('PPid:')][0]\n"
        "for part in ('mem', 'environ', 'fd', 'maps'):\n"
        "    try:\n"
        "        path = f'/proc/{parent}/{part}'\n"
        "        os.listdir(path) if part == 'fd' else open(path, 'rb').read(1)\n"
        "        print(part, 'read')\n"
        "    except OSError as e:\n"
        "        print(part, 'refused')\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print('ptrace', libc.ptrace(16, 1, 0, 0), ctypes.get_errno())\n"
    )
    _, lines = run(attack)
    assert lines == ["mem refused", "environ refused", "fd refused", "maps refused", "ptrace -1 1"]


def test_concurrent_jobs_run_in_separate_workers_and_see_nothing_of_each_other():
    secret = os.urandom(8).hex()
    holder = f"import time\nopen('/tmp/{secret}', 'w').write('x')\nprint('holding')\ntime.sleep(1.5)\n"
    result: dict[str, tuple] = {}
    thread = threading.Thread(target=lambda: result.setdefault("a", run(holder)))
    thread.start()
    time.sleep(0.5)
    look = (
        "import os\nprint(os.listdir('/tmp'))\n"
        "print(any(b'holding' in open(f'/proc/{p}/cmdline', 'rb').read() or 0\n"
        "          for p in os.listdir('/proc') if p.isdigit()))\n"
    )
    worker, seen = run(look)
    thread.join()
    assert result["a"][1] == ["holding"]
    assert worker != result["a"][0]
    assert seen == ["[]", "False"]


def test_a_worker_killed_during_a_job_costs_that_job_only():
    """Fault injected from outside (a job cannot kill its zygote): the call ends as an error, and the
    next job gets a new worker."""
    with Served("def f():\n    return 1\n", LIMITS) as served:
        assert served.call("f", []) == 1
        worker, job = served.proc.child.worker, served.proc.child.pid
        os.killpg(worker.popen.pid, signal.SIGKILL)
        for _ in range(1000):  # its processes die with it within milliseconds
            try:
                os.kill(job, 0)
                time.sleep(0.01)
            except ProcessLookupError:
                break
        with pytest.raises(CallFailed) as failed:
            served.call("f", [])
    assert failed.value.verdict.status == "error"
    assert served.proc.child.lost
    with Served("def f():\n    return 2\n", LIMITS) as again:
        assert again.proc.child.worker is not worker
        assert again.call("f", []) == 2


def test_an_idle_worker_that_died_is_replaced():
    worker, _ = run("pass")
    for idle in warm._idle.values():
        for dead in idle:
            os.killpg(dead.popen.pid, signal.SIGKILL)
            dead.popen.wait()
    after, lines = run("print('ran')")
    assert lines == ["ran"] and after != worker


def test_the_zygote_refuses_to_run_outside_a_sandbox():
    """kill(-1) outside its own pid namespace would reach this machine: it refuses before anything."""
    zygote = Path(warm.__file__).with_name("zygote.py")
    ended = subprocess.run([sys.executable, "-I", "-S", str(zygote), "99"], capture_output=True, timeout=60)
    assert ended.returncode == 1
    assert b"only as the init of its sandbox's pid namespace" in ended.stderr
