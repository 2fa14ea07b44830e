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


def main():
    requests = os.fdopen(int(sys.argv[1]), "r", encoding="utf-8")
    replies = os.fdopen(int(sys.argv[2]), "w", encoding="utf-8")
    job = read_line(requests)
    set_limits(job["limits"])
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
