"""The text pyql writes for the 1,639 WebQSP programs does not change.

For every WebQSP test program (legacy PyQL, replayed step by step), the
digest of every text built from it: after every step the query's SPARQL,
its action lines and its observation query; for the last query the other
probes of a KB (observation queries with other caps, the rows queries, the
relations of every variable and entity, the relation ASKs, the value kinds
and the labels queries) and every error message. ``tests/data/webqsp_text_digests.json``
holds the digests written by the code before the compile-speed work of
issue 20; a change of any text fails here, naming the items.

To accept an intended change of text, regenerate the fixture with
``PYTHONPATH=. python tests/test_compiled_texts.py`` and say why in the commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Callable

from pyql.action_parser import parse_legacy_program
from pyql.errors import PyQLError
from pyql.kb import probes
from pyql.builder.query import Query
from pyql.environment.sparql_actions import SparqlActions, convert_argument
from pyql.builder.steps import Fact
from pyql.builder.terms import IRI, Variable
from tests.shared_data import needs_shared, shared_path

FIXTURE = Path(__file__).parent / "data" / "webqsp_text_digests.json"
_ACTIONS = SparqlActions()


def _text(build: Callable[..., object], *args: object) -> str:
    """What a builder gives (text, or text and variables), or its error."""
    try:
        out = build(*args)
    except PyQLError as exc:
        return f"ERR {type(exc).__name__}: {exc}"
    if isinstance(out, tuple):
        return out[0] + "|" + " ".join(str(v) for v in out[1])
    return str(out)


def _probe_texts(q: Query) -> list[str]:
    """Every probe of a KB built for the last query of a program."""
    out = [
        _text(probes.observation_query, q, 3, 50),
        _text(probes.observation_query, q, 1, 10, 5000),
        _text(probes.rows_query, q, 1001),
        _text(probes.bounded_rows_query, q),
    ]
    for v in q.variables:
        out.append(_text(probes.relations_query, v, q, q.profile))
        out.append(_text(probes.relations_query, v, q, q.profile, 100, 10, 50))
    facts = [s for s in q.steps if isinstance(s, Fact)]
    for s in facts[:2]:
        if isinstance(s.relation, IRI):
            out.append(_text(probes.value_kinds_query, s.relation, q.profile, 20))
            target = q.variables[0] if q.variables else s.head
            out.append(_text(probes.relation_ask_query, target, s.relation, None, q, q.profile))
            out.append(_text(probes.relation_ask_query, s.head, s.relation, "forward", q, q.profile))
        if not isinstance(s.head, Variable):
            out.append(_text(probes.relations_query, s.head, None, q.profile))
    out.append(_text(probes.labels_query, [t for s in facts for t in (s.head, s.tail)], q.profile))
    return out


def program_texts(program: str) -> list[str]:
    """The texts of one legacy program: per step SPARQL, actions and observation; then the probes."""
    q = Query("freebase")
    out = []
    for call in parse_legacy_program(program):
        spec = _ACTIONS.check_arity(call.name, len(call.args))
        if spec.kind != "construct":
            continue
        try:
            args = [
                convert_argument(q.profile, p.kind, a, call.name, p.name, i)
                for i, (p, a) in enumerate(zip(spec.params, call.args))
            ]
            q = getattr(q, call.name)(*args)
        except PyQLError as exc:
            out.append(f"ERR {type(exc).__name__}: {exc}")
            continue
        out += [q.sparql(), "\n".join(q.actions()), _text(probes.observation_query, q)]
    return out + _probe_texts(q)


def digests(items: list[dict]) -> dict[str, object]:
    """Per item (qid) a short digest of its texts, and the digest of all of them."""
    per: dict[str, str] = {}
    total = hashlib.sha256()
    for item in items:
        if not item.get("PyQL"):
            continue
        text = "\n\x00\n".join(program_texts(item["PyQL"])).encode()
        per[item["qid"]] = hashlib.sha256(text).hexdigest()[:16]
        total.update(text)
    return {"items": per, "total": total.hexdigest()}


@needs_shared("webqsp")
def test_every_webqsp_text_is_unchanged() -> None:
    items = json.loads(shared_path("webqsp").read_text(encoding="utf-8"))
    expected = json.loads(FIXTURE.read_text(encoding="utf-8"))
    got = digests(items)
    assert len(got["items"]) == len(expected["items"]) == 1639
    changed = sorted(k for k, v in got["items"].items() if expected["items"].get(k) != v)
    assert changed == [], f"{len(changed)} programs compile to other text, e.g. {changed[:5]}"
    assert got["total"] == expected["total"]


if __name__ == "__main__":  # regenerate the fixture
    data = json.loads(shared_path("webqsp").read_text(encoding="utf-8"))
    FIXTURE.write_text(json.dumps(digests(data), indent=0, sort_keys=True), encoding="utf-8")
    print(f"wrote {FIXTURE}", file=sys.stderr)
