"""A CJK font for the report's charts, on any machine: agent names and emotions are often Chinese,
and matplotlib's own DejaVu Sans draws them as empty boxes.

Where the font comes from, first found wins:

1. ``COMPANION_CJK_FONT``: a font file (``.ttf``/``.otf``/``.ttc``) given by the operator;
2. the ``noto-cjk-sans-otc`` package, a dependency: Google's Noto Sans CJK (Regular, all five
   regions in one collection) under the SIL Open Font License 1.1, which allows bundling and
   redistribution;
3. a system CJK font at the usual Debian/Ubuntu paths (``fonts-noto-cjk``, ``fonts-wqy-microhei``:
   Apache-2.0/GPL-3 with the font exception).

Latin text keeps DejaVu Sans; matplotlib falls back glyph by glyph to the CJK family.
"""

from __future__ import annotations

import logging
import os
from functools import cache
from pathlib import Path

from matplotlib import font_manager, rcParams

log = logging.getLogger(__name__)

SYSTEM_FONTS = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
)
# In a collection the Simplified Chinese face is picked (its glyph shapes are the product's).
PREFERRED = ("Noto Sans CJK SC", "WenQuanYi Micro Hei", "WenQuanYi Zen Hei")


def font_files() -> list[Path]:
    """The candidate files, in order of preference, that exist on this machine."""
    found: list[Path] = []
    if given := os.environ.get("COMPANION_CJK_FONT"):
        found.append(Path(given))
    try:
        from noto_cjk_sans_otc import FONT_PATH

        found.append(Path(str(FONT_PATH)))
    except ImportError:  # pragma: no cover - a dependency; a trimmed install falls back to the system
        pass
    found.extend(Path(p) for p in SYSTEM_FONTS)
    return [p for p in found if p.is_file()]


@cache
def use_cjk_font() -> str | None:
    """Register the first CJK font found and put it behind DejaVu Sans in ``font.family``;
    returns its family name (None, logged, when the machine has none)."""
    for path in font_files():
        before = {f.name for f in font_manager.fontManager.ttflist}
        try:
            font_manager.fontManager.addfont(str(path))
        except (OSError, RuntimeError, ValueError):
            log.warning("cannot load the CJK font %s", path, exc_info=True)
            continue
        names = [f.name for f in font_manager.fontManager.ttflist if f.fname == str(path)] or \
            sorted({f.name for f in font_manager.fontManager.ttflist} - before)  # fmt: skip
        family = next((n for n in PREFERRED if n in names), names[0] if names else None)
        if family is None:
            continue
        # A list of families, not the generic "sans-serif": matplotlib's glyph fallback walks this list.
        rcParams["font.family"] = ["DejaVu Sans", family]
        return family
    log.warning("no CJK font found: Chinese names in the report's charts will be empty boxes "
                "(pip install noto-cjk-sans-otc, or set COMPANION_CJK_FONT)")  # fmt: skip
    return None
