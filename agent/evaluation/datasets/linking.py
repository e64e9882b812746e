"""Entity linking from a separate file (GrailQA, GraphQ, WebQSP ...): question id → ``{mention: entity id}``.

Example:
    >>> _fb_unescape("st$002e paul")
    'st. paul'
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent.errors import DatasetError
from agent.evaluation.datasets.reading import read_text

__all__ = ["load_linking"]

_MID = re.compile(r"^[mg]\.[0-9a-z_]+$")
_FB_KEY_ESCAPE = re.compile(r"\$([0-9A-Fa-f]{4})")


def _fb_unescape(text: str) -> str:
    """Undo Freebase key escapes in a mention (``st$002e paul`` → ``st. paul``)."""
    return _FB_KEY_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def _is_id(text: str) -> bool:
    return bool(_MID.match(text)) or "^^" in text


def _mention_links(entities: Mapping[str, Any], file: Path, qid: str) -> dict[str, str]:
    """GrailQA's later ``*_el.json`` entry: ``{mid: {"mention", "start", "end", "friendly_name"}}`` → ``{mention: mid}``.

    A mention linked to several mids keeps the first (as QueryAgent does with its lists).
    """
    links: dict[str, str] = {}
    for mid, info in entities.items():
        if not isinstance(info, Mapping) or not str(info.get("mention") or "").strip():
            raise DatasetError(f'{file}: {qid!r} → {mid!r} must be {{"mention", "start", "end", "friendly_name"}}, got {info!r:.60}')
        links.setdefault(_fb_unescape(str(info["mention"])).strip(), str(mid).strip())
    return links


def load_linking(path: str | Path) -> dict[str, dict[str, str]]:
    """Entity-linking results from a JSON file: question id → ``{mention: entity id}``.

    Four shapes are read (each question's entry decides): the Pangu/TIARA
    results QueryAgent uses for GrailQA and GraphQ (``grail_pangu_tiara.json``,
    ``graphq_test.json``: ``{qid: {mention: [id, ...]}}``, the first id is
    taken, as QueryAgent does), GrailQA's own linking results in their first
    form (``entity_linking/*_el.json``: ``{qid: {mid: mention}}``) and their
    current one (``entity_linking_results/*_el.json``: ``{qid: {"question",
    "entities": {mid: {"mention", "start", "end", "friendly_name"}}}}``, the
    mention as written in the question), and a plain ``{qid: {mention: id}}``. Ids may be mids or
    typed literals (``1000.0^^http://www.w3.org/2001/XMLSchema#float``).
    Mentions are stripped and Freebase key escapes (``$002e``) undone.

    Raises:
        DatasetError: unreadable file, or not a JSON object of objects.

    Example:
        >>> import json, os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "el.json")
        >>> _ = open(p, "w").write(json.dumps({"1": {"the medium": ["m.03hk0m", "m.0x"]}, "2": {"m.060nc": "st$002e paul"}}))
        >>> load_linking(p)
        {'1': {'the medium': 'm.03hk0m'}, '2': {'st. paul': 'm.060nc'}}
    """
    file = Path(str(path))
    text = read_text(file)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"the entity-linking file {file} is not JSON ({exc.msg}); expected {{qid: {{mention: [ids]}}}}") from None
    if not isinstance(data, Mapping):
        raise DatasetError(f"the entity-linking file {file} must be a JSON object {{qid: {{mention: [ids]}}}}, got a {type(data).__name__}")
    out: dict[str, dict[str, str]] = {}
    for qid, entry in data.items():
        if not isinstance(entry, Mapping):
            raise DatasetError(f"{file}: the entry of {qid!r} must be an object {{mention: [ids]}} or {{mid: mention}}, got {entry!r:.60}")
        links: dict[str, str] = {}
        if isinstance(entry.get("entities"), Mapping):
            out[str(qid)] = _mention_links(entry["entities"], file, str(qid))
            continue
        for key, value in entry.items():
            if isinstance(value, list):
                ids = [str(v) for v in value if str(v).strip()]
                if ids:
                    links[_fb_unescape(str(key)).strip()] = ids[0].strip()
            elif isinstance(value, str) and _is_id(str(key)) and not _is_id(value):
                links[_fb_unescape(value).strip()] = str(key).strip()
            elif isinstance(value, str):
                links[_fb_unescape(str(key)).strip()] = value.strip()
            else:
                raise DatasetError(f"{file}: {qid!r} → {key!r} must be a list of ids or one id/mention, got {value!r:.60}")
        out[str(qid)] = links
    return out
