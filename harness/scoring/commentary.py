"""Text a response adds after its answer line: a sign-off ("Let me know if you have
other questions!"), an explanation section ("### Explanation" and what follows), or a paragraph of
comment that states no value. `answer_part` gives the response without them, so that its answer
line is the last; text that states a value, doubts the answer or goes on with the work is never
dropped.
"""

from __future__ import annotations

import re

_SIGN_OFF = re.compile(
    r"(?:let\s+me\s+know|i\s+hope\s+(?:this|that|it)\s+(?:helps|is\s+correct)|hope\s+(?:this|that|it)\s+helps|feel\s+free"
    r"|if\s+you\s+have\s+(?:any\s+)?(?:other\s+|more\s+|further\s+)?questions|happy\s+to\s+help|good\s+luck"
    r"|thank\s+you|thanks)\b",
    re.IGNORECASE,
)
_SECTION = re.compile(  # "### Explanation", "**Explanation:**", "Explanation:" alone on its line
    r"[#*\s]*(?:explanation|reasoning|justification|verification|notes?|summary|key\s+steps)[*:\s]*",
    re.IGNORECASE,
)
_DOUBT = re.compile(
    r"\b(?:wait|but|however|actually|mistake|error|wrong|incorrect|re-?check|reconsider|double-?check"
    r"|not|n't|unsure|hmm|alternatively|instead|correction|should\s+be|redo|again|recalculat\w*"
    r"|contradict\w*|fails?)\b",
    re.IGNORECASE,
)
_CONTINUES = re.compile(  # the work goes on: "Now we find the roots", "Next, ...", a lead-in ending ":"
    r"^(?:now|next|then|we|let|let's|to|first|second|step|using|since|because|substitut\w*|plug\w*"
    r"|solv\w*|consider|suppose|assume|given|from|if|for|case)\b|[:,]$",
    re.IGNORECASE,
)
_STATES_VALUE = re.compile(r"\d|\$|\\[(\[]|\\boxed|=|\*\*")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_MOST_DROPPED = 3


def answer_part(text: str) -> tuple[str, str] | None:
    """(`text` without the sign-offs, explanation section and value-free comment paragraphs after
    its answer line (at most three pieces), the text dropped), or None when there are none to drop
    or what follows doubts the answer ("Wait, ...", "but this is not ...")."""
    everything = [p for p in _PARAGRAPH_BREAK.split(text.strip()) if p.strip()]
    paragraphs = list(everything)
    section = next(
        (i for i in range(len(paragraphs) - 1, 0, -1) if _SECTION.fullmatch(paragraphs[i].splitlines()[0])),
        None,
    )
    if section is not None:
        tail = "\n\n".join(paragraphs[section:])
        if _DOUBT.search(_SIGN_OFF.sub("", tail)):
            return None
        paragraphs = paragraphs[:section]
    dropped = 0
    while len(paragraphs) > 1 and dropped < _MOST_DROPPED and _is_comment(paragraphs[-1]):
        paragraphs.pop()
        dropped += 1
    if section is None and not dropped:
        return None
    return "\n\n".join(paragraphs), "\n\n".join(everything[len(paragraphs) :])


def _is_comment(paragraph: str) -> bool:
    """A sign-off, or prose that states no value (no digit, no maths, no bold), does not doubt the
    answer and does not go on with the work."""
    plain = paragraph.strip().strip("*_# ").strip()
    if _STATES_VALUE.search(plain):
        return False
    if _SIGN_OFF.match(plain):
        return True
    return not _DOUBT.search(plain) and not _CONTINUES.search(plain)
