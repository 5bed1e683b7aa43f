"""docs/python.md is true: each of its Python blocks runs as written (a fresh namespace per block)."""
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "python.md"
TEXT = PAGE.read_text()


def blocks() -> list[tuple[str, str]]:
    """(section heading, code) for every ```python block of the page."""
    found = []
    for section in re.split(r"^## ", TEXT, flags=re.M)[1:]:
        title = section.splitlines()[0].split(":")[0].strip()
        found += [(title, code) for code in re.findall(r"```python\n(.*?)```", section, re.S)]
    return found


def test_every_family_has_an_example():
    assert list(dict.fromkeys(title for title, _ in blocks())) == ["sparse", "multitask", "smm", "metric", "npsvc"]


@pytest.mark.slow
@pytest.mark.parametrize("code", [code for _, code in blocks()], ids=[f"{title}-{i}" for i, (title, _) in enumerate(blocks())])
def test_example_runs(code, capsys):
    exec(compile(code, str(PAGE), "exec"), {"__name__": "docs_python"})
    assert capsys.readouterr().out  # every example prints what it found
