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
  ``expression``, that expression is evaluated where the code ran (``f`` removed). The job's code
  has passed the harness's language subset (subset.py) before this process started, rewritten so that
  it reads and writes attributes and subscripts only through the three guards `attribute_guard` binds in its
  namespace (checked against allowlist.py by the object's real type). Only values
  travel: on success ONE line, the list of the encoded values, then exit status 0; otherwise no line
  and an exit status of exits.py (RAISED at the first case that raises, the later cases not run,
  with "Type: message" on stderr for the reason shown; NO_FUNCTION; NOT_A_VALUE; MEMORY). Before any
  candidate code runs, `seal` loads the modules built from C that the language subset's modules and
  codecs need (``preload``), then leaves the import machinery unable to build such a module (so no
  fresh ``posix`` holds them again), takes this process's means to write and exit for the driver alone,
  removes them from ``os``/``posix`` (and threads from ``_thread``), refuses the job's forbidden
  imports, and adds an audit hook (which cannot be removed) refusing files, sockets, processes,
  frames, ctypes and code objects; the guard and the hook use only what is bound to them, and the
  values are encoded by a private copy of the codec with references taken before the code ran.

In every mode a MemoryError that ends the program ends the process with the MEMORY status. Nothing
this process reports is trusted by the harness except through values it compares itself and exit
statuses it reads itself.
"""

import builtins
import json
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import allowlist  # noqa: E402
from codec import CodecError, decode, encode  # noqa: E402
from exits import BROKEN, MEMORY, NO_FUNCTION, NOT_A_VALUE, RAISED  # noqa: E402

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
        ("RLIMIT_MSGQUEUE", 0),  # no POSIX message queue: none outlives its job unseen
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
# the audited attributes that lead to frames (which reach the driver's locals) or would rewrite a trusted
# function's code; reading __globals__ or __closure__ raises no audit event, so the seal's guard and
# hook use neither (see below)
DENIED_ATTRIBUTES = frozenset(
    {
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
)
# modules a sealed process never imports, whoever asks: the heap, raw memory, fds, processes
DENIED_MODULES = frozenset(
    {"gc", "ctypes", "_ctypes", "faulthandler", "_posixsubprocess", "_multiprocessing"}
)
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
    "pidfd_open",
    "pidfd_send_signal",
    "login_tty",
)


# The guard and the hook below are bound to a tuple of what they use (`types.MethodType`), so that no
# call of theirs looks up a global, a builtin or a closure cell, which code that escaped the language
# subset could rebind: a tuple cannot be changed, a method's bound tuple cannot be replaced, and
# replacing a function's code is an audited event the hook refuses.


def denied(name, names):
    """Whether the dotted module `name` or one of its parents is in `names` (no builtin is called)."""
    prefix = ""
    for part in name.split("."):
        prefix = part if not prefix else prefix + "." + part
        if prefix in names:
            return True
    return False


def guarded_import(uses, name, globals=None, locals=None, fromlist=(), level=0):
    """builtins.__import__ once sealed: a forbidden module is refused unless a module's own code asks
    (statistics importing random), told by the caller's globals being a loaded module's namespace."""
    real_import, modules, banned, is_denied, isinstance_, dict_, getattr_, ImportError_ = uses
    if level == 0:
        library = False
        if isinstance_(globals, dict_):
            module = modules.get(dict_.get(globals, "__name__"))
            library = module is not None and getattr_(module, "__dict__", None) is globals
        asked = is_denied(name, banned)
        for item in fromlist or ():
            asked = asked or is_denied(name + "." + item, banned)
        if asked and not library:
            raise ImportError_(f"import of {name} is forbidden here")
    return real_import(name, globals, locals, fromlist, level)


def audit(uses, event, args):
    """The audit hook once sealed: refuses files but reads, fds, processes, sockets, frames, ctypes, the
    heap, code objects and the denied modules."""
    is_denied, events, attributes, modules, type_, str_, PermissionError_, ImportError_ = uses
    if event == "import" and is_denied(args[0], modules):
        raise ImportError_(f"import of {args[0]} is forbidden here")
    if event == "open" and type_(args[0]) is str_ and type_(args[1]) is str_:
        mode = args[1]
        if "w" not in mode and "a" not in mode and "x" not in mode and "+" not in mode:
            return  # reading a file (an import's source): the mounts are read-only anyway
    if event in ("os.listdir", "os.scandir", "os.putenv", "os.unsetenv"):
        return  # what imports read to find a module; this process's own environment
    if event.startswith(events):
        raise PermissionError_(f"{event} is not allowed here")
    if event in ("object.__getattr__", "object.__setattr__", "object.__delattr__") and args[1] in attributes:
        raise PermissionError_(f"{args[1]} is not allowed here")


class StandInFrame:
    """What `sys._getframe` returns once sealed. Libraries ask it for their caller's module name
    (collections.namedtuple, typing.TypeVar); a real frame would lead, through ``f_back``, to the
    driver's own. The real function stays refused by the audit hook wherever a library kept it."""

    f_globals = {"__name__": "solution"}
    f_locals = {}
    f_back = None
    f_lineno = 0


def stand_in_getframe(depth=0):
    return StandInFrame


def no_new_modules(*args, **kwargs):
    raise ImportError("no module is built once sealed: a second copy of one would hold what the seal took")


def seal(forbidden, preload=()):
    """Keep this process's write and exit for the driver, and take them (and the other ways out) from
    the code about to run. Returns (write, exit, encode, decode) for the driver alone."""
    import _imp
    import _signal
    import _thread
    import math
    import posix
    import types

    # the modules built from C that the code may need, loaded now; then nothing builds one again: a
    # fresh posix (the import machinery's create_builtin) would hold the write and _exit taken below
    for name in preload:
        try:
            __import__(name)
        except ImportError:  # a module this Python was built without
            pass
    _imp.create_builtin = _imp.create_dynamic = no_new_modules

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
    sys._getframe = stand_in_getframe
    banned = frozenset(forbidden) | DENIED_MODULES
    guard_uses = (builtins.__import__, sys.modules, banned, denied, isinstance, dict, getattr, ImportError)
    hook_uses = (denied, DENIED_EVENTS, DENIED_ATTRIBUTES, DENIED_MODULES, type, str)
    hook_uses += (PermissionError, ImportError)
    builtins.__import__ = types.MethodType(guarded_import, guard_uses)
    sys.addaudithook(types.MethodType(audit, hook_uses))
    return write, end, private["encode"], private["decode"]


def attribute_guard():
    """The three guards `subset.add_guards` routes a sealed program's attributes and subscripts
    through (allowlist.GET, OWN and ITEM), made before the seal from references they alone hold.

    GET(obj, name) reads the attribute when the list of obj's real type has the name: for a module,
    the module's list; for a class, its own list (``str.maketrans``); for any other object, the lists of
    the classes in its type's MRO together (a super() object: those of the instance it stands for).
    A class the program defined (its module is the program's) allows every public name. OWN(obj)
    returns obj when it is the program's own class or an instance of one, else raises. ITEM(obj)
    returns obj when it may be subscripted: its type has a list (or is the program's), it is a class
    (``list[int]``) or one of typing's forms (``Optional[int]``); else it raises (a mapping proxy, a
    view of memory, any object no list names)."""
    types_ = {name: frozenset(names) for name, names in allowlist.TYPES.items()}
    modules = {name: frozenset(names) for name, names in allowlist.MODULES.items()}
    program, module_type, none = allowlist.PROGRAM_MODULE, type(sys), frozenset()
    type_, isinstance_, getattr_, str_, super_ = type, isinstance, getattr, str, super
    frozenset_, AttributeError_, TypeError_ = frozenset, AttributeError, TypeError
    everything = object()  # a program's class: any public name
    classes, instances = {}, {}

    def own_names(cls):
        if cls not in classes:
            classes[cls] = (
                everything
                if cls.__module__ == program
                else types_.get(f"{cls.__module__}.{cls.__qualname__}", none)
            )
        return classes[cls]

    def instance_names(kind):
        if kind not in instances:
            names = [own_names(cls) for cls in kind.__mro__]
            instances[kind] = everything if everything in names else frozenset_().union(*names)
        return instances[kind]

    def get(obj, name):
        kind = type_(obj)
        if kind is module_type:
            allowed = modules.get(obj.__name__, none)
        elif isinstance_(obj, type_):
            allowed = own_names(obj)
        elif kind is super_:
            allowed = instance_names(obj.__self_class__)
        else:
            allowed = instance_names(kind)
        if (not str_.startswith(name, "_")) if allowed is everything else name in allowed:
            return getattr_(obj, name)
        raise AttributeError_(f"attribute {name} of {kind.__name__} is not allowed")

    def own(obj):
        cls = obj if isinstance_(obj, type_) else type_(obj)
        if cls.__module__ != program:
            raise AttributeError_(f"attributes of {cls.__name__} cannot be set: only the program's own")
        return obj

    subscriptable = {}

    def item(obj):
        kind = type_(obj)
        if kind not in subscriptable:
            subscriptable[kind] = (
                isinstance_(obj, type_) or kind.__module__ == "typing" or (bool(instance_names(kind)))
            )
        if subscriptable[kind]:
            return obj
        raise TypeError_(f"{kind.__name__} cannot be subscripted here")

    return get, own, item


def sealed_call(job, fd):
    """The ``call`` mode: run the code, send its values, end (see the module docstring). After `seal`,
    this function looks up no global or builtin name: candidate code may have replaced any of them."""
    cases, expression, code = job.get("cases", []), job.get("expression"), job["code"]
    fresh = job.get("fresh")
    raised_, no_function, not_a_value, memory = RAISED, NO_FUNCTION, NOT_A_VALUE, MEMORY
    get, own, item = attribute_guard()
    guards = {allowlist.GET: get, allowlist.OWN: own, allowlist.ITEM: item}
    write, end, encode_value, decode_value = seal(job.get("forbidden", []), job.get("preload", ()))
    text, str_, type_, range_, len_, callable_, exec_, compile_, eval_, builtins_ = (
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
    )
    BaseException_, MemoryError_ = BaseException, MemoryError
    program = allowlist.PROGRAM_MODULE

    def fail(error):
        """End as the error says: MEMORY for a MemoryError, else RAISED with "Type: message" on stderr
        (shown as the reason; the ending is the exit status). Plain str values: a candidate's str
        subclass could forge its text."""
        if type_(error) is MemoryError_:
            end(memory)
        try:
            line = str_.__str__(type_(error).__name__)[:200] + ": " + str_.__str__(str_(error))[:2000]
            write(2, str_.encode(str_.replace(line, "\n", " ") + "\n", "utf-8", "replace"))
        except BaseException_:
            pass
        end(raised_)

    def load():
        namespace = {"__name__": program, "__builtins__": builtins_, **guards}
        exec_(compile_(code, "<solution>", "exec"), namespace)
        return namespace

    def encoded(value):
        try:
            return encode_value(value)
        except BaseException_ as e:  # a CodecError, or a conversion the candidate broke
            end(memory if type_(e) is MemoryError_ else not_a_value)

    values = []
    try:
        namespace = load()
        if expression is not None:
            namespace.pop("f", None)
            values.append(encoded(eval_(compile_(expression, "<input>", "eval"), namespace)))
        elif not callable_(namespace.get("f")):
            end(no_function)
        else:
            for n in range_(len_(cases)):
                if n and fresh:
                    namespace = load()
                args, kwargs = decode_value(cases[n])  # fresh values: a call may mutate its own
                values.append(encoded(namespace["f"](*args, **kwargs)))
    except BaseException_ as e:  # the candidate's, SystemExit too: the first raise ends the run
        fail(e)
    try:
        line = str_.encode(text(values)) + b"\n"
    except BaseException_:
        end(not_a_value)
    while line:
        line = line[write(fd, line) :]
    end(0)


def send(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def held_reply(job, reply):
    """The ``call`` mode in two processes. This one holds the reply descriptor and its own exit status,
    runs no candidate code and is never sealed; the child closes the reply, seals itself and runs the
    code (`sealed_call`), sending its one line through a pipe of its own. Once the child has ended,
    this process passes on that line only after exit status 0, and one of the driver's statuses only
    without a line; a death by signal as 128 + the signal; anything else as BROKEN (a line longer than
    `output_mb` is passed on as far as the harness's own bound, which reports it). So the code,
    sealed or not, never holds the harness's reply or this process's status."""
    limit = job["limits"]["output_mb"] * MB
    line, sent = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(line)
            os.close(reply)
            sealed_call(job, sent)  # ends the child
        finally:  # only where the driver's own code failed before the seal: never the parent's path
            os._exit(BROKEN)
    os.close(sent)
    received = bytearray()
    while len(received) <= limit:
        block = os.read(line, 1 << 16)
        if not block:
            break
        received += block
    if len(received) > limit:  # passed on, so that the harness's own bound on the reply says so
        os.kill(child, 9)
        os.waitpid(child, 0)
        send(reply, received)
        os._exit(BROKEN)
    status = os.waitpid(child, 0)[1]
    if os.WIFSIGNALED(status):
        os._exit(128 + os.WTERMSIG(status))
    code = os.WEXITSTATUS(status)
    if code == 0 and received.endswith(b"\n") and received.count(b"\n") == 1:
        send(reply, received)
        os._exit(0)
    if code in (RAISED, NO_FUNCTION, NOT_A_VALUE, MEMORY) and not received:
        os._exit(code)
    sys.stderr.write(f"the sealed call ended with status {code} and {len(received)} bytes sent\n")
    sys.stderr.flush()
    os._exit(BROKEN)


def main():
    requests = os.fdopen(int(sys.argv[1]), "r", encoding="utf-8")
    replies = os.fdopen(int(sys.argv[2]), "w", encoding="utf-8")
    job = read_line(requests)
    set_limits(job["limits"])
    if job["mode"] == "call":
        requests.close()
        sys.path.append(job.get("packages") or "/nonexistent")
        held_reply(job, replies.fileno())
    if job.get("packages"):
        sys.path.append(job["packages"])
    sys.setrecursionlimit(max(sys.getrecursionlimit(), job.get("recursion_limit", 10000)))
    try:
        if job["mode"] == "program":
            requests.close()
            replies.close()
            run_program(job["code"], job.get("exit_ends", False))
        elif job["mode"] == "serve":
            serve(job["code"], requests, replies)
        else:
            check(job, requests, replies)
    except MemoryError:  # the rlimit: the harness reads the status, not this process's text
        sys.stderr.write("MemoryError\n")
        raise SystemExit(MEMORY) from None


if __name__ == "__main__":
    main()
