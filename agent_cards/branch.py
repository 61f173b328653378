"""An isolated worker's branch: ``subagent/<slug>-<suffix>`` (BRANCH-SLUG, BRANCH-PREFIX, BRANCH-SUFFIX).

The slug follows lich's worktree dialog, which slugs a typed name: letters and digits in any script,
2 to 5 words, 10 to 40 characters, ``agent`` when nothing is left. Lengths are counted in UTF-16 code
units, as lich's dialog counts them; the final cut never splits a surrogate pair (a deliberate
departure, see docs/decisions.md), so every branch is valid UTF-8 and a valid git ref name.
"""

from __future__ import annotations

PREFIX = "subagent/"
FALLBACK = "agent"
MIN_WORDS, MAX_WORDS = 2, 5
MIN_UNITS, MAX_UNITS = 10, 40
SUFFIX_LEN = 4


def _units(text: str) -> int:
    """Length in UTF-16 code units."""
    return sum(2 if ord(c) > 0xFFFF else 1 for c in text)


def _cut(text: str, limit: int) -> str:
    out, used = [], 0
    for c in text:
        used += _units(c)
        if used > limit:
            break
        out.append(c)
    return "".join(out)


def _words(description: str) -> list[str]:
    import unicodedata

    kept = (c if unicodedata.category(c)[0] in "LN" else " " for c in description.lower())
    return "".join(kept).split()


def slug(description: str | None) -> str:
    picked: list[str] = []
    length = 0
    for word in _words(description or ""):
        grown = _units(word) if not picked else length + 1 + _units(word)
        has_minimum = len(picked) >= MIN_WORDS and length >= MIN_UNITS
        if len(picked) == MAX_WORDS or (grown > MAX_UNITS and has_minimum):
            break
        picked.append(word)
        length = grown
    return _cut("-".join(picked), MAX_UNITS).rstrip("-") or FALLBACK


def suffix(tool_use_id: str) -> str:
    """The last four ASCII letters or digits of the call's id, lower-cased (fewer when it has fewer).

    An id with no ASCII letter or digit at all gets four hex digits of its SHA-256 instead, so the
    branch still differs from call to call (docs/decisions.md).
    """
    tail = "".join(c for c in tool_use_id if c.isascii() and c.isalnum())[-SUFFIX_LEN:].lower()
    if tail:
        return tail
    import hashlib  # only for this rare case

    return hashlib.sha256(tool_use_id.encode("utf-8", "surrogatepass")).hexdigest()[:SUFFIX_LEN]


def branch_name(description: str | None, tool_use_id: str) -> str:
    return f"{PREFIX}{slug(description)}-{suffix(tool_use_id)}"
