"""Reading free-form model responses as a careful human grader would (scorer version 2).

HyperGVL sec. 3.1: "The LVLMs are required to provide answers in predefined formats, but the factually accurate
answers with incorrect formats are also considered to be correct after manual review." Appendix E.2: "Despite there
is format guidance in the prompt, we perform manual review to accept factually correct answers with minor
formatting deviations, ensuring evaluation fairness." These functions stand in for that review; the rules are
written out in ``evaluators/hypergvl_accuracy/README.md`` ("Grading rules") and, in short:

* the answer is read after the last *closed* reasoning block (``<think>...</think>``); a block that never closes
  (cut at the token limit) leaves the response unparsed;
* the answer region is the text after the last ``Ans:`` / ``Answer:`` marker (Markdown emphasis and full-width
  colons allowed), else the whole response, whose last stated answer counts;
* a region that only repeats the requested format or a placeholder (``[Yes/No]``, ``{v1,v2,...}``,
  ``Cycle:[e0,e1,…]``), or states two contradicting answers, is unparsed (``None``);
* integers are whole tokens (never the digits of ``v5`` or ``e1``), number words count, and the value is the number
  stated as the answer, not an operand or a restated parameter (``degree 2``);
* ``\\boxed{}``, ``$...$`` and Markdown emphasis are ignored.

A response from which no answer of the right type can be read is *unparsed* (``None``), which the metric reports
separately from a wrong answer.

Every function is linear in the response length. No pattern has two quantifiers next to each other that can match
the same character (blanks, then an optional bracket and its own blanks; never blanks, an optional bracket and blanks
again, which backtracks polynomially on a run of blanks: the earlier ``_HEDGE_AFTER`` took a minute on 400 spaces
after a number); every look-back reads the ``_WINDOW`` characters before a token with one match of a reversed
pattern. ``tests/test_answers.py`` checks it on
adversarial responses at the Space's size limit, and ``benchmarks/grading_worst_case.py`` measures each task's
worst one (under 50 ms at 65,536 characters).
"""
from __future__ import annotations

import re

# The grading rules' version. Every score records it (``results.json``, Space entries, the dataset card); a stored
# score of another version is re-graded from its raw responses. Results written before it existed are version "1".
SCORER_VERSION = "2"

MAX_DIGITS = 12  # longer numbers are parsed as an (always wrong) overflow instead of a huge int
_WINDOW = 40  # characters a look-back inspects before a token
MAX_REGION = 20_000  # characters of an answer region that are read (an answer is not a book)

# ------------------------------------------------------------------------------------------------ the region
_THINK_OPEN = ("<think>", "<thinking>")
_THINK_CLOSE = ("</think>", "</thinking>")
# the last marker, found from the end in one backtracking pass; a marker followed by a closing quote
# ("after “Ans:”") mentions the format and is skipped
_LAST_MARKER = re.compile(r".*(?<![A-Za-z])(?:ans|answer)s?(?:[ \t]|\*\*|__)*[:：](?![ \t*]*[”\"'’»])",
                          re.IGNORECASE | re.DOTALL)
_LATEX = re.compile(r"_\{\w{1,12}\}|\\(?:boxed|text|textbf|mathrm|mathbf|fbox)[ \t]*\{|\\[{}_]|\\(?:ldots|dots|cdots)|"
                    r"\\(?:rightarrow|to|longrightarrow)|\\(?:geq|ge)\b|\\[()\[\]]|\\,|[`$：＝]|\*\*|(?<![ \t])\*|\*(?![ \t])")
_LATEX_MAP = {"\\{": "{", "\\}": "}", "\\_": "_", "\\ldots": "...", "\\dots": "...", "\\cdots": "...",
              "\\rightarrow": "->", "\\to": "->", "\\longrightarrow": "->", "\\geq": ">=", "\\ge": ">=",
              "：": ":", "＝": "="}


def _latex(m: re.Match) -> str:
    token = m.group()
    return "_" + token[2:-1] if token.startswith("_{") else _LATEX_MAP.get(token, " ")  # v_{3} is v_3


def _normalise(text: str) -> str:
    return _LATEX.sub(_latex, text)


