from __future__ import annotations

from app.demo import main


def test_demo_without_a_model_explains_fallback_decisions(monkeypatch) -> None:
    for key in ("COMPANION_LLM_BASE_URL", "COMPANION_LLM_MODEL", "OPENAI_API_KEY", "COMPANION_LLM_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    lines: list[str] = []
    main(False, lines.append)
    text = "\n".join(lines)
    assert text.count("--- turn") == 5
    assert "needs a model" in text and "by fallback" in text
    assert "#1 莉娅" in text.split("--- turn 2")[0]  # the sad user gets the gentle listener
    assert "周衡 by mention" in text.split("--- turn 5")[1]


def test_demo_with_the_simulator_says_so(monkeypatch) -> None:
    lines: list[str] = []
    main(True, lines.append)
    text = "\n".join(lines)
    assert "SIMULATOR" in text and "simulated" in text
    assert text.count("--- turn") == 5 and "(by llm)" in text
