"""A replay asked with other LLM settings than its recording's says which setting differs and what to run.

A replay miss is no service's fault: ``--resume`` alone cannot help. The
message names the setting (the recording keeps every LLM call's request:
model, mode, temperature, max_tokens, stop ...), the recorded value and the
flag that gives it back.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from agent.cli import eval_command
from agent.errors import LLMReplayMiss
from agent.llm.config import LLMConfig
from agent.llm.recording import RecordedLLM
from agent.llm.replies import LLMReply
from agent.llm.scripted import ScriptedLLM
from pyql.cli import build_parser, main
from pyql.recording_store import RecordingStore
from tests.test_eval import DEMO, GoldLLM, demo_items


def _record(tmp_path: Path, n: int) -> Path:
    """A recorded eval of the first ``n`` demo questions (temperature 0, the gold LLM in chat mode)."""
    rec = tmp_path / "rec"
    args = build_parser().parse_args(["eval", str(DEMO), "--limit", str(n), "--kb", "demo", "--out", str(tmp_path / "live.jsonl"),
                                      "--record", str(rec)])
    assert eval_command(args, io.StringIO(), llm=GoldLLM(demo_items(n), mode="chat"), progress=io.StringIO()) == 0
    return rec


def test_a_replay_at_another_temperature_names_the_setting_not_a_service(tmp_path: Path) -> None:
    rec = _record(tmp_path, 3)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(["eval", str(DEMO), "--limit", "3", "--kb", "demo", "--out", str(tmp_path / "replay.jsonl"),
                       "--replay", str(rec), "--base-url", "http://127.0.0.1:9/v1", "--model", "gold-replay",
                       "--llm-mode", "chat", "--temperature", "0.5"], out=io.StringIO())
    said = err.getvalue()
    assert status == 3, said
    assert "3 questions in a row failed to run" in said
    assert "fix the service" not in said
    assert "the recording's LLM calls were made with temperature 0.0, this run asks 0.5" in said
    assert "(--temperature 0.0)" in said and "record again" in said
    first = json.loads((tmp_path / "replay.jsonl").read_text().splitlines()[0])
    assert first["error"].startswith("replay_miss: the recording's LLM calls were made with temperature 0.0")


def test_a_miss_names_every_setting_that_differs_and_none_that_agrees(tmp_path: Path) -> None:
    live = ScriptedLLM([LLMReply("Action 1: execute()")], model="gpt-x")
    with RecordingStore.open(tmp_path, "record") as store:
        RecordedLLM(store, live, inner=live).complete("Q?", stop=["\nObs"])
    with RecordingStore.open(tmp_path, "replay") as store:
        asked = RecordedLLM(store, LLMConfig(model="gpt-y", max_tokens=64, temperature=0.0))
        with pytest.raises(LLMReplayMiss) as miss:
            asked.complete("Q?", stop=["\nObs"])
    said = str(miss.value)
    assert "model gpt-x and max_tokens 256, this run asks gpt-y and 64" in said
    assert "(--model gpt-x --max-tokens 256)" in said
    assert "temperature" not in said and "stop" not in said


def test_a_new_prompt_with_the_recorded_settings_is_still_a_plain_miss(tmp_path: Path) -> None:
    live = ScriptedLLM([LLMReply("Action 1: execute()")], model="gpt-x")
    with RecordingStore.open(tmp_path, "record") as store:
        RecordedLLM(store, live, inner=live).complete("Q?", stop=["\nObs"])
    with RecordingStore.open(tmp_path, "replay") as store:
        with pytest.raises(LLMReplayMiss, match="^the LLM call is not in the recording") as miss:
            RecordedLLM(store, ScriptedLLM([], model="gpt-x")).complete("Other?", stop=["\nObs"])
    assert "made with" not in str(miss.value)


def test_a_replay_without_llm_flags_asks_as_the_bundled_model_ran(monkeypatch: pytest.MonkeyPatch) -> None:
    """No LLM configured: the recorded run started the bundled model (completion mode, its name, its context), so the
    replay keys and builds its prompts with that configuration, not the unconfigured one (chat mode, no model)."""
    from agent.cli import _replayed_config
    from agent.llm.local import LOCAL_MODEL_NAME
    from pyql.cli import build_parser

    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYQL_MODEL"):
        monkeypatch.delenv(name, raising=False)
    bare = build_parser().parse_args(["eval", "q.jsonl", "--out", "r.jsonl", "--replay", "rec", "--max-tokens", "8"])
    config = _replayed_config(bare)
    assert (config.model, config.mode, config.context_tokens, config.max_tokens) == (LOCAL_MODEL_NAME, "completion", 4096, 8)
    given = build_parser().parse_args(["eval", "q.jsonl", "--out", "r.jsonl", "--replay", "rec",
                                       "--base-url", "http://127.0.0.1:9/v1", "--model", "gpt-x"])
    assert (_replayed_config(given).model, _replayed_config(given).mode) == ("gpt-x", "chat")
