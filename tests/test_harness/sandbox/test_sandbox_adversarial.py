"""Hostile programs against harness.sandbox, each asserting what must NOT happen.

Every hostile program here is bounded on its own (a few hundred processes, a few GiB of memory,
output or disk at most), so that even if the sandbox failed it could not take the machine down; and
the ones that would be dangerous outside a pid namespace (signals to -1 or to the parent) refuse to
run unless they see they are inside the sandbox. The module only runs where bubblewrap isolation
works: without it these programs would run on the host under rlimits only.

Tests marked xfail(strict=True) are real sandbox bugs found by this suite; each reason says why.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest
from helpers import REPO
from sandbox_helpers import own_cgroups, survivors

from harness.sandbox import CallFailed, Limits, Served, cgroup, isolated, isolation, run_program, run_tests

pytestmark = pytest.mark.skipif(
    not isolated(), reason="bubblewrap isolation unavailable: not running hostile code"
)

FAST = Limits(wall=2.0, cpu=2.0, memory_mb=256, processes=16, file_mb=16, disk_mb=64, output_mb=4)
# run_tests whose verdict is not about time: both sandboxes must start within the wall on a loaded machine
CHECKED = Limits(wall=10.0, cpu=2.0, memory_mb=256, processes=16, file_mb=16, disk_mb=64, output_mb=4)
SLACK = 2.5  # seconds beyond a limit that the harness may take to notice, kill and clean up

# Inside the sandbox the host name is 'sandbox', the driver is at /sandbox and this checkout is absent;
# hostile code that signals other processes checks this first, so a broken sandbox cannot hurt the host.
GUARD = """
import os as _os, sys as _sys
if (_os.uname().nodename != "sandbox" or not _os.path.isfile("/sandbox/driver.py")
        or _os.path.exists("/work/main")):
    raise SystemExit("refusing to run the hostile part outside the sandbox")
"""


def prog(source: str) -> str:
    return textwrap.dedent(source).lstrip()


@pytest.fixture(scope="module", autouse=True)
def remove_leaked_cgroups():
    """Known bug (test_forged_ready_message_leaves_nothing_running): some failed starts leak their
    sandbox and cgroup. After the module, kill what is left in this process's groups and remove them."""
    yield
    for group in own_cgroups():
        try:
            for pid in (group / "cgroup.procs").read_text().split():
                os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass
    time.sleep(0.2)
    for group in own_cgroups():
        try:
            group.rmdir()
        except OSError:
            pass


@pytest.fixture
def no_leaks():
    """Fails the test if a control group made during it is left behind."""
    before = own_cgroups()
    yield
    assert own_cgroups() <= before, "a cgroup of a finished sandbox was left behind"


def timed(fn, *args, **kwargs):
    started = time.monotonic()
    result = fn(*args, **kwargs)
    return result, time.monotonic() - started


def call_failed(code: str, name: str, args: list, limits: Limits = FAST, timeout: float | None = None):
    """The CallFailed that calling `name` in a fresh Served must end in, and how long it all took."""
    started = time.monotonic()
    try:
        with Served(code, limits) as s:
            value = s.call(name, args, timeout=timeout)
    except CallFailed as e:
        return e, time.monotonic() - started
    pytest.fail(f"the call returned {value!r}")


# ---------------------------------------------------------------------------------------------
# Faking a pass in run_tests. The tests want f(3) == 9; no candidate here computes it honestly.

TESTS_WANT_9 = "assert f(3) == 9\n"

FAKE_PASSES = {
    "os_exit_0_at_import": """
        import os
        os._exit(0)
        """,
    "sys_exit_0_in_call": """
        import sys
        def f(x):
            sys.exit(0)
        """,
    "print_pass_and_done_on_stdout": """
        import sys
        print("PASS")
        print('{"done": true}')
        print('{"ready": ["f"]}', flush=True)
        def f(x):
            print("PASS", flush=True)
            sys.stdout.write('{"done": true}\\n{"ok": 9}\\n')
            sys.stdout.flush()
            return 0
        """,
    "fake_messages_to_every_fd_at_import": """
        import os
        FAKE = b'{"done": true}\\n{"ok": 9}\\n{"failed": null}\\n'
        for fd in os.listdir("/proc/self/fd"):
            try:
                os.write(int(fd), FAKE)
            except OSError:
                pass
        def f(x):
            return 0
        """,
    "fake_messages_to_every_fd_in_call": """
        import os
        def f(x):
            for fd in os.listdir("/proc/self/fd"):
                try:
                    os.write(int(fd), b'{"done": true}\\n')
                except OSError:
                    pass
            return 0
        """,
    "thread_os_exit_during_call": """
        import os, threading, time
        def f(x):
            threading.Thread(target=lambda: os._exit(0)).start()
            time.sleep(5)
            return 0
        """,
    "atexit_hook_writes_fake_messages": """
        import atexit, os, sys
        def fake():
            for fd in range(3, 20):
                try:
                    os.write(fd, b'{"done": true}\\n{"ok": 9}\\n')
                except OSError:
                    pass
        atexit.register(fake)
        def f(x):
            os.close(int(sys.argv[1]))  # the driver's next read fails and the interpreter exits
            return 0
        """,
    "object_whose_eq_is_always_true": """
        class Anything:
            def __eq__(self, other):
                return True
            __hash__ = object.__hash__
        def f(x):
            return Anything()
        """,
    "int_subclass_eq_true": """
        class I(int):
            def __eq__(self, other):
                return True
            __hash__ = int.__hash__
        def f(x):
            return I(0)
        """,
    "float_subclass_eq_true": """
        class F(float):
            def __eq__(self, other):
                return True
            __hash__ = float.__hash__
        def f(x):
            return F(0.5)
        """,
    "str_subclass_eq_true": """
        class S(str):
            def __eq__(self, other):
                return True
            __hash__ = str.__hash__
        def f(x):
            return S("nine")
        """,
    "list_subclass_eq_true": """
        class L(list):
            def __eq__(self, other):
                return True
        def f(x):
            return L([0])
        """,
    "dict_subclass_eq_true": """
        class D(dict):
            def __eq__(self, other):
                return True
        def f(x):
            return D(a=1)
        """,
    "tuple_subclass_eq_true": """
        class T(tuple):
            def __eq__(self, other):
                return True
            __hash__ = tuple.__hash__
        def f(x):
            return T((0,))
        """,
    "patched_builtins": """
        import builtins, sys
        class Never(BaseException):
            pass
        builtins.AssertionError = Never
        builtins.isinstance = lambda *a: True
        real_import = builtins.__import__
        builtins.__import__ = lambda *a, **k: real_import(*a, **k)
        sys.excepthook = lambda *a: None
        sys.settrace(lambda *a: None)
        def f(x):
            return 0
        """,
    "patched_json_and_codec": """
        import json, sys
        json.dumps = lambda *a, **k: '{"done": true}'
        codec = sys.modules["codec"]
        codec.decode = lambda *a, **k: 9
        main = sys.modules["__main__"]
        main.write_line = lambda stream, message: (stream.write('{"done": true}\\n'), stream.flush())
        def f(x):
            return 0
        """,
    "raises_assertion_error_named_like_a_pass": """
        def f(x):
            raise AssertionError("PASS")
        """,
    "raises_systemexit_and_keyboardinterrupt": """
        def f(x):
            try:
                raise KeyboardInterrupt
            finally:
                raise SystemExit(0)
        """,
}