def after_reasoning(response: object) -> str | None:
    """The response after its last closed reasoning block; ``None`` when a block never closes (or no string)."""
    if not isinstance(response, str):
        return None
    if "<" not in response:
        return response
    lower = response.lower()
    opened = max(lower.rfind(tag) for tag in _THINK_OPEN)
    closed, tag = max((lower.rfind(tag), tag) for tag in _THINK_CLOSE)
    if opened > closed:  # the last block never closes: cut inside the reasoning
        return None
    return response if closed < 0 else response[closed + len(tag):]


def answer_region(response: object) -> tuple[str, bool] | None:
    """(normalised text to read the answer from, whether it follows an ``Ans:`` marker), or ``None`` (unparsed).

    The region is at most ``MAX_REGION`` characters: the first ones after the marker, else the last ones of the
    response (where a conclusion stands), so a hostile response costs bounded time beyond finding the marker."""
    text = after_reasoning(response)
    if text is None:
        return None
    marker = _LAST_MARKER.match(text)
    if marker:
        return _normalise(text[marker.end():marker.end() + MAX_REGION]).strip(), True
    return _normalise(text[-MAX_REGION:]).strip(), False


# ------------------------------------------------------------------------------------------------ shared pieces
_ELLIPSIS = re.compile(r"\.\.\.|…|\.\s\.\s\.")
_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)|\n")


def _first_sentence(region: str) -> str:
    m = _SENTENCE_END.search(region)
    return region[:m.start()] if m else region


def _sentences(region: str) -> list[tuple[str, str]]:
    """(sentence, the character ending it) in order."""
    out, start = [], 0
    for m in _SENTENCE_END.finditer(region):
        out.append((region[start:m.start()], m.group()))
        start = m.end()
    out.append((region[start:], ""))
    return out


def _ends_with(reversed_pattern: re.Pattern, reversed_text: str, at: int) -> bool:
    """Whether the ``_WINDOW`` characters before position ``at`` of a text end with what ``reversed_pattern`` spells
    backwards; ``reversed_text`` is the text reversed (``text[::-1]``, made once per text).

    One match at the start of the reversed window: a look-back costs one attempt, not one per window position. The
    window is a string of its own (``endpos``), so a word cut at its first character counts as a whole word."""
    pos = len(reversed_text) - at
    return reversed_pattern.match(reversed_text, pos, pos + _WINDOW) is not None


def _ids(text: str, pattern: re.Pattern) -> list[int]:
    return [int(x) if len(x) <= MAX_DIGITS else -1 for x in pattern.findall(text)]


# ------------------------------------------------------------------------------------------------ integers
_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORD_VALUE = {w: i for i, w in enumerate(_UNITS)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}
_NUMBER = re.compile(
    r"(?<![\w.\-])(-?\d+(?:\.\d+)?)(?![\w]|\.\d)"
    r"|(?<![\w\-])(" + "|".join(_TENS) + r")(?:[- ](" + "|".join(_UNITS[1:10]) + r"))?(?![\w\-])"
    r"|(?<![\w\-])(" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")(?![\w\-])", re.IGNORECASE)
# a restated question parameter ("degree 2", "order >= 3", "orders 3") is not the value
_PARAMETER = re.compile(r"\b(?:degree|order)s?[ \t]*(?:of[ \t]+|is[ \t]+|=[ \t]*|>=[ \t]*|≥[ \t]*|>[ \t]*|"
                        r"at[ \t]+least[ \t]+)?\d+", re.IGNORECASE)
# The look-back patterns below are written reversed: each is matched once at the start of the reversed window before
# a token, which states "the window ends with ..." in one attempt instead of a search from every window position
# (a leading \n? is the forward pattern's $, which also matches before a final newline).
# A cue that the number is the value ("is 7", "total of 7", "= 7"): a cue word, or a noun and "of"/"is", or a sign,
# then filler up to the number. One word list gives both readings below (longest first, as the greedy "equals?" read).
_CUE_WORDS = sorted("is are was be equal equals give gives giving get gets has have contain contains exactly answer so "
                    "thus hence therefore".split(), key=len, reverse=True)
_CUE_NOUNS = "total length flow value weight sum cost".split()
_CUE_FILLER = r"[\s:=(\[\"'“]*"
_CUE_BEFORE = re.compile(_CUE_FILLER + r"(?:(?:" + "|".join(w[::-1] for w in _CUE_WORDS) + r"|(?:(?:fo|si)[ \t]+)?(?:"
                         + "|".join(w[::-1] for w in _CUE_NOUNS) + r"))\b|[=:≈~])", re.IGNORECASE)
