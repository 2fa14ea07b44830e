"""`harness gpu-check` where `harness` cannot start yet: on the GPU machine its dependencies are wheels that
the check's own `install` step puts in place. This imports the checks from this checkout, which needs only
the standard library, and runs them with the same options:

    python3 scripts/gpu_check.py --wheels .whl --out OUT    # from the repository root
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.runs.gpu_check import main  # noqa: E402 - after the checkout is on the path

if __name__ == "__main__":
    sys.exit(main())
