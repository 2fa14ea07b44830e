#!/usr/bin/env bash
# Fill a wheelhouse (default .whl/) with what the GPU check (`harness gpu-check --wheels .whl`, started by
# `scripts/gpu_check.py` there) installs on a GPU machine that has PyTorch, transformers, accelerate and the
# scientific stack but no network: this project's wheel and the runtime dependencies such a machine lacks
# (TRL and datasets, the math scorer, pydantic, AZR's metrics, the GGUF reader), each at the version
# installed in the Python that runs this script (the tested one), for CPython $PY_VERSION (default 3.12) on
# manylinux x86-64. torch is never carried: the machine's own is used.
#
#   scripts/gpu_wheels.sh [DIR]          # here, with the project's environment active (or PYTHON=...)
#   python3 scripts/gpu_check.py --wheels .whl --out OUT   # there, from the repository root
#
# Not carried: evalplus (imported only when HumanEval+/MBPP+ answers are scored, which the check does not
# do) and its API clients; everything the check runs imports without it.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$REPO/.whl}"
PYTHON="${PYTHON:-python3}"
PY_VERSION="${PY_VERSION:-3.12}"
# the distributions missing on the GPU image (/work/.library/device/KINDS.md lists what it holds)
NAMES=(
    trl datasets dill multiprocess
    math-verify latex2sympy2_extended antlr4-python3-runtime
    pydantic pydantic-core annotated-types typing-inspection
    complexipy apted gguf
)

# pin each to the version installed here: the combination the test suite ran
PINS="$("$PYTHON" - "${NAMES[@]}" <<'EOF'
import importlib.metadata as md
import sys

for name in sys.argv[1:]:
    try:
        print(f"{name}=={md.version(name)}")
    except md.PackageNotFoundError:
        sys.exit(f"error: {name} is not installed in {sys.executable}: run with the project's environment")
EOF
)"

mkdir -p "$DIR"
rm -f "$DIR"/*.whl
# the project's wheel, built from a copy of the working tree's files (tracked and untracked-not-ignored),
# so that no stale build/ folder leaks into it
PARTS="pyproject.toml README.md harness benchmarks results trainers"  # what the wheel is built from
SRC="$(mktemp -d)"
trap 'rm -rf "$SRC"' EXIT
(cd "$REPO" && git ls-files -z --cached --others --exclude-standard -- $PARTS |
    while IFS= read -r -d '' f; do [ ! -e "$f" ] || cp --parents "$f" "$SRC"; done)
"$PYTHON" -m pip wheel -q --no-deps --no-build-isolation -w "$DIR" "$SRC"
"$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version "$PY_VERSION" \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
    -d "$DIR" $PINS
# one wheel per distribution: two versions of one stop `pip install --no-index` there
dupes=$(ls "$DIR"/*.whl | xargs -n1 basename | cut -d- -f1 | sort | uniq -d)
if [ -n "$dupes" ]; then
    echo "error: several wheels of: $dupes" >&2
    exit 1
fi
ls -1 "$DIR"/*.whl | xargs -n1 basename
echo "total: $(du -ch "$DIR"/*.whl | tail -1 | cut -f1) in $(ls "$DIR"/*.whl | wc -l) wheels, $DIR"
