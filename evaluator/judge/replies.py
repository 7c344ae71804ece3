"""Reading a judge's reply: the SimpleQA grade (parse_simpleqa_grade) and the LAVE rating (parse_lave_rating), each
from where its prompt's format puts it. Pure text functions, cheap to import."""
from __future__ import annotations

import re

# SimpleQA grade parsing

_WORD_TO_GRADE = {"CORRECT": "A", "INCORRECT": "B", "NOT ATTEMPTED": "C"}
_PREFIX = re.compile(r"^(?:THE\s+)?(?:FINAL\s+)?(?:GRADE|ANSWER|VERDICT|LETTER|RESULT|EVALUATION|OUTPUT)"
                     r"(?:\s+(?:IS|LETTER))?\s*[:=\-]?\s*")
_LINE = re.compile(r"^(?:(?P<letter>[ABC])(?:\s+(?P<word1>CORRECT|INCORRECT|NOT ATTEMPTED))?"
                   r"|(?P<word2>CORRECT|INCORRECT|NOT ATTEMPTED))$")


def _line_grade(line: str) -> str | None:
    """The grade one line holds alone (letter, grade word or both, decorated or labelled), else None."""
    line = line.strip().upper()
    # Decoration: markdown, quotes, brackets, punctuation -> spaces ("NOT_ATTEMPTED" -> "NOT ATTEMPTED").
    line = re.sub(r"[*_`#>\"'\u2018\u2019\u201c\u201d()\[\]{}]", " ", line)
    line = re.sub(r"\s+", " ", line).strip()
    for _ in range(2):  # "Final answer: Grade: A"
        line = _PREFIX.sub("", line).strip()
    line = re.sub(r"\s*[:.\-\u2013\u2014=,;!]+\s*", " ", line)
    line = re.sub(r"\s+", " ", line).strip()
    match = _LINE.match(line)
    if not match:
        return None
    word = match.group("word1") or match.group("word2")
    letter = match.group("letter")
    if letter and word:
        return letter if _WORD_TO_GRADE[word] == letter else None
    return letter or _WORD_TO_GRADE[word]


def split_simpleqa_reply(text: str | None) -> tuple[str | None, str]:
    """(grade, the reply without its grade line) of a SimpleQA judge reply; (None, the whole reply) when ungraded.

    The grade line is the LAST non-empty line ("Reason: ...\nA"), else the FIRST one when the judge put its grade
    first and explained below it ("A\n\nThe answer names ..."). A line alone holds the grade: the letter, the grade
    word, or both ("A) CORRECT"), in any case, with markdown or a label ("**A**", "Grade: B", "Final answer: C.").
    Two lines holding different grades ("A\n...\nB"), or a grade nowhere at either end, is ungraded.
    """
    if not isinstance(text, str):
        return None, ""
    lines = text.strip().splitlines()  # stripped: the first and the last line hold text
    if not lines:
        return None, ""
    grades = [_line_grade(line) for line in lines]
    at = len(lines) - 1 if grades[-1] else 0 if grades[0] else None
    if at is None or len({g for g in grades if g}) > 1:
        return None, text.strip()
    return grades[at], "\n".join(lines[:at] + lines[at + 1:]).strip()


def parse_simpleqa_grade(text: str | None) -> str | None:
    """"A" (correct), "B" (incorrect), "C" (not attempted) from a judge reply's grade line (split_simpleqa_reply:
    its last line, else its first); None when it has none."""
    return split_simpleqa_reply(text)[0]


# LAVE rating parsing

# A lone 1, 2 or 3: not touching a letter, digit or underscore, and not part of a decimal ("0.3", "2.5"); "3." is fine.
_LAVE_DIGIT = r"(?<![\w.])(?<!\d\.)([123])(?![\w]|[.,]\d)"
_LAVE_LABELLED = re.compile(r"\brating\b[\s*_]*(?:is\b|of\b)?[\s*_]*[:=]?[\s*_]*" + _LAVE_DIGIT, re.IGNORECASE)
# The reply's final character, as the reference reads it: a lone 1, 2 or 3 at the very end (closing punctuation,
# quotes and markdown after it allowed).
_LAVE_FINAL = re.compile(r"(?<![\w.])(?<!\d\.)([123])[\s.!*_`)\]\"']*$")


def parse_lave_rating(text: str | None) -> int | None:
    """The LAVE rating (1, 2 or 3) where the rater's format puts it; None when it is not there (the caller then
    decides: the paper's fallback 2, flagged, for a real judgement; unrated for a reply that is not one).

    Only two places count: a labelled rating ("So rating=3", "Rating: 2", "the rating is **1**"; the last one wins
    over later stray digits: "rating: 2/3" -> 2, "rating=2. Not a 3." -> 2), else the reply's final character, as the
    reference implementation reads it ("... so 3." -> 3, "2" -> 2). A digit anywhere else is never a rating: "Rate
    limit: 3 requests per second exceeded" and "3 of the references agree" hold none. Non-strings -> None.
    """
    if not isinstance(text, str):
        return None
    labelled = _LAVE_LABELLED.findall(text)
    if labelled:
        return int(labelled[-1])
    final = _LAVE_FINAL.search(text.strip())
    return int(final.group(1)) if final else None
