"""The sandbox driver's exit statuses that carry an outcome (standard library only; both sides read it).

Only the driver's own code ends a process with one of these, after the code it ran has returned or
raised; the harness (process.py, jobs.py) reads them from the exit status, never from the text the
program wrote.
"""

RAISED = 101  # a sealed call raised: nothing was sent
NO_FUNCTION = 102  # a sealed call's code defines no callable `f`
NOT_A_VALUE = 103  # a sealed call's value cannot cross the wall by value (codec.py)
MEMORY = 104  # MemoryError ended the program: the address-space rlimit (any mode)
BROKEN = 105  # a sealed call's process ended otherwise: a status of its own, or a line with a failure
