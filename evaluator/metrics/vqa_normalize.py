"""VQA-style answer normalisation (the rules of the official VQA evaluation, as reused by ReForm-Eval's KIE metric).

Steps, in order (``normalize_answer``):

1. newlines and tabs become spaces, then the text is stripped;
2. punctuation (``normalize_punctuation``): each of ``; / [ ] " { } ( ) = + \\ _ - > < @ ` , ? !`` is deleted when it
   touches a space somewhere in the text (or the text has a digit,digit comma), else replaced by a space; then
   periods not followed by a digit are removed;
3. digits and articles (``normalize_digits_articles``): lower-case, split on whitespace, number words
   ``none/zero .. ten`` become digits, the articles ``a an the`` are dropped, and apostrophe-less contractions
   (``dont``) get their apostrophe back (``don't``); words are re-joined with single spaces.

Two quirks of the official code are kept on purpose so that scores match it:

* the period rule is written ``(?!<=\\d)(\\.)(?!\\d)`` (a mistyped look-behind, so it only checks the character
  *after* the period), and
* the period substitution is called as ``sub("", text, re.UNICODE)``, i.e. with ``count=32``: at most 32 periods are
  removed.

Ground-truth answers of the VQA accuracy get only steps 1-2 (``normalize_punctuation``); ReForm-Eval's KIE metric
applies the full ``normalize_answer`` to both sides.
"""
from __future__ import annotations

import re

CONTRACTIONS: dict[str, str] = {
    "aint": "ain't", "arent": "aren't", "cant": "can't", "couldve": "could've", "couldnt": "couldn't",
    "couldn'tve": "couldn't've", "couldnt've": "couldn't've", "didnt": "didn't", "doesnt": "doesn't",
    "dont": "don't", "hadnt": "hadn't", "hadnt've": "hadn't've", "hadn'tve": "hadn't've", "hasnt": "hasn't",
    "havent": "haven't", "hed": "he'd", "hed've": "he'd've", "he'dve": "he'd've", "hes": "he's", "howd": "how'd",
    "howll": "how'll", "hows": "how's", "Id've": "I'd've", "I'dve": "I'd've", "Im": "I'm", "Ive": "I've",
    "isnt": "isn't", "itd": "it'd", "itd've": "it'd've", "it'dve": "it'd've", "itll": "it'll", "let's": "let's",
    "maam": "ma'am", "mightnt": "mightn't", "mightnt've": "mightn't've", "mightn'tve": "mightn't've",
    "mightve": "might've", "mustnt": "mustn't", "mustve": "must've", "neednt": "needn't", "notve": "not've",
    "oclock": "o'clock", "oughtnt": "oughtn't", "ow's'at": "'ow's'at", "'ows'at": "'ow's'at",
    "'ow'sat": "'ow's'at", "shant": "shan't", "shed've": "she'd've", "she'dve": "she'd've", "she's": "she's",
    "shouldve": "should've", "shouldnt": "shouldn't", "shouldnt've": "shouldn't've",
    "shouldn'tve": "shouldn't've", "somebody'd": "somebodyd", "somebodyd've": "somebody'd've",
    "somebody'dve": "somebody'd've", "somebodyll": "somebody'll", "somebodys": "somebody's",
    "someoned": "someone'd", "someoned've": "someone'd've", "someone'dve": "someone'd've",
    "someonell": "someone'll", "someones": "someone's", "somethingd": "something'd",
    "somethingd've": "something'd've", "something'dve": "something'd've", "somethingll": "something'll",
    "thats": "that's", "thered": "there'd", "thered've": "there'd've", "there'dve": "there'd've",
    "therere": "there're", "theres": "there's", "theyd": "they'd", "theyd've": "they'd've",
    "they'dve": "they'd've", "theyll": "they'll", "theyre": "they're", "theyve": "they've", "twas": "'twas",
    "wasnt": "wasn't", "wed've": "we'd've", "we'dve": "we'd've", "weve": "we've", "werent": "weren't",
    "whatll": "what'll", "whatre": "what're", "whats": "what's", "whatve": "what've", "whens": "when's",
    "whered": "where'd", "wheres": "where's", "whereve": "where've", "whod": "who'd", "whod've": "who'd've",
    "who'dve": "who'd've", "wholl": "who'll", "whos": "who's", "whove": "who've", "whyll": "why'll",
    "whyre": "why're", "whys": "why's", "wont": "won't", "wouldve": "would've", "wouldnt": "wouldn't",
    "wouldnt've": "wouldn't've", "wouldn'tve": "wouldn't've", "yall": "y'all", "yall'll": "y'all'll",
    "y'allll": "y'all'll", "yall'd've": "y'all'd've", "y'alld've": "y'all'd've", "y'all'dve": "y'all'd've",
    "youd": "you'd", "youd've": "you'd've", "you'dve": "you'd've", "youll": "you'll", "youre": "you're",
    "youve": "you've",
}

NUMBER_WORDS: dict[str, str] = {
    "none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10",
}

ARTICLES = frozenset({"a", "an", "the"})

PUNCTUATION = (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`", ",",
               "?", "!")

_PERIOD_STRIP = re.compile(r"(?!<=\d)(\.)(?!\d)")  # sic: the official (mistyped) look-behind
_COMMA_STRIP = re.compile(r"(\d)(,)(\d)")
_PERIOD_MAX_COUNT = int(re.UNICODE)  # sic: the official code passes re.UNICODE (32) as `count`


def normalize_punctuation(text: str) -> str:
    """The official VQA punctuation rule (see the module docstring)."""
    out = text
    has_digit_comma = _COMMA_STRIP.search(text) is not None
    for p in PUNCTUATION:
        if (p + " " in text or " " + p in text) or has_digit_comma:
            out = out.replace(p, "")
        else:
            out = out.replace(p, " ")
    return _PERIOD_STRIP.sub("", out, count=_PERIOD_MAX_COUNT)


def normalize_digits_articles(text: str) -> str:
    """Lower-case, number words to digits, drop articles, restore contractions; single-space joined."""
    words = []
    for word in text.lower().split():
        word = NUMBER_WORDS.get(word, word)
        if word not in ARTICLES:
            words.append(word)
    return " ".join(CONTRACTIONS.get(w, w) for w in words)


def clean_whitespace(text: str) -> str:
    """Newlines and tabs to spaces, then strip (the first step of the official normalisation)."""
    return text.replace("\n", " ").replace("\t", " ").strip()


def normalize_answer(text: str) -> str:
    """The full VQA prediction normalisation: whitespace, punctuation, then digits/articles/contractions."""
    return normalize_digits_articles(normalize_punctuation(clean_whitespace(text)))