@pytest.mark.parametrize("name", list(FAKE_PASSES))
def test_fake_pass_in_run_tests(name):
    verdict, seconds = timed(run_tests, prog(FAKE_PASSES[name]), TESTS_WANT_9, FAST)
    assert verdict.status != "pass", verdict
    assert seconds < FAST.wall + SLACK


@pytest.mark.parametrize(
    "name", ["int_subclass_eq_true", "object_whose_eq_is_always_true", "patched_json_and_codec"]
)
def test_fake_values_in_served_calls(name):
    """Whatever comes back from a served call is a plain builtin value, never the candidate's object."""
    try:
        with Served(prog(FAKE_PASSES[name]), FAST) as s:
            value = s.call("f", [3])
    except CallFailed as e:
        assert e.verdict.status != "pass"
        return
    assert type(value) in (int, float, str, list, dict, tuple, bytes, bool, type(None))
    assert value != 9


def test_candidate_cannot_see_the_tests_or_expected_values():
    secret = f"zebra-{random.randint(10**8, 10**9)}"
    candidate = prog(
        """
        import os
        def scan(root, limit=4000):
            found = []
            for dirpath, dirnames, filenames in os.walk(root):
                for name in filenames[:200]:
                    if len(found) > limit:
                        return found
                    found.append(os.path.join(dirpath, name))
            return found
        def f():
            texts = []
            for pid in os.listdir("/proc"):
                if pid.isdigit():
                    for part in ("cmdline", "environ", "comm"):
                        try:
                            texts.append(open(f"/proc/{pid}/{part}", "rb").read())
                        except OSError:
                            pass
                    try:
                        texts += [os.readlink(f"/proc/{pid}/fd/{fd}").encode()
                                  for fd in os.listdir(f"/proc/{pid}/fd")]
                    except OSError:
                        pass
            for path in scan("/tmp") + scan("/work") + scan("/dev/shm") + scan("/sandbox"):
                try:
                    texts.append(open(path, "rb").read(1 << 20))
                except OSError:
                    pass
            blob = b"\\n".join(texts)
            i = blob.find(b"zebra-")
            return blob[i:i + 15].decode() if i >= 0 else "nothing"
        """
    )
    tests = f"EXPECTED = {secret!r}\nassert f() == EXPECTED\n"
    verdict = run_tests(candidate, tests, Limits(wall=10.0, cpu=10.0))
    assert verdict.status == "fail", verdict
    assert "AssertionError" in verdict.reason


# Real bugs: the candidate can change what the trusted tests compute.

SHADOW_BUILTINS = {
    # HumanEval-style float checks: abs(candidate(x) - expected) < tol
    "abs": (
        "def f(x):\n    return 0.0\n\ndef abs(x):\n    return 0.0\n",
        "assert abs(f(2.0) - 1.4142) < 1e-3\n",
    ),
    # all([...]) over a list of comparisons
    "all": (
        "def f(x):\n    return 0\n\ndef all(xs):\n    return True\n",
        "assert all([f(x) == x * x for x in (2, 3)])\n",
    ),
    # len / sorted of a result
    "len": ("def f(n):\n    return []\n\ndef len(xs):\n    return 5\n", "assert len(f(5)) == 5\n"),
}


@pytest.mark.parametrize("name", list(SHADOW_BUILTINS))
def test_candidate_cannot_replace_builtins_used_by_the_tests(name):
    code, tests = SHADOW_BUILTINS[name]
    assert run_tests(code, tests, FAST).status != "pass"
    check = "def check(candidate):\n" + textwrap.indent(tests.replace("f(", "candidate("), "    ")
    assert run_tests(code, check, FAST, entry_point="f").status != "pass"


def test_candidate_stopiteration_cannot_end_the_tests_iteration():
    code = "def f(x):\n    raise StopIteration\n"
    tests = "assert all(map(lambda x: f(x) == x * 2, range(5)))\n"
    assert run_tests(code, tests, FAST).status != "pass"


# ---------------------------------------------------------------------------------------------
# Forged protocol messages in Served


