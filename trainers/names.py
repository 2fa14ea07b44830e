"""The `harness train METHOD` names, importable without loading the methods (the command line's help
and its refusal of an unknown method list them; `trainers.methods.METHODS` maps each to its class)."""

METHOD_NAMES = ("grpo", "spell", "azr", "arena", "ulorl", "spae")


def check_method(name: str) -> None:
    """Refuse a method name that is not one of `METHOD_NAMES`, naming the valid ones."""
    from harness import HarnessError

    if name not in METHOD_NAMES:
        raise HarnessError(f"unknown method {name!r}; valid methods: {', '.join(METHOD_NAMES)}")
