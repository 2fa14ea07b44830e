"""The process that runs inside the sandbox (standard library only; started as a script).

It reads one job (a JSON line) from the request pipe (its fd number is argv[1]), lowers its own
resource limits (hard limits, which the code it then runs cannot raise again), puts the job's
`packages` folder (read-only third-party packages such as numpy) on sys.path, and runs the job:

- ``program``: the code runs as ``__main__`` with the real stdin and stdout (with ``exit_ends``,
  SystemExit ends it like a normal return).
- ``serve``: the code is executed as a module, then requests are answered on the reply pipe
  (argv[2]): ``{"call": "f" | "Class.method", "args": [...], "kwargs": {...}}`` (with
  ``"not_none": true``, a non-bool result is sent as ``result is not None``; with
  ``"digest_over": n``, a list or tuple whose repr is longer than n is sent as its sha256) and
  ``{"eval": "expr"}`` answer ``{"ok": value}`` or ``{"raise": [type, message]}``; values go by
  value (codec.py). ``{"reload": true}`` executes the code again in a fresh namespace (fresh
  globals, default arguments and instances) and answers the callable names.
- ``check``: trusted test code runs with each candidate name bound to a proxy that sends the call
  on the reply pipe and reads the answer on the request pipe (the harness relays it to a ``serve``
  process), so the candidate and the assertions never share a process. Ends with
  ``{"done": true}`` or ``{"failed": reason}``. Each message it sends is signed: the line is
  ``HMAC-SHA256(key, "n:" + json) json`` with the job's secret key and the message's number n.
- ``call`` (one shot, sealed): the code runs once, then either ``f`` is called on each of the job's
  ``cases`` (argument lists, by value; with ``fresh``, each in a fresh module namespace) or, with
  ``expression``, that expression is evaluated where the code ran (``f`` removed); ONE line answers
  (the outcomes up to the first case that raises: the later cases are not run), and the process
  ends. Before any candidate code runs, `seal` takes this process's means to write and exit for the
  driver alone, removes them from ``os``/``posix`` (and threads from ``_thread``), refuses the job's
  forbidden imports, and adds an audit hook (which cannot be removed) refusing files, sockets, processes,
  frames, ctypes and code objects; the answer is encoded by a private copy of the codec with
  references taken before the code ran. A candidate thus cannot write, patch or end its own verdict.

Nothing this process reports is trusted by the harness except through values it compares itself.
"""

import builtins
import json
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from codec import CodecError, decode, encode  # noqa: E402

MB = 1 << 20


def set_limits(limits):
    """Hard rlimits: a second layer under the namespaces and cgroup the harness sets up."""
    for name, value in (
        ("RLIMIT_AS", limits["memory_mb"] * MB),
        ("RLIMIT_CPU", int(limits["cpu"]) + 1),
        ("RLIMIT_FSIZE", limits["file_mb"] * MB),
        ("RLIMIT_NPROC", limits["processes"]),
        ("RLIMIT_NOFILE", 256),
        ("RLIMIT_CORE", 0),
    ):
        resource.setrlimit(getattr(resource, name), (value, value))


def read_line(stream):
    line = stream.readline()
    if not line:
        raise SystemExit(0)
    return json.loads(line)


def write_line(stream, message):
    stream.write(json.dumps(message) + "\n")
    stream.flush()


def run_program(code, exit_ends):
    """Run the code as __main__; with `exit_ends`, SystemExit (exit(), sys.exit(1)) just ends it, as
    LiveCodeBench's runner treats it: the output written so far is the answer."""
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    try:
        exec(compile(code, "<solution>", "exec"), namespace)
    except SystemExit:
        if not exit_ends:
            raise


def load(code):
    """Execute the code in a fresh module namespace; returns it and the names it can be called by."""
    namespace = {"__name__": "solution", "__builtins__": builtins}
    exec(compile(code, "<solution>", "exec"), namespace)
    return namespace, [k for k, v in namespace.items() if callable(v) and not k.startswith("__")]


