"""Whether the Hugging Face Hub answers, found out in about a second instead of minutes of retries."""

from __future__ import annotations

import functools
import os

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
