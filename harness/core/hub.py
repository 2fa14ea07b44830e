"""Whether the Hugging Face Hub answers, found out in about a second instead of minutes of retries, and
whether a model can be loaded from where `--model` points, decided before anything is written."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from harness import HarnessError
from harness.core.io.read import refuse_pickled_weights

PROBE_TIMEOUT = 1.5  # seconds


@functools.cache
def hub_unreachable() -> str | None:
    """Why the Hub cannot be used (HF_HUB_OFFLINE, a failed probe of HF_ENDPOINT), or None if it answers."""
    import httpx

    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return "HF_HUB_OFFLINE is set"
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    try:
        response = httpx.get(f"{endpoint}/api/models", params={"limit": 1}, timeout=PROBE_TIMEOUT)
    except httpx.HTTPError as e:
        return f"{endpoint} did not answer within {PROBE_TIMEOUT:g} s ({type(e).__name__})"
    if not 200 <= response.status_code < 400:  # not a Hub: a captive portal, a proxy's error page
        return f"{endpoint}/api/models answered HTTP {response.status_code}"
    return None


def looks_like_path(model: str) -> bool:
    """Whether `model` names a local folder rather than a Hub id ("org/name"): it starts with /, ./, ../
    or ~, has more than one separator, or its first part exists here."""
    if model in (".", "..") or model.startswith(("/", "./", "../", "~")):
        return True
    separators = [s for s in (os.sep, os.altsep, "/") if s]
    if not any(s in model for s in separators):
        return False
    parts = model.replace(os.altsep or os.sep, os.sep).replace("/", os.sep).split(os.sep)
    return len(parts) > 2 or os.path.lexists(parts[0])


def check_model_source(model: str, revision: str | None = None, *, needs: str = "config.json") -> None:
    """Refuse, in about a second and with one line, a model that cannot load: a missing local folder, one
    without `needs`, or a Hub id that is not cached while the Hub cannot be reached. A cached Hub id
    with the Hub unreachable switches this process (and the processes it starts) to offline mode, so
    transformers reads the cache instead of retrying the network for a minute."""
    path = Path(model).expanduser()
    if path.is_dir():
        if needs and not (path / needs).is_file():
            raise HarnessError(f"--model {model}: {path} is not a Hugging Face model folder (no {needs})")
        refuse_pickled_weights(path)  # only safetensors are loaded: a pickle could run code
        return
    if looks_like_path(model):
        what = "is a file, not a model folder" if path.exists() else "no such folder"
        raise HarnessError(f"--model {model}: {what}")
    why = hub_unreachable()
    if why is None:
        return
    if not _cached(model, revision, needs or "tokenizer_config.json"):
        raise HarnessError(
            f"--model {model}: not a local folder, and not in the Hugging Face cache while the Hub cannot "
            f"be reached ({why})"
        )
    go_offline()


def go_offline() -> None:
    """Hub downloads read the local cache only, here and in the processes started from here."""
    import huggingface_hub.constants

    os.environ["HF_HUB_OFFLINE"] = "1"
    huggingface_hub.constants.HF_HUB_OFFLINE = True


def _cached(model: str, revision: str | None, filename: str) -> bool:
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.errors import HFValidationError

    try:
        found = try_to_load_from_cache(model, filename, revision=revision)
    except (HFValidationError, ValueError):
        return False
    return isinstance(found, str)