def serve(code, requests, replies):
    namespace, names = load(code)
    write_line(replies, {"ready": names})
    instances = {}
    while True:
        request = read_line(requests)
        started = time.perf_counter()
        try:
            if request.get("reload"):
                instances.clear()
                namespace, names = load(code)
                result = names
            elif "eval" in request:
                result = eval(compile(request["eval"], "<expression>", "eval"), namespace)
            else:
                target = request["call"]
                if "." in target:
                    cls, method = target.split(".", 1)
                    if cls not in instances:
                        instances[cls] = namespace[cls]()
                    fn = getattr(instances[cls], method)
                else:
                    fn = namespace[target]
                result = fn(*decode(request["args"]), **decode(request.get("kwargs", {"d": []})))
                if request.get("not_none") and not isinstance(result, bool):  # e.g. a re.Match
                    result = result is not None
            text = repr(result) if request.get("digest_over") and type(result) in (list, tuple) else ""
            if len(text) > request.get("digest_over", 0):
                import hashlib  # imported when needed: each import slows every sandbox start

                reply = {"digest": hashlib.sha256(text.encode()).hexdigest()}
            else:
                reply = {"ok": encode(result)}
        except CodecError as e:
            reply = {"raise": ["CodecError", str(e)]}
        except BaseException as e:  # the candidate's exception (SystemExit too), reported by name
            reply = {"raise": [type(e).__name__, str(e)[:2000]]}
        reply["seconds"] = time.perf_counter() - started
        write_line(replies, reply)


class CandidateError(Exception):
    """Raised in test code when the candidate raised an exception that is not a builtin one."""


def signer(replies, key):
    """write_line for the check mode: each line signed with the job's key and its sequence number."""
    import hashlib  # imported when needed: each import slows every sandbox start
    import hmac

    sent = [0]

    def send(message):
        body = json.dumps(message)
        mac = hmac.new(key, f"{sent[0]}:{body}".encode(), hashlib.sha256).hexdigest()
        sent[0] += 1
        replies.write(f"{mac} {body}\n")
        replies.flush()

    return send


def proxy(name, requests, send):
    def call(*args, **kwargs):
        send({"call": name, "args": encode(list(args)), "kwargs": encode(kwargs)})
        answer = read_line(requests)
        if "ok" in answer:
            return decode(answer["ok"])
        kind, message = answer["raise"]
        error = getattr(builtins, kind, None)
        passes_through = isinstance(error, type) and issubclass(error, Exception)
        if passes_through and not issubclass(error, StopIteration | StopAsyncIteration):
            raise error(message)
        raise CandidateError(f"{kind}: {message}")

    call.__name__ = name
    return call


def check(job, requests, replies):
    send = signer(replies, bytes.fromhex(job.pop("key")))
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    if job.get("prelude"):
        exec(compile(job["prelude"], "<prompt>", "exec"), namespace)
    entry = job.get("entry_point")
    for name in [*job["names"], *([entry] if entry else [])]:
        trusted = name in namespace or hasattr(builtins, name)  # the prompt's helpers and the builtins
        if not trusted or name == entry:
            namespace[name] = proxy(name, requests, send)
    try:
        exec(compile(job["tests"], "<tests>", "exec"), namespace)
        if entry and callable(namespace.get("check")):
            namespace["check"](namespace[entry])
    except BaseException as e:
        import traceback

        frame = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == "<tests>"][-1:]
        line = job["tests"].splitlines()[frame[0].lineno - 1].strip() if frame else ""
        send({"failed": f"{type(e).__name__}: {str(e)[:300]} [{line[:200]}]"})
        return
    send({"done": True})


