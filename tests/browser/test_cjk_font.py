"""Chinese on any machine (issue 29): the page names a CJK font the server serves (Noto Sans CJK,
SIL OFL 1.1, from the ``noto-cjk-sans-otc`` dependency), after the local ones, for CJK characters
only; Chromium loads it and draws its own glyphs with it."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.browser


def test_the_page_has_a_served_cjk_font_that_chromium_draws(page, server: str) -> None:
    font = httpx.get(f"{server}/web/fonts/cjk.ttc")
    assert font.status_code == 200 and len(font.content) > 1_000_000
    assert "max-age" in font.headers["cache-control"]
    page.goto("/")
    found = page.evaluate("""async () => {
      const rules = [...document.styleSheets].flatMap((s) => [...s.cssRules]).filter((r) => r instanceof CSSFontFaceRule);
      const rule = rules.find((r) => r.style.getPropertyValue("font-family").includes("Companion CJK"));
      const face = new FontFace("ServedCJK", "url(/web/fonts/cjk.ttc)");
      await face.load();
      document.fonts.add(face);
      const ink = (font) => {
        const c = document.createElement("canvas"); c.width = c.height = 64;
        const x = c.getContext("2d"); x.font = font; x.fillText("莉娅", 2, 48); return c.toDataURL();
      };
      return { src: rule && rule.style.getPropertyValue("src"), range: rule && rule.style.getPropertyValue("unicode-range"),
               body: getComputedStyle(document.body).fontFamily, status: face.status,
               served: ink("48px ServedCJK"), fallback: ink("48px NoSuchFontAnywhere"), blank: (() => {
                 const c = document.createElement("canvas"); c.width = c.height = 64; return c.toDataURL(); })() };
    }""")
    assert found["src"] and "/web/fonts/cjk.ttc" in found["src"], found["src"]
    assert "U+4E00" in found["range"].upper()  # CJK characters only: Latin text never downloads it
    assert "Companion CJK" in found["body"]
    assert found["status"] == "loaded"
    assert found["served"] != found["blank"]  # it drew something
    assert found["served"] != found["fallback"]  # with its own glyphs, not the machine's fallback font