# the same cues read forward over a whole region: one pass gives every position a cue (and its filler) ends at
_CUE_FORWARD = re.compile(r"(?:\b(?:" + "|".join(_CUE_WORDS) + r"|(?:" + "|".join(_CUE_NOUNS)
                          + r")(?:[ \t]+(?:of|is))?)|[=:≈~])" + _CUE_FILLER, re.IGNORECASE)
_LEADING = re.compile(r"[\s\[({\"'“‘~≈]*")
_OPERATOR_AFTER = re.compile(r"[ \t]*(?:\)[ \t]*)?(?:[+*×·]|-[ \t]*(?:\([ \t]*)?\d)")
_OPERATOR_BEFORE = re.compile(r"\n?[ \t]*(?:\([ \t]*)?(?:[+*×·]|-[ \t]*[\d)])")  # forward: (+|d -) (( ? $
_HEDGE_AFTER = re.compile(r"[ \t]*(?:\)[ \t]*)?(?:,[ \t]*)?(?:\([ \t]*)?(?:\bor\b|/|\|)[ \t]*(?:maybe[ \t]+|possibly[ \t]+|"
                          r"perhaps[ \t]+)?", re.IGNORECASE)
_BUT = re.compile(r"\b(?:but|although|though|however)\b", re.IGNORECASE)
_HEDGE_BEFORE = re.compile(r"\n?[ \t]*(?:rehtie|neewteb)\b", re.IGNORECASE)  # forward: (either|between) $
_CORRECTION = re.compile(r"\b(?:actually|wait|correction|on second thought|i mean|let me recount)\b", re.IGNORECASE)
_NOT_COUNT_ONE = re.compile(r"\n?[ \t]+(?:eht|siht|taht|hcae|yreve|yna|on)\b", re.IGNORECASE)  # forward: (the|...) $
_ONE_FOLLOWERS = re.compile(r"[ \t]+(?:of|another|by)\b", re.IGNORECASE)
_NO_PATH = re.compile(r"\bno[ \t]+(?:such[ \t]+|valid[ \t]+|possible[ \t]+)?(?:path|route)\b|\bunreachable\b|"
                      r"\bnot[ \t]+(?:be[ \t]+)?reachable\b|\bcannot[ \t]+be[ \t]+reached\b|"
                      r"\bpath[ \t]+does[ \t]+not[ \t]+exist", re.IGNORECASE)
_NONE_COUNTED = re.compile(r"\bnone\b|\bno[ \t]+(?:such[ \t]+)?(?:vertices|vertex|nodes?|hyper-?edges?|edges?)\b",
                           re.IGNORECASE)
_NO_FLOW = re.compile(r"\bno[ \t]+(?:positive[ \t]+|feasible[ \t]+)?flow\b", re.IGNORECASE)
# "If no path exists, answer “No path”", "[number or No path]": a condition, a quoted instruction, an alternative
# forward: if (there is)? $ | or $ | (answer|format|as) " $
_CONDITIONAL_BEFORE = re.compile(r"\n?(?:[ \t]+(?:si[ \t]+ereht[ \t]+)?fi\b|[ \t]+ro\b|[\"“'‘][ \t]*(?:rewsna|tamrof|sa)\b)",
                                 re.IGNORECASE)


def _to_int(token: re.Match) -> int | str:
    digits, tens, unit, word = token.groups()
    if digits is not None:
        whole, _, fraction = digits.partition(".")
        if len(whole.lstrip("-")) > MAX_DIGITS:
            return "overflow"
        return int(whole) if not fraction.strip("0") else digits  # "6.0" is 6; "6.5" is a (wrong) value
    if tens is not None:
        return _WORD_VALUE[tens.lower()] + (_WORD_VALUE[unit.lower()] if unit else 0)
    return _WORD_VALUE[word.lower()]


def _numbers(region: str, backwards: str | None = None) -> list[tuple[int, int, int | str]]:
    """(start, end, value) of every free number: digits inside names and restated parameters excluded
    (``backwards``: the region reversed, when the caller has it)."""
    out, backwards = [], region[::-1] if backwards is None else backwards
    for m in _NUMBER.finditer(region):
        digits, _, _, word = m.groups()
        if word is not None and word.lower() == "one" and (
                _ends_with(_NOT_COUNT_ONE, backwards, m.start()) or _ONE_FOLLOWERS.match(region, m.end())):
            continue
        if digits is not None and len(digits) <= MAX_DIGITS and "." not in digits:
            out.append((*m.span(), int(digits)))  # the common case, without _to_int's checks
        else:
            out.append((*m.span(), _to_int(m)))
    return out


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"  # what the re module reads as \w


