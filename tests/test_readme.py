"""The README is true: its Python example runs, and it leads with the two commands CI and users rely on."""
import re
from pathlib import Path

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def test_readme_leads_with_the_two_commands():
    first_block = re.search(r"```bash\n(.*?)```", README, re.S).group(1)
    assert first_block.splitlines()[0].startswith("make run") and first_block.splitlines()[1].startswith("make test")
    assert "make test" in (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()


def test_readme_python_example_runs(capsys):
    code = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
    assert "gd" in capsys.readouterr().out
