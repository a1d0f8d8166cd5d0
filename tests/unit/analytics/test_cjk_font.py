"""The report's charts draw Chinese names (issue 29): a CJK font is found on any machine (the
``noto-cjk-sans-otc`` dependency, SIL OFL 1.1) and matplotlib falls back to it glyph by glyph."""

from __future__ import annotations

import io
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from analytics import fonts  # noqa: E402
from analytics.queries.speaking import SpeakingShareRow  # noqa: E402
from analytics.report_charts import speaking_share  # noqa: E402


def test_the_bundled_noto_font_is_found_first() -> None:
    files = fonts.font_files()
    assert files and "noto_cjk_sans_otc" in str(files[0]), files


def test_a_chart_of_chinese_agent_names_has_no_missing_glyphs() -> None:
    assert fonts.use_cjk_font() == "Noto Sans CJK SC"
    rows = [SpeakingShareRow(agent_id=f"a{i}", agent_name=name, candidate_turns=4, selected=2, selection_rate=0.5, share=0.5)
            for i, name in enumerate(["莉娅", "周衡 Heng"])]  # fmt: skip
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fig = speaking_share({"speaking-share": rows})
        fig.savefig(io.BytesIO(), format="png")
        plt.close(fig)
    missing = [str(w.message) for w in seen if "missing from font" in str(w.message)]
    assert not missing, missing


def test_an_operator_font_comes_first(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    font = tmp_path / "mine.ttf"
    font.write_bytes(b"not really a font")
    monkeypatch.setenv("COMPANION_CJK_FONT", str(font))
    assert fonts.font_files()[0] == font
