"""The lark grammars of pyql, shipped as package data next to this module.

``action.lark`` describes one action as an LLM writes it
(``add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)``),
``legacy_pyql.lark`` the legacy PyQL programs of the datasets
(``a=PyQL()`` / ``a.add_fact('m.03_r3', 'location.country.languages_spoken', 'x0')``).
The Python API on top of them is :mod:`pyql.action_parser`.

Example:
    >>> from grammars import lark_parser
    >>> p = lark_parser("action", parser="lalr", start=["start", "argument"])
    >>> p.parse("execute()", start="start").data
    Token('RULE', 'start')
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import lark

from grammars.vocabulary import operator_pattern

__all__ = ["grammar_path", "load_grammar", "lark_parser", "available_grammars"]

_DIR = Path(__file__).resolve().parent
_CACHE: dict[tuple[str, tuple[tuple[str, Any], ...]], lark.Lark] = {}
_LOCK = threading.Lock()
#: Placeholders a grammar file may use, and the text from the vocabulary they stand for.
_GENERATED = {"OPERATORS": operator_pattern()}


def available_grammars() -> list[str]:
    """Names of the grammars shipped with this package.

    Returns:
        The sorted file stems of the ``*.lark`` files.

    Example:
        >>> "action" in available_grammars() and "legacy_pyql" in available_grammars()
        True
    """
    return sorted(p.stem for p in _DIR.glob("*.lark"))


def grammar_path(name: str) -> Path:
    """Path of the grammar file called ``name`` (with or without ``.lark``).

    Args:
        name: grammar name such as ``"action"`` or ``"legacy_pyql.lark"``.

    Returns:
        The absolute path of the ``.lark`` file.

    Raises:
        FileNotFoundError: no such grammar (the message lists the known ones).

    Example:
        >>> grammar_path("action").name
        'action.lark'
    """
    stem = name[:-5] if name.endswith(".lark") else name
    if not stem or "/" in stem or "\\" in stem or stem.startswith("."):
        raise FileNotFoundError(f"bad grammar name {name!r}; known: {available_grammars()}")
    path = _DIR / f"{stem}.lark"
    if not path.is_file():
        raise FileNotFoundError(f"no grammar {name!r} in {_DIR}; known: {available_grammars()}")
    return path


def load_grammar(name: str) -> str:
    """Text of the grammar called ``name``, with the vocabulary filled in.

    A grammar names the shared vocabulary with placeholders (``{{OPERATORS}}``:
    the operator spellings of :mod:`grammars.vocabulary`), so the grammar and
    the Python code read one definition.

    Args:
        name: grammar name such as ``"action"``.

    Returns:
        The grammar source (UTF-8).

    Example:
        >>> "action: NAME LPAR" in load_grammar("action")
        True
    """
    text = grammar_path(name).read_text(encoding="utf-8")
    for placeholder, value in _GENERATED.items():
        text = text.replace("{{" + placeholder + "}}", value)
    return text


def _freeze(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, set):
        return tuple(sorted(value))
    return value


def lark_parser(name: str, **kw: Any) -> lark.Lark:
    """A :class:`lark.Lark` parser for grammar ``name``, built once and cached.

    Args:
        name: grammar name such as ``"action"``.
        **kw: options passed to :class:`lark.Lark` (``parser``, ``start`` ...).
            Parsers with equal options are shared, so do not mutate them.

    Returns:
        The parser.

    Example:
        >>> p = lark_parser("legacy_pyql", parser="lalr")
        >>> p is lark_parser("legacy_pyql", parser="lalr")
        True
        >>> p.parse("a=PyQL()\\na.add_max('x2')\\n").children[0].data
        Token('RULE', 'program')
    """
    key = (name, _freeze(kw))
    parser = _CACHE.get(key)
    if parser is None:
        with _LOCK:
            parser = _CACHE.get(key)
            if parser is None:
                parser = lark.Lark(load_grammar(name), **kw)
                _CACHE[key] = parser
    return parser
