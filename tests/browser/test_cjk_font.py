"""Chinese on any machine (issue 29): the page names a CJK font the server serves (Noto Sans CJK,
SIL OFL 1.1, from the ``noto-cjk-sans-otc`` dependency), after the local ones, for CJK characters
only; Chromium loads it and draws its own glyphs with it."""

from __future__ import annotations

import os

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


def test_on_a_machine_without_a_chinese_font_the_page_draws_chinese_with_the_served_one(browser, server: str, backend: str,
                                                                                          tmp_path) -> None:  # fmt: skip
    """Chromium with a font configuration of DejaVu alone (no CJK font on the machine): the page's own
    font stack draws '莉娅' exactly as the served Noto Sans CJK does, not as empty boxes."""
    if backend != "sqlite":
        pytest.skip("the font does not depend on the database; once is enough")
    from tests.browser.conftest import CHROMIUM

    dejavu = "/usr/share/fonts/truetype/dejavu"
    if not os.path.isdir(dejavu):
        pytest.skip(f"needs {dejavu} (fonts-dejavu-core)")
    conf = tmp_path / "fonts.conf"
    conf.write_text(f'<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig><dir>{dejavu}</dir>'
                    f"<cachedir>{tmp_path / 'cache'}</cachedir></fontconfig>")  # fmt: skip
    if True:  # a second Chromium of the running Playwright, with its own font configuration
        chromium = browser.browser_type.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"],
                                      env={**os.environ, "FONTCONFIG_FILE": str(conf)})  # fmt: skip
        try:
            page = chromium.new_page(base_url=server)
            page.goto("/")
            found = page.evaluate("""async () => {
              const body = getComputedStyle(document.body).fontFamily;
              await document.fonts.load(`48px ${body}`, "莉娅");
              const served = new FontFace("ServedCJK", "url(/web/fonts/cjk.ttc)");
              await served.load();
              document.fonts.add(served);
              const ink = (font) => {
                const c = document.createElement("canvas"); c.width = 120; c.height = 64;
                const x = c.getContext("2d"); x.font = font; x.fillText("莉娅", 2, 48); return c.toDataURL();
              };
              return { page: ink(`48px ${body}`), served: ink("48px ServedCJK"), tofu: ink("48px 'DejaVu Sans'") };
            }""")
        finally:
            chromium.close()
    assert found["tofu"] != found["served"]  # this machine really has no Chinese glyphs of its own
    assert found["page"] == found["served"], "the page's font stack did not reach the served CJK font"
