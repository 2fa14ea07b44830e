r"""Maths written in Unicode, plain text or code, rewritten as the LaTeX math-verify reads:
``√5`` -> ``\sqrt{5}``, ``3√13`` -> ``3\sqrt{13}``, ``τ`` -> ``\tau``, ``ln 2`` ->
``\ln 2``, ``np.arcsin(10/13)`` -> ``\arcsin(10/13)``, ``x₁`` -> ``x_{1}``.
"""

from __future__ import annotations

import re

_GREEK = dict(
    zip(
        "αβγδεζηθικλνξρστυφχψωϕϵΓΔΘΛΞΠΣΥΦΨΩ",
        "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda nu xi rho sigma tau upsilon "
        "phi chi psi omega phi epsilon Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega".split(),
        strict=True,
    )
)  # not μ, as often the prefix micro (μm) as a symbol
_OPERATORS = {
    "±": r"\pm",
    "∓": r"\mp",
    "≤": r"\le",
    "≥": r"\ge",
    "≠": r"\neq",
    "≈": r"\approx",
    "÷": r"\div",
    "∈": r"\in",
    "∪": r"\cup",
    "∩": r"\cap",
    "⋅": r"\cdot",
    "≡": r"\equiv",
    "ℤ": r"\mathbb{Z}",
    "ℝ": r"\mathbb{R}",
    "ℕ": r"\mathbb{N}",
    "ℚ": r"\mathbb{Q}",
    "ℂ": r"\mathbb{C}",
}
_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_SUBSCRIPT_RUN = re.compile("[₀₁₂₃₄₅₆₇₈₉]+")
_RADICAND = r"\s*(?:\((?P<paren>[^()]*)\)|\{(?P<brace>[^{}]*)\}|(?P<bare>\d+(?:\.\d+)?|\\[A-Za-z]+|[A-Za-z]))"
_ROOT = re.compile(rf"(?P<root>[√∛∜]|(?<![\\A-Za-z])sqrt(?=\s*\())(?:{_RADICAND})")
_ROOT_INDEX = {"√": "", "∛": "[3]", "∜": "[4]", "sqrt": ""}
# longest first ("arcsin" before "sin"); not "sec", a unit as often as the secant
_FUNCTIONS = "arcsin arccos arctan sinh cosh tanh sin cos tan csc cot ln log exp".split()
_PLAIN_FUNCTION = re.compile(rf"(?<![\\A-Za-z])({'|'.join(_FUNCTIONS)})(?![A-Za-z])")
_CODE_PREFIX = re.compile(r"(?<![\w.])(?:np|numpy|math|sp|sympy)\.(?=[A-Za-z])")
_CODE_POWER = re.compile(r"(?<=[\w)\]])\s*\*\*\s*(?=[\w(])")
_CODE_CONSTANT = re.compile(r"(?<![\\A-Za-z])pi(?![A-Za-z])")


def as_latex(text: str) -> str:
    """`text` with its Unicode symbols, plain function names and code (``np.``, ``**``) as LaTeX.
    Code is read only in text without LaTeX commands (a backslash), so ``**`` there is a power."""
    if _CODE_PREFIX.search(text) and "\\" not in text:
        text = _CODE_POWER.sub("^", _CODE_PREFIX.sub("", text))
        text = _CODE_CONSTANT.sub(r"\\pi ", text)
    text = _SUBSCRIPT_RUN.sub(lambda m: "_{" + m.group().translate(_SUBSCRIPTS) + "}", text)
    for symbol, command in _GREEK.items():
        text = text.replace(symbol, f"\\{command} ")
    for symbol, command in _OPERATORS.items():
        text = text.replace(symbol, f"{command} ")
    text = _ROOT.sub(_root, text)
    return _PLAIN_FUNCTION.sub(r"\\\1 ", text)


def _root(match: re.Match) -> str:
    """One radical as ``\\sqrt``: √5, √(x+1), √{2}, √x, ∛2, sqrt(5)."""
    radicand = next(match.group(g) for g in ("paren", "brace", "bare") if match.group(g) is not None)
    return f"\\sqrt{_ROOT_INDEX[match.group('root')]}{{{radicand.strip()}}}"