def _cue_reader(region: str, backwards: str):
    """``cued(at)``: whether a cue ends the window before position ``at`` (``_ends_with(_CUE_BEFORE, ...)``), read
    from one forward pass over the region, so a token costs a lookup; where a cue starts at or before the window's
    first character, or a word is cut there, the window's own edge decides and the look-back itself is read."""
    cues = {m.end(): m.start() for m in _CUE_FORWARD.finditer(region)}

    def cued(at: int) -> bool:
        edge = at - _WINDOW  # the window's first character; a word cut there reads as whole in the window alone
        cut = edge > 0 and _is_word(region[edge - 1]) and _is_word(region[edge])
        cue = cues.get(at)
        if not cut and (cue is None or cue > edge):
            return cue is not None
        return _ends_with(_CUE_BEFORE, backwards, at)

    return cued


def _stated_value(region: str, anchored: bool, other_unit: re.Pattern | None = None) -> tuple[int | str | None, int]:
    """(the number stated as the answer, its position) or (None, -1); see the card's rule 4."""
    region = _PARAMETER.sub(lambda m: " " * len(m.group()), region)
    backwards = region[::-1]
    size, after, unit = len(region), _OPERATOR_AFTER.match, other_unit.match if other_unit is not None else None
    before, conditional = _OPERATOR_BEFORE.match, _CONDITIONAL_BEFORE.match  # _ends_with, inlined: called per token
    tokens = [t for t in _numbers(region, backwards)
              if not (after(region, t[1]) or before(backwards, size - t[0], size - t[0] + _WINDOW)  # an operand
                      or unit is not None and unit(region, t[1])  # a count of something the question does not ask
                      or conditional(backwards, size - t[0], size - t[0] + _WINDOW))]  # 'If no flow, answer "0"'
    if not tokens:
        return None, -1

    cued = _cue_reader(region, backwards)

    if anchored and _LEADING.match(region).end() == tokens[0][0]:
        chosen = tokens[0]
    elif anchored:
        chosen = next((t for t in tokens if cued(t[0])), None)
        if chosen is None and len({t[2] for t in tokens}) != 1:
            return None, -1  # several numbers, none stated as the value
        chosen = chosen or tokens[0]
    else:
        chosen = next((t for t in reversed(tokens) if cued(t[0])), tokens[-1])  # the last cued, else the last
    start, end, value = chosen
    hedge = _HEDGE_AFTER.match(region, end)
    if hedge and _NUMBER.match(region, hedge.end()) or _ends_with(_HEDGE_BEFORE, backwards, start):
        return None, -1  # "3 or 4", "either 3 or 4", "between 3 and 4"
    stop = _SENTENCE_END.search(region, end)
    but = _BUT.search(region, end, stop.start() if stop else len(region))
    if but and any(v != value for _, _, v in _numbers(region[but.end():stop.start() if stop else len(region)])):
        return None, -1  # "I get 2, but the image suggests 3"
    return value, start


def _phrase_at(pattern: re.Pattern, region: str) -> int:
    """Position of the first statement of ``pattern`` that is not inside a conditional ("if no path exists")."""
    backwards = region[::-1]
    for m in pattern.finditer(region):
        if not _ends_with(_CONDITIONAL_BEFORE, backwards, m.start()):
            return m.start()
    return -1


def parse_int(response: object, allow_no_path: bool = False, allow_no_flow: bool = False,
              other_unit: re.Pattern | None = None) -> int | str | None:
    """The number a response states as its answer; ``"No path"`` (OSP) or 0 for "no flow" (OMF) when allowed.

    ``other_unit`` names what the question does not count (VC: hyperedges): ``10 vertices and 12 hyperedges`` is
    10 for VC and 12 for HEC."""
    found = answer_region(response)
    if found is None:
        return None
    region, anchored = found
    correction = None
    for correction in _CORRECTION.finditer(region):
        pass
    if correction is not None:  # "5. Actually, it is 6": the corrected statement, read as a conclusion, counts
        value, _ = _stated_value(region[correction.end():], False, other_unit)
        if value is not None:
            region, anchored = region[correction.end():], False
    value, at = _stated_value(region, anchored, other_unit)
    phrase = _NO_PATH if allow_no_path else _NO_FLOW if allow_no_flow else None
    if phrase is None:  # a count: "none" / "no vertices of degree 2" is 0
        return value if value is not None or _phrase_at(_NONE_COUNTED, region) < 0 else 0
    said = _phrase_at(phrase, region)
    if said < 0:
        return value
    stated = "No path" if allow_no_path else 0
    if value is None:
        return stated
    opens = _LEADING.match(region).end()
    if at == opens:
        return value
    if said <= opens + 12:  # "There is no path ..." opens the region
        return stated
    return None  # a length and "no path": two answers


