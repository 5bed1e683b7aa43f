"""A page body that raises something unexpected shows what to change, not the exception's class name."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page_that_fails() -> None:
    from app.ui.layout import run_page

    def body() -> None:
        raise ZeroDivisionError("float division by zero")

    run_page(body)


def test_an_unexpected_failure_says_what_to_change_not_the_exception_name():
    at = AppTest.from_function(_page_that_fails, default_timeout=60).run()
    assert not at.exception
    [message] = [e.value for e in at.error]
    assert "ZeroDivisionError" not in message
    assert "Change the last setting you moved" in message
    assert "float division by zero" in message  # the detail is kept for a report