# what a sealed process may not do once candidate code runs (CPython's audit events, by prefix)
DENIED_EVENTS = (
    "open",
    "os.",
    "subprocess.",
    "socket.",
    "ctypes.",
    "mmap.",
    "gc.",
    "sys._getframe",
    "sys._current_frames",
    "sys.settrace",
    "sys.setprofile",
    "sys.addaudithook",
    "code.__new__",
    "function.__new__",
    "cpython.",
    "signal.",
    "fcntl.",
    "resource.setrlimit",
    "_posixsubprocess",
    "pty.",
    "shutil.",
    "import_module",
)
# frames, which reach the driver's locals; setting __code__ or __globals__ would rewrite trusted functions
DENIED_ATTRIBUTES = {
    "tb_frame",
    "gi_frame",
    "cr_frame",
    "ag_frame",
    "f_back",
    "f_locals",
    "f_globals",
    "__code__",
    "__globals__",
    "__closure__",
    "__builtins__",
}
# modules a sealed process never imports, whoever asks: the heap, raw memory, fds, processes
DENIED_MODULES = {"gc", "ctypes", "_ctypes", "faulthandler", "_posixsubprocess", "_multiprocessing"}
# os and posix functions that write, end, signal, duplicate or spawn
STRIPPED = (
    "write",
    "writev",
    "pwrite",
    "pwritev",
    "sendfile",
    "splice",
    "copy_file_range",
    "_exit",
    "abort",
    "kill",
    "killpg",
    "dup",
    "dup2",
    "close",
    "closerange",
    "fork",
    "forkpty",
    "register_at_fork",
    "system",
    "popen",
    "fdopen",
    "open",
    "openpty",
    "pipe",
    "pipe2",
    "ftruncate",
    "truncate",
    "set_blocking",
    "set_inheritable",
    "eventfd",
    "eventfd_write",
    "memfd_create",
    "posix_spawn",
    "posix_spawnp",
    "execv",
    "execve",
    "execl",
    "execle",
    "execlp",
    "execlpe",
    "execvp",
    "execvpe",
    "spawnv",
    "spawnve",
    "spawnl",
    "spawnle",
    "spawnlp",
    "spawnlpe",
    "spawnvp",
    "spawnvpe",
    "tcsetpgrp",
    "setsid",
    "setpgid",
    "mkfifo",
    "mknod",
    "set_wakeup_fd",
    "raise_signal",
    "pthread_kill",
    "setitimer",
    "alarm",
    "signal",
)


def seal(forbidden):
    """Keep this process's write and exit for the driver, and take them (and the other ways out) from
    the code about to run. Returns (write, exit, encode, decode) for the driver alone."""
    import _signal
    import _thread
    import math
    import posix

    write, end = posix.write, posix._exit
    codec_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "codec.py")
    private = {"__name__": "sealed_codec", "__builtins__": dict(builtins.__dict__)}  # copies, out of reach
    with open(codec_path, encoding="utf-8") as f:
        exec(compile(f.read(), codec_path, "exec"), private)
    private["math"] = type("math", (), {"isfinite": staticmethod(math.isfinite)})
    for module in (posix, os, _signal, sys.modules.get("signal")):
        for name in STRIPPED:
            if module is not None and hasattr(module, name):
                delattr(module, name)

    def no_threads(*args, **kwargs):
        raise RuntimeError("threads are not allowed here")

    # no thread races the driver; stubs rather than removal, so that modules which import threading
    # (queue, logging) still load, and threading's own copy of the function is replaced too
    for module, names in (
        (_thread, ("start_new_thread", "start_new", "interrupt_main")),
        (sys.modules.get("threading"), ("_start_new_thread",)),
    ):
        for name in names:
            if module is not None and hasattr(module, name):
                setattr(module, name, no_threads)
    banned = set(forbidden) | DENIED_MODULES
    real_import, modules = builtins.__import__, sys.modules

    def denied(name, names=banned):
        parts = name.split(".")
        return any(".".join(parts[:k]) in names for k in range(1, len(parts) + 1))

    def from_library(globals):
        """Whether an import comes from a module's own code (numpy importing os), not the candidate's."""
        module = modules.get(globals.get("__name__")) if isinstance(globals, dict) else None
        return module is not None and getattr(module, "__dict__", None) is globals

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        asked = [name, *(f"{name}.{item}" for item in fromlist or ())]
        if level == 0 and not from_library(globals) and any(denied(n) for n in asked):
            raise ImportError(f"import of {name} is forbidden here")
        return real_import(name, globals, locals, fromlist, level)

    def hook(event, args):
        if event == "import" and denied(args[0], DENIED_MODULES):
            raise ImportError(f"import of {args[0]} is forbidden here")
        if event == "open" and isinstance(args[0], str) and not set(str(args[1] or "w")) & set("wax+"):
            return  # reading a file (an import's source): the mounts are read-only anyway
        if event in ("os.listdir", "os.scandir", "os.putenv", "os.unsetenv"):
            return  # what imports read to find a module; this process's own environment
        if event.startswith(DENIED_EVENTS):
            raise PermissionError(f"{event} is not allowed here")
        if event in ("object.__getattr__", "object.__setattr__", "object.__delattr__") and (
            args[1] in DENIED_ATTRIBUTES
        ):
            raise PermissionError(f"{args[1]} is not allowed here")

    builtins.__import__ = guarded_import
    sys.addaudithook(hook)
    return write, end, private["encode"], private["decode"]