# ------------------------------------------------------------------------------------------------ vertex sets
_VERT = re.compile(r"(?<![A-Za-z0-9_])[vV]_?\{?(\d+)\}?(?![A-Za-z0-9_])")
_SYMBOLIC_VERT = re.compile(r"(?<![A-Za-z0-9_])[vV]_?\{?[a-zA-Z]\}?(?![A-Za-z0-9_])")
_GROUP = re.compile(r"[\[{(]([^\[\]{}()]*)[\]})]")
_QUERY_VERTEX = re.compile(r"\b(?:of|for)[ \t]+(?:the[ \t]+)?(?:vertex[ \t]+|node[ \t]+)?[vV]_?\{?\d+\}?"
                           r"|[vV]_?\{?\d+\}?['’]s\b", re.IGNORECASE)
_EDGE_DEFINITION = re.compile(r"\b[eE]_?\{?\d+\}?[ \t]*(?:[=:][ \t]*)?[\[{(][^\[\]{}()]*[\]})]")  # "e1 = {v1,v3}"
_LIST_FILLER = re.compile(r"(?<![A-Za-z0-9_])[vV]_?\{?(?:\d+|[a-zA-Z])\}?(?![A-Za-z0-9_])|\b(?:and|or)\b|[\s,;:&+./…]")
_EMPTY = re.compile(r"\bno[ \t]+(?:n-)?neighbou?rs?\b|\bnone\b|\bempty\b|∅|\bno[ \t]+(?:such[ \t]+)?vertices\b|"
                    r"\bnot[ \t]+have[ \t]+any[ \t]+neighbou?rs?\b|\bisolated\b", re.IGNORECASE)
_OR_AFTER = re.compile(r"[ \t]*(?:,[ \t]*)?(?:\bor\b|/)[ \t]*(?:[A-Za-z]+[ \t]*(?::[ \t]*)?)?[\[{(]", re.IGNORECASE)


def _vertex_groups(region: str) -> list[re.Match]:
    """Bracketed lists of vertices (or empty), not a parenthetical remark (``(through e0, containing v2)``)."""
    return [m for m in _GROUP.finditer(region) if not _LIST_FILLER.sub("", m.group(1))]


def _set_from(text: str) -> frozenset[int] | None:
    if _ELLIPSIS.search(text) or _SYMBOLIC_VERT.search(text):
        return None  # the format template or an unfinished list
    return frozenset(_ids(text, _VERT))


def parse_vertex_set(response: object) -> frozenset[int] | None:
    """A set of vertex ids: ``{v1,v2}``, ``[v1, v2]``, ``v1 and v2``; ``No neighbors`` is the empty set."""
    found = answer_region(response)
    if found is None:
        return None
    region, anchored = found
    region = _QUERY_VERTEX.sub(lambda m: " " * len(m.group()), region)
    region = _EDGE_DEFINITION.sub(lambda m: " " * len(m.group()), region)  # hyperedges of an explanation
    groups = _vertex_groups(region)
    if groups:
        group = groups[0] if anchored else groups[-1]
        if anchored and _OR_AFTER.match(region, group.end()):
            return None  # "{v1} or {v2}": two answers
        return _set_from(group.group(1))
    region = _GROUP.sub(lambda m: " " * len(m.group()), region)  # no list in brackets: they hold remarks
    if anchored:
        sentence = _first_sentence(region)
        if _ELLIPSIS.search(sentence) or _SYMBOLIC_VERT.search(sentence):
            return None
        if _EMPTY.search(sentence):
            return frozenset()  # "v3 has no neighbors"
        ids = _ids(sentence, _VERT)
        if ids:
            return frozenset(ids)
        return frozenset() if _EMPTY.search(region) else None
    for sentence, _ in reversed(_sentences(region)):
        if _EMPTY.search(sentence):
            return frozenset()
        if _VERT.search(sentence):
            return _set_from(sentence)
    return None


