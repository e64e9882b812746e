"""Guideline rendering: jinja2 templates in ``correction/templates``.

Every rule's wording is a template ``<rule id>.j2``, kept apart from its
trigger. Templates are rendered with ``StrictUndefined`` (a missing context
variable is an error, never an empty string), and the text is folded into
one paragraph. Two helpers are available in every template:

* the ``choices`` filter writes a list capped at ``max_choices`` items
  (``a, b, c and 7 more``), so a guideline never floods the prompt;
* ``{% include "_regenerate.j2" %}`` ends a guideline with the paper's
  instruction, "Please re-generate only Thought N and Action N.", where N
  is the step number the LLM writes next.

Example:
    >>> r = Renderer(max_choices=2)
    >>> r.render_string("Choose from: {{ xs | choices }}.", xs=["?a", "?b", "?c"])
    'Choose from: ?a, ?b and 1 more.'
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import jinja2

from correction.errors import TemplateError  # noqa: F401 (defined in correction/errors.py)

__all__ = ["TEMPLATE_DIR", "Renderer", "renderer", "TemplateError", "choices"]

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"


def choices(items: Iterable[Any], limit: int = 10, empty: str = "none") -> str:
    """Join items with commas, at most ``limit`` of them, saying how many were left out.

    Example:
        >>> choices(["a", "b", "c"], 2), choices([], 2)
        ('a, b and 1 more', 'none')
    """
    listed = [str(i) for i in items]
    if not listed:
        return empty
    if len(listed) <= limit:
        return ", ".join(listed)
    return f"{', '.join(listed[:limit])} and {len(listed) - limit} more"


class Renderer:
    """Renders the guideline templates with a given cap on listed choices.

    Args:
        max_choices: most items a ``choices`` list shows.
        directory: where the templates are (default: the package's ``templates``).
    """

    def __init__(self, max_choices: int = 10, directory: Path | None = None) -> None:
        self.max_choices = max_choices
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(directory or TEMPLATE_DIR)),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            lstrip_blocks=True,
            keep_trailing_newline=False,
        )
        self.env.filters["choices"] = lambda items, limit=None, empty="none": choices(
            items, limit or self.max_choices, empty
        )

    def render(self, template: str, **context: Any) -> str:
        """Render a template file into a one-paragraph guideline.

        Raises:
            TemplateError: the template is missing or uses a variable not in ``context``.

        Example:
            >>> renderer().render("repeated_action.j2", text="add_max(?t)", earlier=3, next_step=5)
            'add_max(?t) repeats step 3, which was already accepted; running it again changes nothing. Go on with the next step. Please re-generate only Thought 5 and Action 5.'
        """
        try:
            text = self.env.get_template(template).render(**context)
        except jinja2.TemplateNotFound as exc:
            raise TemplateError(f"no guideline template {exc.name!r} in {TEMPLATE_DIR}") from None
        except jinja2.UndefinedError as exc:
            raise TemplateError(f"guideline template {template!r}: {exc.message}") from None
        return " ".join(text.split())

    def render_string(self, source: str, **context: Any) -> str:
        """Render template text (for tests and experiments).

        Example:
            >>> renderer().render_string("{% include '_regenerate.j2' %}", next_step=4)
            'Please re-generate only Thought 4 and Action 4.'
        """
        try:
            return " ".join(self.env.from_string(source).render(**context).split())
        except jinja2.UndefinedError as exc:
            raise TemplateError(f"guideline template: {exc.message}") from None

    def templates(self) -> list[str]:
        """The rule templates available (helpers starting with ``_`` left out).

        Example:
            >>> "unlinked_entity.j2" in renderer().templates()
            True
        """
        return sorted(name for name in self.env.list_templates(extensions=["j2"]) if not name.startswith("_"))


@lru_cache(maxsize=8)
def renderer(max_choices: int = 10) -> Renderer:
    """A shared :class:`Renderer` per cap (templates are compiled once).

    Example:
        >>> renderer(10) is renderer(10)
        True
    """
    return Renderer(max_choices)
