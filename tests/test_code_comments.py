"""Code comments and strings say why, not when: none cites a work round or an issue number.

"round 5" or "issue 12" means nothing to a reader of the code; the reason itself (the measurement in one line, or
the docs section that holds it) does. Every comment and every string literal (docstrings, help texts) of the
Python files under solvers/, app/ and tests/ is read with tokenize. GitHub-style "#12" is not searched for: the
code writes colours as "#222".
"""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CITATION = re.compile(r"\b(?:[Rr]ounds?[ -]|[Ii]ssues? #?)[0-9]")


def citations(source: str) -> list[tuple[int, str]]:
    """(line, text) of each comment or string token that cites a round or an issue number."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.COMMENT, tokenize.STRING) or token.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            if CITATION.search(token.string):
                found.append((token.start[0], token.string.strip().splitlines()[0][:100]))
    return found


def test_no_comment_or_string_cites_a_round_or_an_issue():
    found = [f"{path.relative_to(ROOT)}:{line}: {text}"
             for folder in ("solvers", "app", "tests") for path in sorted((ROOT / folder).rglob("*.py"))
             if path != Path(__file__).resolve() for line, text in citations(path.read_text())]
    assert not found, "cite the reason (a measurement, a docs section), not a round or an issue:\n" + "\n".join(found)


def test_the_search_finds_citations_in_comments_docstrings_and_help_texts():
    source = ('"""Fixed in ' + 'round 6."""\nx = 1  # see ' + 'issue 12\n'
              'help = "as ' + 'rounds 4–9 did"\ncolour = "#222"  # ' + 'rounding to 3 digits, around 5 steps\n')
    assert [line for line, _ in citations(source)] == [1, 2, 3]