# ------------------------------------------------------------------------------------------------ yes / no
_PLACEHOLDER_YN = re.compile(r"\byes[ \t]*(?:/|\bor\b|\|)[ \t]*no\b|\bno[ \t]*(?:/|\bor\b|\|)[ \t]*yes\b",
                             re.IGNORECASE)
_VERDICT = re.compile(r"\b(?:(not|non|aren't|isn't|never)[ \t-]*(?:be[ \t]+)?)?isomorphic\b|\b(yes|no)\b",
                      re.IGNORECASE)
_CONDITIONAL = re.compile(r"\b(?:if|whether|iff|when)\b", re.IGNORECASE)
_DEFINED = re.compile(r"isomorphic[ \t]*$", re.IGNORECASE)
_BARE_YN = re.compile(r"[ \t\[(]*(?:yes|no)[ \t\])]*", re.IGNORECASE)
_WORD_AFTER = re.compile(r"[ \t]+[A-Za-z]")


def _verdicts(sentence: str, opens: int) -> set[str]:
    found = set()
    for m in _VERDICT.finditer(sentence):
        word = m.group(2)
        if word is None:
            found.add("No" if m.group(1) else "Yes")
        elif word.lower() == "yes" or m.start() == opens or not _WORD_AFTER.match(sentence, m.end()):
            found.add(word.capitalize())  # "no" before a word is a determiner ("no vertex"), unless it opens
    return found


def parse_yes_no(response: object) -> str | None:
    """``Yes`` / ``No`` from the first verdict sentence of the region (the last one without an ``Ans:``)."""
    found = answer_region(response)
    if found is None:
        return None
    region, anchored = found
    sentences = _sentences(region)
    if not anchored:
        sentences.reverse()
    for i, (sentence, end) in enumerate(sentences):
        if end == "?":
            continue  # a question is not a verdict
        if _PLACEHOLDER_YN.search(sentence):
            return None  # "[Yes/No]", "yes or no?": the format, not an answer
        condition = _CONDITIONAL.search(sentence)
        if condition:  # what follows "if" is a condition; "isomorphic if ..." is the definition, not a verdict
            sentence = _DEFINED.sub("", sentence[:condition.start()])
        verdicts = _verdicts(sentence, _LEADING.match(sentence).end())
        if len(verdicts) > 1:
            return None  # both
        if verdicts:
            verdict = verdicts.pop()
            if anchored and any(_BARE_YN.fullmatch(later) and later.strip(" \t[]()").lower() != verdict.lower()
                                for later, _ in sentences[i + 1:]):
                return None  # "No. Yes.": two answers
            return verdict
    return None


# ------------------------------------------------------------------------------------------------ 3-colouring
_COLOUR = re.compile(r"(?<![A-Za-z0-9_])[vV]_?(\d+)[\s:=|→>(\-]*(?:(?:is|gets|colou?red|in|with|colou?r)[ \t]+){0,2}"
                     r"[cC]_?\{?(\d+)\}?(?![A-Za-z0-9_])"
                     r"|(?<![A-Za-z0-9_])[vV]_?(\d+)[ \t]*[:=][ \t]*(\d+)(?![\w.])")
_COLOUR_NAME = re.compile(r"(?<![A-Za-z0-9_])[vV]_?(\d+)[\s:=|→>(\-]*(?:(?:is|gets|colou?red|in|with|colou?r)[ \t]+){0,2}"
                          r"(red|green|blue|yellow|orange|purple|black|white)\b", re.IGNORECASE)
_COLOUR_CLASS = re.compile(r"(?<![A-Za-z0-9_])[cC]_?\{?(\d+)\}?[ \t]*[:=]")
_COLORING_LIST = re.compile(r"colou?ring[ \t]*(?::[ \t]*)?([\[{(])", re.IGNORECASE)
_CLOSE = {"[": "]", "{": "}", "(": ")"}


def _colour_list(region: str) -> str:
    """The bracketed list after the first ``Coloring:`` (the whole region when there is none)."""
    m = _COLORING_LIST.search(region)
    if not m:
        return region
    end = region.find(_CLOSE[m.group(1)], m.end())
    if end >= 0 and _OR_AFTER.match(region, end + 1):
        return ""  # two colourings
    return region[m.end():] if end < 0 else region[m.end():end]


