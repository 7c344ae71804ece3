"""Is a judge's reply a judgement at all? One rule for every judged benchmark.

An endpoint can answer 200 with something that is not a judgement: an empty body, an HTML error page ("502 Bad
Gateway"), an error or rate-limit message ("Rate limit: 3 requests per second exceeded"), a refusal ("I'm sorry, I
can't help with that"). Reading a grade or a rating out of such text would turn a fault into a score, so
`not_a_judgement` names what is wrong with it; the benchmarks ask the judge again (evaluator.benchmarks.judging)
and, if it still does not judge, count the item ungraded (SimpleQA) or unrated (LAVE), never scored.

A refusal or fault phrase only disqualifies a reply that has no verdict where the benchmark's format puts one (a
rationale may well say "the answer is an error"); markup and replies that start like an error message never count.
A bare verdict ("B", or LAVE's "3") is a judgement: the reference graders read it so (LAVE flags it: no rationale).
"""
from __future__ import annotations

import re

EMPTY = "an empty reply"
MARKUP = "markup (a web page or an XML document), not a judgement"
ERROR = "an error message, not a judgement"
REFUSAL = "a refusal, not a judgement"

_MARKUP = re.compile(r"^\s*(?:<!doctype\b|<\?xml\b|<(?:html|head|body|title|center|h1|div|pre)\b)|</(?:html|body)>",
                     re.IGNORECASE)
_ERROR_START = re.compile(
    r"^[\s*_`#>\"']*(?:error\b|exception\b|traceback\b|fatal\b|internal server error|service unavailable|bad gateway|"
    r"gateway time-?out|too many requests|rate[- ]?limit|quota\b|request timed out|upstream\b|"
    r"(?-i:[45]\d\d\s+[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)\s*$|\{\s*\"(?:error|detail|message)\"\s*:)", re.IGNORECASE)
_FAULT = re.compile(r"rate[- ]?limit|too many requests|quota (?:exceeded|reached)|service unavailable|"
                    r"internal server error|bad gateway|gateway time-?out|try again later", re.IGNORECASE)
_REFUSAL = re.compile(
    r"^[\s*_`#>\"']*(?:i'?m sorry|i am sorry|sorry[,.!]|apologies|as an ai\b|"
    r"i (?:can ?not|can't|cannot|am unable to|'m unable to|won't|will not|am not able to) "
    r"(?:help|assist|comply|provide|do that|fulfil|fulfill|complete|answer that|evaluate|rate|grade|judge))",
    re.IGNORECASE)


def not_a_judgement(text: str | None, has_verdict: bool) -> str | None:
    """Why `text` is not a judgement (one of the constants above), or None when it is one.

    has_verdict: the benchmark's parser found its verdict where its format puts it.
    """
    if not isinstance(text, str) or not text.strip():
        return EMPTY
    if _MARKUP.search(text):
        return MARKUP
    first = next(line for line in text.splitlines() if line.strip())
    if _ERROR_START.match(first):
        return ERROR
    if not has_verdict:
        if _REFUSAL.match(first):
            return REFUSAL
        if _FAULT.search(text):
            return ERROR
    return None
