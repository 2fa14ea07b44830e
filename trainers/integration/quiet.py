"""Dependencies' chatter kept off a run's output."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

LIBRARIES = r"(transformers|trl|accelerate|torch)\b"  # whose FutureWarnings `quiet_libraries` hides


@contextlib.contextmanager
def quiet_libraries() -> Iterator[None]:
    """Within: transformers logs errors only, without progress bars, and the FutureWarnings and
    DeprecationWarnings of transformers, TRL, accelerate and torch are not shown; restored after."""
    from transformers.utils import logging

    verbosity, bars = logging.get_verbosity(), logging.is_progress_bar_enabled()
    logging.set_verbosity_error()
    logging.disable_progress_bar()
    try:
        with warnings.catch_warnings():
            for category in (FutureWarning, DeprecationWarning):
                warnings.filterwarnings("ignore", category=category, module=LIBRARIES)
            yield
    finally:
        logging.set_verbosity(verbosity)
        if bars:
            logging.enable_progress_bar()