def sealed_call(job, fd):
    """The ``call`` mode: run the code, answer one line, end (see the module docstring). After `seal`,
    this function looks up no global or builtin name: candidate code may have replaced any of them."""
    cases, expression, code = job.get("cases", []), job.get("expression"), job["code"]
    fresh = job.get("fresh")
    for name in job.get("preload", []):  # a library whose import needs what the seal takes (numpy: frames)
        try:
            __import__(name)
        except ImportError:
            pass
    write, end, encode_value, decode_value = seal(job.get("forbidden", []))
    text, str_, type_, range_, len_, callable_, exec_, compile_, eval_, builtins_, BaseException_ = (
        repr,
        str,
        type,
        range,
        len,
        callable,
        exec,
        compile,
        eval,
        builtins,
        BaseException,
    )

    def raised(error):  # plain str values: a candidate's str subclass could forge its repr
        try:
            return ["raise", str_.__str__(type_(error).__name__)[:200], str_.__str__(str_(error))[:2000]]
        except BaseException_:
            return ["raise", "Exception", "an exception that cannot be named"]

    def load():
        namespace = {"__name__": "solution", "__builtins__": builtins_}
        exec_(compile_(code, "<solution>", "exec"), namespace)
        return namespace

    try:
        namespace = load()
        if expression is not None:
            namespace.pop("f", None)
            value = eval_(compile_(expression, "<input>", "eval"), namespace)
            answer = {"results": [["ok", encode_value(value)]]}
        elif not callable_(namespace.get("f")):
            answer = {"missing": "f"}
        else:
            results = []
            for n in range_(len_(cases)):
                if n and fresh:
                    namespace = load()
                try:
                    args, kwargs = decode_value(cases[n])  # fresh values: a call may mutate its own
                    results.append(["ok", encode_value(namespace["f"](*args, **kwargs))])
                except BaseException_ as e:  # the candidate's, SystemExit too
                    results.append(raised(e))
                    break  # a raise decides every use of the run: the later cases would only cost time
            answer = {"results": results}
    except BaseException_ as e:
        answer = {"results": [raised(e)]}
    try:
        line = text(answer).encode() + b"\n"
    except BaseException_:  # a value whose conversion the candidate broke
        end(3)
    while line:
        line = line[write(fd, line) :]
    end(0)


def main():
    requests = os.fdopen(int(sys.argv[1]), "r", encoding="utf-8")
    replies = os.fdopen(int(sys.argv[2]), "w", encoding="utf-8")
    job = read_line(requests)
    set_limits(job["limits"])
    if job["mode"] == "call":
        requests.close()
        sys.path.append(job.get("packages") or "/nonexistent")
        sealed_call(job, replies.fileno())
    if job.get("packages"):
        sys.path.append(job["packages"])
    sys.setrecursionlimit(max(sys.getrecursionlimit(), job.get("recursion_limit", 10000)))
    if job["mode"] == "program":
        requests.close()
        replies.close()
        run_program(job["code"], job.get("exit_ends", False))
    elif job["mode"] == "serve":
        serve(job["code"], requests, replies)
    else:
        check(job, requests, replies)


if __name__ == "__main__":
    main()