def parse_coloring(response: object) -> dict[int, int] | list | None:
    """``Coloring:[v0:c0,v1:c1,...]`` (or ``v0 = c0``, a table, ``c0: v0, v3``) → {vertex: colour}.

    A vertex given two different colours yields an invalid (list) answer, which the verifier rejects."""
    found = answer_region(response)
    if found is None:
        return None
    region, anchored = found
    if not anchored:
        at = region.lower().rfind("coloring")
        if at < 0:
            at = region.lower().rfind("colouring")
        if at < 0:
            return None
        region = region[at:]
    text = _colour_list(region)
    if _ELLIPSIS.search(text):
        return None  # the format template or an unfinished colouring
    pairs = []
    for m in _COLOUR.finditer(text):
        v, c = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
        pairs.append((int(v) if len(v) <= MAX_DIGITS else -1, int(c) if len(c) <= MAX_DIGITS else -1))
    if not pairs:
        classes = list(_COLOUR_CLASS.finditer(text))
        for i, m in enumerate(classes):  # "c0: v0, v3; c1: v1, v2; c2: v4"
            stop = classes[i + 1].start() if i + 1 < len(classes) else len(text)
            colour = int(m.group(1)) if len(m.group(1)) <= MAX_DIGITS else -1
            pairs.extend((v, colour) for v in _ids(text[m.end():stop], _VERT))
    if not pairs:  # "v0 red, v1 green": colour names stand for c0, c1, ... in order of first use
        names: dict[str, int] = {}
        for m in _COLOUR_NAME.finditer(text):
            v = int(m.group(1)) if len(m.group(1)) <= MAX_DIGITS else -1
            pairs.append((v, names.setdefault(m.group(2).lower(), len(names))))
    if not pairs:
        return None
    colouring: dict[int, int] = {}
    for v, c in pairs:
        if colouring.setdefault(v, c) != c:
            return pairs
    return colouring


# ------------------------------------------------------------------------------------------------ plans
_EDGE = re.compile(r"(?<![A-Za-z0-9_])[eE]_?\{?(\d+)\}?(?![A-Za-z0-9_])")
_SYMBOLIC_EDGE = re.compile(r"(?<![A-Za-z0-9_])[eE]_?\{?[a-zA-Z]\}?(?![A-Za-z0-9_])")
_BRACKET_NEXT = re.compile(r"[ \t]*([\[{(])")
_NO_PLAN = re.compile(r"\bno[ \t]+(?:such[ \t]+|valid[ \t]+|strict[ \t]+|hamiltonian[ \t]+)*(?:hyper)?(?:cycle|path)\b|"
                      r"\bdoes[ \t]+not[ \t]+(?:exist|contain)\b|\bdo(?:es)?[ \t]+not[ \t]+have\b", re.IGNORECASE)


def parse_edge_sequence(response: object, marker: str, vertices: bool = False) -> list[int] | None:
    """``Cycle:[e0,e3,e2]`` / ``Path:[e0,e1]`` → hyperedge ids in order; ``[]`` when the response says none exists.

    With ``vertices`` the ids of the vertices named instead (``Path: v0 -> v3 -> v2``)."""
    names, symbolic = (_VERT, _SYMBOLIC_VERT) if vertices else (_EDGE, _SYMBOLIC_EDGE)
    found = answer_region(response)
    if found is None:
        return None
    region, anchored = found
    lower, marker = region.lower(), marker.lower()
    at = lower.find(marker) if anchored else lower.rfind(marker)
    if at < 0 and not anchored:  # "So the cycle is e0, e3, e2." concludes a response without "Ans:"
        marker = marker.rstrip(":")
        at = lower.rfind(marker)
        if at < 0:
            return None
    if at >= 0:
        region = region[at + len(marker):]
    bracket = _BRACKET_NEXT.match(region)
    if bracket:
        end = region.find(_CLOSE[bracket.group(1)], bracket.end())
        body = region[bracket.end():] if end < 0 else region[bracket.end():end]
        if end >= 0 and _OR_AFTER.match(region, end + 1):
            return None  # two plans
    else:
        body = _first_sentence(region)
    if _ELLIPSIS.search(body) or symbolic.search(body):
        return None  # the format template or an unfinished plan
    ids = _ids(body, names)
    if ids:
        return ids
    return [] if _NO_PLAN.search(region) else None