@pytest.mark.parametrize(
    "reply",
    [
        b'{"ok": {"x": 1}}',
        b'{"ok": {"t": 5}}',
        b'{"ok": {"d": [[[1], 2]]}}',
        b'{"ok": {"s": [[1]]}}',
        b'{"ok": {"b": "zz"}}',
        b'{"ok": ' + b'{"t": [' * 100 + b"1" + b"]}" * 100 + b"}",
        b'{"ok": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b'{"ok": ' + b"9" * 5000 + b"}",
        b"not json at all",
        b"[1, 2, 3]",
        b"\xff\xfe garbage",
    ],
    ids=lambda r: r[:30].decode(errors="replace"),
)
def test_forged_reply_is_refused(reply):
    code = prog(
        f"""
        import os, sys, time
        def f(x):
            os.write(int(sys.argv[2]), {reply!r} + b"\\n")
            time.sleep(30)
        """
    )
    failure, seconds = call_failed(code, "f", [3])
    assert failure.verdict.status in ("error", "fail"), failure.verdict
    assert seconds < FAST.wall + SLACK


@pytest.mark.parametrize("reply", [b'{"raise": 5}', b'{"raise": "abc"}', b'{"raise": [1, 2, 3]}'])
def test_forged_raise_reply_is_call_failed(reply):
    code = prog(
        f"""
        import os, sys, time
        def f():
            os.write(int(sys.argv[2]), {reply!r} + b"\\n")
            time.sleep(30)
        """
    )
    with Served(code, FAST) as s:
        with pytest.raises(CallFailed):
            s.call("f", [])


def test_forged_ready_message_leaves_nothing_running(mark):
    code = prog(
        f"""
        import os, sys, time
        if os.fork() == 0:
            os.execv("/bin/sleep", ["sleep", "{mark}"])
        time.sleep(0.2)
        os.write(int(sys.argv[2]), b'{{"hello": 1}}\\n')
        time.sleep(30)
        """
    )
    before = own_cgroups()
    verdict, seconds = timed(run_tests, code, "assert True\n", FAST)
    assert verdict.status != "pass"
    assert seconds < FAST.wall + SLACK
    assert survivors(mark) == []
    assert own_cgroups() <= before


@pytest.mark.xfail(
    strict=True,
    reason="BUG: the harness decodes a reply's sets/dict keys outside any time limit; ints are hashed "
    "deterministically, so a set of k*(2**61-1) (all hash 0) makes decode() quadratic: 30k of them "
    "(0.7 MB) hold Served.call for many seconds past its timeout, 16 MB for about an hour",
)
def test_hash_collision_reply_does_not_hold_the_harness():
    code = prog(
        """
        import os, sys, time
        def f():
            m = (1 << 61) - 1
            body = ", ".join(str(k * m) for k in range(30000))
            os.write(int(sys.argv[2]), ('{"ok": {"s": [' + body + ']}}\\n').encode())
            time.sleep(30)
        """
    )
    limits = Limits(wall=1.0, cpu=2.0, output_mb=4)
    started = time.monotonic()
    try:
        with Served(code, limits) as s:
            s.call("f", [])
    except CallFailed:
        pass
    assert time.monotonic() - started < limits.wall + SLACK


# ---------------------------------------------------------------------------------------------
# Secrets, host files and host paths


def test_environment_and_secret_files_are_invisible(monkeypatch, tmp_path):
    secrets = [f"sk-secret-{random.randint(10**8, 10**9)}" for _ in range(4)]
    monkeypatch.setenv("OPENAI_API_KEY", secrets[0])
    monkeypatch.setenv("HF_TOKEN", secrets[1])
    host_file = Path(f"/tmp/harness-secret-{random.randint(10**8, 10**9)}")
    host_file.write_text(secrets[2])
    (tmp_path / "token").write_text(secrets[3])
    paths = [
        str(host_file),
        str(tmp_path / "token"),
        "~/.cache/huggingface/token",
        "/root/.cache/huggingface/token",
        "/root/.bash_history",
        "/etc/passwd",
        "/etc/shadow",
        "/work/main/pyproject.toml",
        "/work/main/.git/config",
        "/proc/1/environ",
        "/proc/self/environ",
    ]
    code = prog(
        f"""
        import glob, os
        print(dict(os.environ))
        for path in {paths!r}:
            try:
                print(path, open(os.path.expanduser(path), "rb").read(4096))
            except OSError as e:
                print(path, "refused", e.errno)
        for pattern in ("/tmp/*", "/root/*", "/root/.*", "/work/*", "/home/*"):
            print("GLOB", pattern, glob.glob(pattern))
        """
    )
    try:
        exit = run_program(code, "", FAST)
    finally:
        host_file.unlink()
    assert exit.status == "ok", exit
    out = exit.stdout.decode()
    assert "refused" in out  # the program did run its probes
    for secret in secrets:
        assert secret not in out
    assert not [line for line in out.splitlines() if line.startswith("GLOB") and "harness-secret" in line]
    assert "[project]" not in out and "root:x:0:0" not in out and "[core]" not in out


def test_host_files_cannot_be_changed(tmp_path):
    sentinel = tmp_path / "sentinel.txt"
    sentinel.write_text("original")
    name = f"harness-adv-{random.randint(10**8, 10**9)}"
    host_targets = [Path("/work/main") / name, Path("/tmp") / name, Path("/root") / name, tmp_path / name]
    code = prog(
        f"""
        import os, shutil
        for action in (
            lambda: os.remove({str(sentinel)!r}),
            lambda: open({str(sentinel)!r}, "w").write("pwned"),
            lambda: shutil.rmtree({str(tmp_path)!r}),
            lambda: os.makedirs({str(tmp_path / "newdir")!r}),
            *[(lambda p=p: open(p, "w").write("pwned")) for p in {[str(p) for p in host_targets]!r}],
        ):
            try:
                action()
                print("DONE")
            except OSError as e:
                print("refused", e.errno)
        """
    )
    try:
        exit = run_program(code, "", FAST)
        assert sentinel.read_text() == "original"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["sentinel.txt"]
        for path in host_targets:
            assert not path.exists()
        assert "refused" in exit.stdout.decode()
    finally:
        for path in host_targets:
            path.unlink(missing_ok=True)


def test_system_and_harness_directories_are_read_only():
    """Read-only mounts keep the sandbox out of these, whatever its user could write on the host."""
    name = f"harness-adv-{random.randint(10**8, 10**9)}"
    python = isolation.interpreter()[0]
    paths = json.loads(
        subprocess.check_output(
            [python, "-I", "-c", "import json, sysconfig; print(json.dumps(sysconfig.get_paths()))"]
        )
    )
    targets = [
        f"/usr/{name}",
        f"/usr/local/{name}",
        f"/usr/bin/{name}",
        f"/lib/{name}",
        os.path.join(paths["purelib"], f"{name}.pth"),
        os.path.join(paths["purelib"], "sitecustomize.py"),
        os.path.join(paths["stdlib"], "sitecustomize.py"),
        os.path.join(paths["stdlib"], "json", "__init__.py"),
    ]
    sandbox_targets = ["/sandbox/codec.py", f"/sandbox/{name}.py"]
    host = {Path(t): Path(t).read_bytes() if Path(t).exists() else None for t in targets}
    host_driver = {p: p.read_bytes() for p in isolation.DRIVER_DIR.iterdir() if p.is_file()}
    code = prog(
        f"""
        for path in {targets + sandbox_targets!r}:
            try:
                with open(path, "a") as fh:
                    fh.write("\\nimport os; os.system('touch /tmp/pwned')\\n")
                print("WROTE", path)
            except OSError as e:
                print("refused", path, e.errno)
        """
    )
    try:
        exit = run_program(code, "", FAST)
        out = exit.stdout.decode()
        assert exit.status == "ok", exit
        assert "WROTE" not in out
        assert out.count("refused") == len(targets) + len(sandbox_targets)
        assert {t: t.read_bytes() if t.exists() else None for t in host} == host
        assert {p: p.read_bytes() for p in isolation.DRIVER_DIR.iterdir() if p.is_file()} == host_driver
    finally:
        for path, content in host.items():  # only if the sandbox failed: put things back
            if content is None:
                path.unlink(missing_ok=True)
            elif path.read_bytes() != content:
                path.write_bytes(content)


def test_global_sysctls_are_not_writable():
    # Opens for writing only, never writes: an open that succeeds is already the failure.
    code = prog(
        """
        import os
        for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe",
                     "/proc/sys/vm/panic_on_oom", "/proc/sys/kernel/panic", "/proc/sys/vm/drop_caches",
                     "/proc/sys/fs/file-max", "/proc/sysrq-trigger"):
            try:
                fd = os.open(path, os.O_WRONLY)
            except OSError as e:
                print("refused", path, e.errno)
            else:
                os.close(fd)
                print("WRITABLE", path)
        """
    )
    exit = run_program(code, "", FAST)
    assert exit.status == "ok"
    assert "WRITABLE" not in exit.stdout.decode(), exit.stdout.decode()


def test_sandboxed_processes_are_not_root_on_the_host(mark):
    code = prog(
        f"""
        import os
        if os.fork() == 0:
            os.execv("/bin/sleep", ["sleep", "{mark}"])
        def f():
            return 1
        """
    )
    with Served(code, FAST) as s:
        assert s.call("f", []) == 1
        deadline = time.monotonic() + 10  # the forked child may not have reached execv yet
        while not (pids := survivors(mark)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pids
        uids = [
            line.split()[1:]
            for pid in pids
            for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            if line.startswith("Uid:")
        ]
    assert survivors(mark) == []
    assert all("0" not in ids for ids in uids), uids


KEYRING_LEAK = prog(
    '''
    import ctypes, sys
    from harness.sandbox import Limits, run_program

    SYS_add_key, SYS_keyctl = 248, 250  # x86_64
    JOIN_SESSION_KEYRING, KEY_SPEC_SESSION_KEYRING = 1, ctypes.c_int(-3)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    secret = sys.argv[1].encode()
    # A fresh session keyring for this short-lived process only, holding one secret key.
    assert libc.syscall(SYS_keyctl, JOIN_SESSION_KEYRING, sys.argv[2].encode()) > 0
    assert libc.syscall(SYS_add_key, b"user", b"api-token", secret, len(secret), KEY_SPEC_SESSION_KEYRING) > 0
    code = """
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    buf = ctypes.create_string_buffer(4096)
    n = libc.syscall(250, 11, ctypes.c_int(-3), buf, 4096)  # KEYCTL_READ the session keyring
    for i in range(0, max(n, 0), 4):
        key = int.from_bytes(buf.raw[i:i + 4], "little")
        payload = ctypes.create_string_buffer(4096)
        m = libc.syscall(250, 11, key, payload, 4096)
        print("key", key, payload.raw[:max(m, 0)])
    try:
        print(open("/proc/keys").read())
    except OSError as e:
        print("no /proc/keys", e)
    """
    exit = run_program(code, "", Limits(wall=3.0))
    sys.stdout.write(exit.status + " " + exit.stdout.decode(errors="replace"))
    '''
)


@pytest.mark.xfail(
    strict=True,
    reason="BUG: the sandbox inherits the harness's session keyring (bwrap does not replace it, and "
    "keyctl/add_key are not filtered): sandboxed code reads every key in it (and, as host root, can "
    "add keys there that outlive the sandbox)",
)
def test_harness_session_keyring_is_out_of_reach():
    if os.uname().machine != "x86_64":
        pytest.skip("syscall numbers are x86_64")
    secret = f"sk-keyring-{random.randint(10**8, 10**9)}"
    ring = f"harness-adv-{random.randint(10**8, 10**9)}"
    # In a child process: its new session keyring disappears with it and the test process is untouched.
    result = subprocess.run(
        [sys.executable, "-c", KEYRING_LEAK, secret, ring],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    assert "key " in result.stdout or "no /proc/keys" in result.stdout, result.stdout
    assert secret not in result.stdout
    assert ring not in result.stdout


# ---------------------------------------------------------------------------------------------
# Network


def test_no_connection_to_a_host_server(tmp_path):
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(8)
    tcp.setblocking(False)
    port = tcp.getsockname()[1]
    abstract_name = f"\0harness-adv-{random.randint(10**8, 10**9)}"
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(abstract_name)
    abstract.listen(8)
    abstract.setblocking(False)
    unix_path = str(tmp_path / "s")
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(unix_path)
    unix.listen(8)
    unix.setblocking(False)
    code = prog(
        f"""
        import socket
        targets = [
            (socket.AF_INET, ("127.0.0.1", {port})),
            (socket.AF_INET, ("localhost", {port})),
            (socket.AF_INET6, ("::1", {port})),
            (socket.AF_UNIX, {abstract_name!r}),
            (socket.AF_UNIX, {unix_path!r}),
        ]
        for family, address in targets:
            try:
                s = socket.socket(family)
                s.settimeout(0.5)
                s.connect(address)
                s.sendall(b"hello from the sandbox")
                print("CONNECTED", address)
            except OSError as e:
                print("refused", e)
        """
    )
    try:
        exit = run_program(code, "", FAST)
        assert "CONNECTED" not in exit.stdout.decode(), exit.stdout
        for server in (tcp, abstract, unix):
            with pytest.raises(BlockingIOError):
                server.accept()
    finally:
        for server in (tcp, abstract, unix):
            server.close()


def test_no_outside_network_or_dns():
    code = prog(
        """
        import socket
        print("interfaces", sorted(name for _, name in socket.if_nameindex()))
        for host in ("example.com", "pypi.org"):
            try:
                print("RESOLVED", socket.getaddrinfo(host, 443))
            except OSError as e:
                print("no dns", e)
        for address in (("1.1.1.1", 53), ("8.8.8.8", 443), ("93.184.215.14", 80)):
            try:
                socket.create_connection(address, timeout=0.5)
                print("CONNECTED", address)
            except OSError as e:
                print("no route", e)
        """
    )
    exit, seconds = timed(run_program, code, "", FAST)
    out = exit.stdout.decode()
    assert exit.status == "ok", exit
    assert "CONNECTED" not in out and "RESOLVED" not in out
    assert "interfaces ['lo']" in out
    assert seconds < FAST.wall + SLACK


# ---------------------------------------------------------------------------------------------
# Processes: bombs, daemons, signals


def test_fork_bomb_is_capped_and_leaves_nothing(mark, no_leaks):
    code = prog(
        f"""
        import os, time
        forked = 0
        for i in range(300):
            try:
                pid = os.fork()
            except OSError:
                time.sleep(0.001)
                continue
            if pid == 0:
                try:
                    os.execv("/bin/sleep", ["sleep", "{mark}"])
                finally:
                    os._exit(0)
            forked += 1
        print("forked", forked, flush=True)
        time.sleep(30)
        """
    )
    exit, seconds = timed(run_program, code, "", FAST)
    assert exit.status == "timeout"
    assert seconds < FAST.wall + SLACK
    forked = int(exit.stdout.split()[1])
    assert forked < FAST.processes
    assert survivors(mark) == []


def test_recursive_fork_bomb_in_served_import(mark, no_leaks):
    code = prog(
        f"""
        import os, time
        for generation in range(9):  # at most 2**9 = 512 processes without a cap
            try:
                os.fork()
            except OSError:
                break
        if os.getpid() % 2:
            try:
                os.execv("/bin/sleep", ["sleep", "{mark}"])
            except OSError:
                pass
        time.sleep(30)
        """
    )
    started = time.monotonic()
    with pytest.raises(CallFailed) as info:
        Served(code, FAST)
    assert info.value.verdict.status == "timeout"
    assert time.monotonic() - started < FAST.wall + SLACK
    assert survivors(mark) == []


def test_thread_bomb_is_capped():
    code = prog(
        """
        import threading, time
        started = 0
        for i in range(1000):
            try:
                threading.Thread(target=time.sleep, args=(3,), daemon=True).start()
                started += 1
            except RuntimeError:
                break
        print("threads", started, flush=True)
        """
    )
    exit, seconds = timed(run_program, code, "", FAST)
    assert exit.stdout.startswith(b"threads ")
    assert int(exit.stdout.split()[1]) < FAST.processes
    assert seconds < FAST.wall + SLACK


@pytest.mark.parametrize("closes_fds", [False, True])
def test_double_forked_daemon_does_not_survive(mark, no_leaks, closes_fds):
    code = prog(
        f"""
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                if {closes_fds}:
                    os.closerange(0, 256)
                os.execv("/bin/sleep", ["sleep", "{mark}"])
            os._exit(0)
        os.wait()
        time.sleep(0.2)
        print("daemon started")
        """
    )
    exit, seconds = timed(run_program, code, "", FAST)
    assert exit.stdout == b"daemon started\n"
    assert seconds < FAST.wall + SLACK
    assert survivors(mark) == []


def test_daemon_started_by_a_served_call_does_not_survive(mark, no_leaks):
    code = prog(
        f"""
        import os
        def f():
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.closerange(0, 256)
                    os.execv("/bin/sleep", ["sleep", "{mark}"])
                os._exit(0)
            os.wait()
            return 0
        """
    )
    verdict = run_tests(code, "assert f() == 1\n", CHECKED)
    assert verdict.status == "fail"
    assert survivors(mark) == []


KILLERS = {
    "kill_parent": "os.kill(os.getppid(), signal.SIGKILL)",
    "killpg_0": "os.killpg(0, signal.SIGKILL)",
    "kill_minus_1": "os.kill(-1, signal.SIGKILL)",
    "kill_pid_1": "os.kill(1, signal.SIGKILL)",
    "sigstop_everything": "os.kill(-1, signal.SIGSTOP)",
}


@pytest.mark.parametrize("name", list(KILLERS))
def test_signals_cannot_reach_the_harness(name, no_leaks):
    canary = subprocess.Popen(["sleep", "60"])  # a host process that a signal escaping the sandbox would hit
    candidate = GUARD + prog(
        f"""
        import os, signal
        def f(x):
            try:
                {KILLERS[name]}
            except OSError:
                pass
            return 0
        """
    )
    verdict, seconds = timed(run_tests, candidate, TESTS_WANT_9, FAST)
    assert verdict.status != "pass", verdict
    assert seconds < FAST.wall + SLACK
    program = GUARD + f"import os, signal\n{KILLERS[name]}\nprint('still here')\n"
    exit, seconds = timed(run_program, program, "", FAST)
    assert exit.status != "ok" or exit.stdout == b"still here\n"
    assert seconds < FAST.wall + SLACK
    try:
        assert canary.poll() is None, "a host process was killed"
        state = Path(f"/proc/{canary.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        assert state in ("S", "R"), f"a host process was stopped (state {state})"
    finally:
        canary.kill()
        canary.wait()


def test_candidate_killing_its_namespace_does_not_touch_the_test_process():
    """kill(-1) in the candidate reaches only its own sandbox: the assertions still run and fail."""
    candidate = GUARD + prog(
        """
        import os, signal
        def f(x):
            try:
                os.kill(-1, signal.SIGKILL)  # ESRCH when nothing else in its namespace can be signalled
            except ProcessLookupError:
                pass
            return 0
        """
    )
    verdict = run_tests(candidate, TESTS_WANT_9, CHECKED)
    assert verdict.status == "fail"
    assert "AssertionError" in verdict.reason and "assert f(3) == 9" in verdict.reason


def test_ptrace_and_harness_memory_are_out_of_reach(monkeypatch):
    secret = f"sk-memory-{random.randint(10**8, 10**9)}"
    monkeypatch.setenv("HARNESS_ADV_SECRET", secret)
    code = prog(
        f"""
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        host = {os.getpid()}
        for part in ("mem", "environ", "cmdline", "maps"):
            try:
                print("READ", part, open(f"/proc/{{host}}/{{part}}", "rb").read(1 << 16))
            except OSError as e:
                print("refused", part, e.errno)
        PTRACE_ATTACH = 16
        print("ptrace", libc.ptrace(PTRACE_ATTACH, host, None, None), ctypes.get_errno())
        buf = ctypes.create_string_buffer(64)
        class IOVec(ctypes.Structure):
            _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
        local = IOVec(ctypes.cast(buf, ctypes.c_void_p), 64)
        remote = IOVec(0x400000, 64)
        print("vm_readv", libc.process_vm_readv(host, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))
        """
    )
    exit = run_program(code, "", FAST)
    out = exit.stdout.decode()
    assert exit.status == "ok", exit
    assert "READ" not in out
    assert "ptrace -1" in out and "vm_readv -1" in out
    assert secret not in out


# ---------------------------------------------------------------------------------------------
# Memory, disk, output


def test_memory_bomb_single_process():
    code = prog(
        """
        chunks = []
        for i in range(30):  # at most 3 GiB without a cap
            chunks.append(b"x" * (100 << 20))
            print(i, flush=True)
        """
    )
    exit, seconds = timed(run_program, code, "", FAST)
    assert exit.status == "memory", exit
    assert len(exit.stdout.split()) <= 3
    assert seconds < FAST.wall + SLACK


def test_memory_bomb_across_processes_hits_the_cgroup(no_leaks):
    if cgroup.available()[0] is None:
        pytest.skip("no cgroup: each process is bounded by its own rlimit only")
    code = prog(
        """
        import os, time
        pids = []
        for i in range(8):  # 8 x 150 MB: each under the per-process limit, 1.2 GB together
            pid = os.fork()
            if pid == 0:
                try:
                    data = b"x" * (150 << 20)
                    time.sleep(3)
                finally:
                    os._exit(0)
            pids.append(pid)
        for pid in pids:
            os.waitpid(pid, 0)
        print("survived")
        """
    )
    # the verdict is not about time: a loaded machine may take seconds to start and fork
    exit, seconds = timed(run_program, code, "", Limits(wall=10.0, cpu=4.0, memory_mb=256, processes=16))
    assert exit.status == "memory", exit
    assert seconds < 10.0 + SLACK


@pytest.mark.parametrize("directory", ["/dev/shm", "/", "/root"])
def test_unsized_tmpfs_is_bounded_by_memory(directory, no_leaks):
    """/dev/shm and the sandbox's root are tmpfs without a size (disk_mb covers /work and /tmp only):
    what is written there is memory, and the memory cgroup must stop it."""
    if cgroup.available()[0] is None:
        pytest.skip("no cgroup: nothing bounds an unsized tmpfs")
    code = prog(
        f"""
        import os
        written = 0
        try:
            for i in range(40):  # 40 x 15 MB = 600 MB without a cap
                with open(os.path.join({directory!r}, f"f{{i}}"), "wb") as fh:
                    fh.write(b"x" * (15 << 20))
                written += 15
        finally:
            print("written", written, flush=True)
        """
    )
    exit, seconds = timed(run_program, code, "", FAST)
    assert exit.status != "ok", exit
    assert seconds < FAST.wall + SLACK
    if exit.stdout:
        assert int(exit.stdout.split()[1]) <= FAST.memory_mb


@pytest.mark.parametrize("directory", ["/work", "/tmp"])
def test_disk_filling_is_capped(directory):
    code = prog(
        f"""
        import os
        total = 0
        try:
            for i in range(50):  # 500 MB without a cap
                with open(os.path.join({directory!r}, f"fill{{i}}"), "wb") as fh:
                    for _ in range(10):
                        fh.write(b"x" * (1 << 20))
                        fh.flush()
                        total += 1 << 20
        except OSError as e:
            print("stopped", e.errno)
        print("total", total)
        """
    )
    before = {p.name for p in Path("/tmp").iterdir()}
    exit, seconds = timed(run_program, code, "", Limits(wall=5.0, memory_mb=512, disk_mb=64, file_mb=16))
    out = exit.stdout.decode()
    assert "stopped 28" in out, exit  # ENOSPC
    total = int(out.split("total")[1])
    assert total <= 65 << 20
    assert seconds < 5.0
    assert not any(name.startswith("fill") for name in {p.name for p in Path("/tmp").iterdir()} - before)


def test_single_file_size_is_capped():
    code = "with open('big', 'wb') as fh:\n    for _ in range(100):\n        fh.write(b'x' * (1 << 20))\n"
    exit, seconds = timed(run_program, code, "", Limits(wall=5.0, memory_mb=512, disk_mb=256, file_mb=16))
    assert exit.status != "ok", exit
    assert seconds < 5.0


def test_gigabytes_of_stdout_are_cut_off():
    code = "import sys\nchunk = b'y' * (1 << 20)\nfor _ in range(4096):\n    sys.stdout.buffer.write(chunk)\n"
    limits = Limits(wall=10.0, cpu=10.0, output_mb=1)
    exit, seconds = timed(run_program, code, "", limits)
    assert exit.status == "error"
    assert "output limit" in exit.reason
    assert len(exit.stdout) <= (1 << 20) + (1 << 18)  # the cap, plus what was already in the pipe
    assert seconds < 3.0


def test_gigabytes_of_stderr_are_cut_off():
    code = "import sys\nchunk = b'e' * (1 << 20)\nfor _ in range(4096):\n    sys.stderr.buffer.write(chunk)\n"
    limits = Limits(wall=10.0, cpu=10.0, output_mb=1, stderr_kb=16)
    exit, seconds = timed(run_program, code, "", limits)
    assert exit.status == "error"
    assert "stderr" in exit.reason
    assert len(exit.stderr) <= 16 << 10
    assert seconds < 3.0


def test_stdout_flood_from_a_served_candidate():
    code = "import sys\ndef f():\n    while True:\n        sys.stdout.write('z' * 65536)\n"
    limits = Limits(wall=10.0, cpu=10.0, output_mb=1)
    failure, seconds = call_failed(code, "f", [], limits)
    assert failure.verdict.status == "error"
    assert seconds < 3.0


@pytest.mark.parametrize(
    "body",
    [
        "return [7] * 3_000_000",
        "os.write(int(sys.argv[2]), b'[' * 100 + b'1, ' * 2_000_000)\n    time.sleep(30)",
    ],
    ids=["huge_value", "endless_line"],
)
def test_huge_reply_is_cut_off(body):
    code = f"import os, sys, time\ndef f():\n    {body}\n"
    limits = Limits(wall=5.0, cpu=5.0, output_mb=1)
    failure, seconds = call_failed(code, "f", [], limits)
    assert failure.verdict.status == "error"
    assert "reply larger" in failure.verdict.reason
    assert seconds < limits.wall


# ---------------------------------------------------------------------------------------------
# Time


def test_loop_ignoring_signals_is_killed_at_the_wall():
    code = prog(
        """
        import signal
        for s in (signal.SIGTERM, signal.SIGALRM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):
            signal.signal(s, signal.SIG_IGN)
        signal.alarm(1)
        while True:
            pass
        """
    )
    limits = Limits(wall=1.5, cpu=10.0)
    exit, seconds = timed(run_program, code, "", limits)
    assert exit.status == "timeout"
    assert "wall-clock" in exit.reason
    assert seconds < limits.wall + SLACK


def test_cpu_limit_with_threads_and_sigxcpu_ignored():
    code = prog(
        """
        import signal, threading
        signal.signal(signal.SIGXCPU, signal.SIG_IGN)
        def spin():
            while True:
                pass
        for _ in range(2):
            threading.Thread(target=spin, daemon=True).start()
        spin()
        """
    )
    limits = Limits(wall=20.0, cpu=1.0)
    exit, seconds = timed(run_program, code, "", limits)
    assert exit.status == "timeout"
    assert seconds < 8.0


def test_served_call_sleeping_forever_times_out():
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "def f():\n    time.sleep(10**6)\n"
    failure, seconds = call_failed(code, "f", [], Limits(wall=10.0), timeout=1.0)
    assert failure.verdict.status == "timeout"
    assert seconds < 1.0 + SLACK


def test_import_that_never_finishes_times_out():
    verdict, seconds = timed(run_tests, "while True:\n    pass\n", "assert True\n", FAST)
    assert verdict.status == "timeout"
    assert seconds < FAST.wall + SLACK


def test_whole_run_tests_exchange_is_bounded():
    """Each call is quick but the tests make many: the whole exchange stops at the wall."""
    code = "import time\ndef f(x):\n    time.sleep(0.2)\n    return x\n"
    tests = "for i in range(1000):\n    assert f(i) == i\n"
    verdict, seconds = timed(run_tests, code, tests, FAST)
    assert verdict.status == "timeout"
    assert seconds < FAST.wall + SLACK


# ---------------------------------------------------------------------------------------------
# Crashes and the protocol channel


CRASHES = {
    "recursion_error": "def r(n):\n    return r(n + 1)\nr(0)\n",
    # json's C encoder recursing 10**6 levels with the recursion limit lifted: a C stack overflow
    "c_stack_overflow": "import json, sys\nsys.setrecursionlimit(10**7)\na = []\n"
    "for _ in range(10**6):\n    a = [a]\njson.dumps(a)\n",
    "segfault_ctypes": "import ctypes\nctypes.string_at(0)\n",
    "abort": "import os\nos.abort()\n",
    "sigsegv_self": "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
}


@pytest.mark.parametrize("name", list(CRASHES))
def test_crashing_program_is_an_error(name):
    exit, seconds = timed(run_program, CRASHES[name], "", FAST)
    assert exit.status == "error", exit
    assert seconds < FAST.wall + SLACK


@pytest.mark.parametrize("name", ["segfault_ctypes", "c_stack_overflow"])
def test_crashing_candidate_does_not_pass(name):
    code = "def f(x):\n" + textwrap.indent(CRASHES[name], "    ")
    verdict, seconds = timed(run_tests, code, TESTS_WANT_9, FAST)
    assert verdict.status != "pass"
    assert seconds < FAST.wall + SLACK


PROTOCOL_ATTACKS = {
    "close_reply_fd": "os.close(int(sys.argv[2]))",
    "close_all_fds": "os.closerange(0, 256)",
    "dup_stdout_over_reply_fd": "os.dup2(1, int(sys.argv[2]))",
    "dup_reply_over_request_fd": "os.dup2(int(sys.argv[2]), int(sys.argv[1]))",
    "read_all_requests": "threading.Thread(target=os.read, args=(int(sys.argv[1]), 1 << 20)).start()",
}


@pytest.mark.parametrize("name", list(PROTOCOL_ATTACKS))
def test_protocol_fd_tampering(name):
    code = f"import os, sys, threading, time\n{PROTOCOL_ATTACKS[name]}\ndef f(x):\n    return 9\n"
    verdict, seconds = timed(run_tests, code, TESTS_WANT_9 + "assert f(4) == 16\n", FAST)
    assert verdict.status != "pass", verdict
    assert seconds < FAST.wall + SLACK


# ---------------------------------------------------------------------------------------------
# Legitimate programs must still work under the same limits

LEGIT_PROGRAM = prog(
    """
    import collections, functools, heapq, itertools, json, math, os, re, sys, tempfile, threading
    from fractions import Fraction

    sys.setrecursionlimit(10000)
    n = int(sys.stdin.readline())

    @functools.lru_cache(maxsize=None)
    def depth(k):
        return 0 if k == 0 else 1 + depth(k - 1)

    totals = [0] * 4
    def work(i):
        totals[i] = sum(range(i, n, 4))
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    with open("scratch.json", "w") as fh:
        json.dump({"sum": sum(totals)}, fh)
    with tempfile.NamedTemporaryFile("w+", dir="/tmp") as tmp:
        tmp.write("abc")
        tmp.seek(0)
        text = tmp.read()

    heap = [5, 1, 4]
    heapq.heapify(heap)
    counts = collections.Counter("mississippi")
    print(depth(3000), json.load(open("scratch.json"))["sum"], text, heapq.heappop(heap))
    print(list(itertools.accumulate(range(5))), counts.most_common(1), math.comb(10, 3), Fraction(1, 3) * 3)
    print(re.findall(r"s+", "mississippi"), sorted(os.listdir(".")))
    """
)


def test_legitimate_program_still_passes():
    exit = run_program(LEGIT_PROGRAM, "1000\n", FAST)
    assert exit.status == "ok", exit
    assert exit.stdout.decode().splitlines() == [
        "3000 499500 abc 1",
        "[0, 1, 3, 6, 10] [('i', 4)] 120 1",
        "['ss', 'ss'] ['scratch.json']",
    ]


def test_legitimate_candidate_still_passes():
    code = prog(
        """
        import heapq, itertools, threading
        from collections import defaultdict

        def fib(n, memo={}):
            if n < 2:
                return n
            if n not in memo:
                memo[n] = fib(n - 1) + fib(n - 2)
            return memo[n]

        def k_smallest(xs, k):
            return heapq.nsmallest(k, xs)

        def group(words):
            out = defaultdict(list)
            for w in words:
                out[len(w)].append(w)
            return dict(out)

        def parallel_sum(n):
            parts = [0] * 4
            def work(i):
                parts[i] = sum(range(i, n, 4))
            ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            return sum(parts)

        def pairs(xs):
            return set(itertools.combinations(xs, 2))
        """
    )
    tests = prog(
        """
        assert fib(300) == 222232244629420445529739893461909967206666939096499764990979600
        assert k_smallest([5, 1, 4, 2], 2) == [1, 2]
        assert group(["a", "bb", "cc"]) == {1: ["a"], 2: ["bb", "cc"]}
        assert parallel_sum(10000) == sum(range(10000))
        assert pairs((1, 2, 3)) == {(1, 2), (1, 3), (2, 3)}
        for i in range(50):
            assert fib(i) + fib(i + 1) == fib(i + 2)
        """
    )
    verdict = run_tests(code, tests, CHECKED)
    assert verdict.status == "pass", verdict


def test_harness_is_fine_after_all_this():
    assert run_program("print(input()[::-1])", "olleh\n", FAST).stdout == b"hello\n"
    assert sys.getrecursionlimit() >= 1000 and json.dumps([1]) == "[1]"


# ---------------------------------------------------------------------------------------------
# A wrong sample and its neighbour: forged verdicts, cgroup escape, outliving a killed harness

FORGER = GUARD + prog(
    """
    import glob, os, signal
    FAKES = [b'{"done": true}\\n', b"0" * 64 + b' {"done": true}\\n']

    def f(x):
        written = 0
        for path in sorted(set(glob.glob("/proc/*/fd/*") + glob.glob("/proc/*/task/*/fd/*"))):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue
            for fake in FAKES:
                try:
                    written += os.write(fd, fake) > 0
                except OSError:
                    pass
            os.close(fd)
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != os.getpid():
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except OSError:
                    pass
        return 0
    """
)
NEIGHBOUR_TESTS = (
    "import time\nfor _ in range(20):\n    time.sleep(0.05)\n    assert f(2) == 4\nassert f(3) == 9\n"
)


def checks_side_by_side(candidate: str, limits: Limits) -> tuple:
    """The candidate's verdict and a concurrent wrong neighbour's (f(3) returns 0)."""
    neighbour: list = []
    wrong = "def f(x):\n    return x * x if x != 3 else 0\n"
    thread = threading.Thread(target=lambda: neighbour.append(run_tests(wrong, NEIGHBOUR_TESTS, limits)))
    thread.start()
    time.sleep(0.3)  # the neighbour's checker is running when the forger strikes
    verdict = run_tests(candidate, TESTS_WANT_9, limits)
    thread.join(timeout=limits.wall + SLACK)
    return verdict, neighbour[0]


def test_forged_verdicts_through_every_fd_and_proc_path_fail(no_leaks):
    verdict, neighbour = checks_side_by_side(FORGER, Limits(wall=5.0, cpu=5.0))
    assert verdict.status != "pass", verdict
    assert neighbour.status == "fail" and "assert f(3) == 9" in neighbour.reason, neighbour


def test_forged_verdict_is_refused_even_without_isolation(monkeypatch, tmp_path):
    """Unisolated (opted in), the forger does reach the checkers' pipes: only the signature stops it.
    It writes only to processes this test started, as it is not in a sandbox."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv(isolation.UNSAFE, "1")
    isolation._bwrap_problem.cache_clear()
    forger = prog(
        f"""
        import glob, os
        def f(x):
            reached = 0
            for status in glob.glob("/proc/[0-9]*/status"):
                try:
                    ppid = [l.split()[1] for l in open(status) if l.startswith("PPid:")][0]
                except (OSError, IndexError):
                    continue
                if ppid != "{os.getpid()}":
                    continue
                for path in glob.glob(status[:-6] + "fd/*"):
                    try:
                        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                        reached += os.write(fd, b'{{"done": true}}\\n') > 0
                        os.close(fd)
                    except OSError:
                        pass
            assert reached, "the forger reached no pipe: the test proves nothing"
            return 0
        """
    )
    try:
        assert not isolated()
        verdict, neighbour = checks_side_by_side(forger, Limits(wall=5.0, cpu=5.0))
    finally:
        monkeypatch.undo()
        isolation._bwrap_problem.cache_clear()
    assert verdict.status != "pass", verdict
    assert neighbour.status != "pass", neighbour


def test_candidate_cannot_leave_its_cgroup(mark, no_leaks):
    if cgroup.available()[0] is None:
        pytest.skip("no cgroups here")
    code = prog(
        f"""
        import glob, os, subprocess
        child = os.fork()
        if child == 0:
            os.execv("/bin/sleep", ["sleep", "{mark}"])
        moved = []
        paths = glob.glob("/sys/fs/cgroup/**/cgroup.procs", recursive=True)
        for path in ["/sys/fs/cgroup/cgroup.procs", *paths]:
            for pid in (os.getpid(), child):
                try:
                    with open(path, "w") as fh:
                        fh.write(str(pid))
                    moved.append(path)
                except OSError:
                    pass
        os.makedirs("/tmp/cg", exist_ok=True)
        mount = ["mount", "-t", "cgroup2", "none", "/tmp/cg"]
        mounted = subprocess.run(mount, capture_output=True).returncode
        def f():
            return [moved, mounted]
        """
    )
    with Served(code, FAST) as s:
        moved, mounted = s.call("f", [])
        pids = survivors(mark)
        assert pids
        groups = {line for pid in pids for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines()}
    assert moved == [] and mounted != 0
    assert any(f"/harness-sandbox/{os.getpid()}-" in line for line in groups if ":pids:" in line), groups
    assert survivors(mark) == []


HARNESS = prog(
    """
    import sys
    from harness.sandbox import Limits, run_tests
    candidate = '''
    import os, time
    def f(x):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv("/bin/sleep", ["sleep", "%s"])
            os._exit(0)
        os.execv("/bin/sleep", ["sleep", "%s"])
    ''' % (sys.argv[1], sys.argv[1])
    run_tests(candidate, "assert f(3) == 9\\n", Limits(wall=60.0, cpu=60.0))
    """
)


@pytest.mark.parametrize("mode", ["bwrap", "unsafe"])
def test_nothing_outlives_a_killed_harness(mode, mark, tmp_path):
    """kill -9 of the harness mid-check: its candidates die with it (bwrap) or at the next run (opted
    into no isolation), and the next run removes the dead harness's cgroups and work folders."""
    env = dict(os.environ)
    if mode == "unsafe":
        env.update(PATH=str(tmp_path), **{isolation.UNSAFE: "1"})
    repo = REPO
    harness = subprocess.Popen([sys.executable, "-c", HARNESS, mark], cwd=repo, env=env)

    def started() -> list[int]:  # the candidate and its daemon (the harness's own command line has the mark)
        return [pid for pid in survivors(mark) if pid != harness.pid]

    deadline = time.monotonic() + 90  # a loaded machine takes tens of seconds to import and start
    while len(started()) < 2 and time.monotonic() < deadline and harness.poll() is None:
        time.sleep(0.05)
    assert len(started()) == 2, f"the candidate and its daemon did not start (exit {harness.poll()})"
    harness.kill()
    harness.wait()
    if mode == "bwrap":
        deadline = time.monotonic() + 5
        while survivors(mark) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert survivors(mark) == [], "a candidate outlived the harness"
    next_run = (
        "from harness.sandbox import Limits, run_program; print(run_program('print(1)', '', Limits()).status)"
    )
    done = subprocess.run(
        [sys.executable, "-c", next_run], cwd=repo, env=env, capture_output=True, timeout=60
    )
    assert done.stdout == b"ok\n", done.stderr
    assert survivors(mark) == []
    bases = set(cgroup._state[1].values()) if cgroup.available()[0] else set()
    assert [d for base in bases for d in base.iterdir() if d.name.startswith(f"{harness.pid}-")] == []
    assert list(Path(tempfile.gettempdir()).glob(f"harness-sandbox-{harness.pid}-*")) == []
