"""Offline emotion heuristics: the seed's Chinese keyword rules plus English equivalents.

Used when the emotion model fails or is not configured, so the scorer still knows whether the
user needs comfort, advice or de-escalation. Keyword lists start from the seed's regexes
(``buildFallbackGroupUserEmotion``); the English lists cover the same feelings. The primary
emotion is the first that fires in ``_PRIORITY`` (needs that are urgent first: anger before
sadness before worry). Intensity starts at a base for the emotion and rises with cues.

The keyword rules stay the backbone. A small trained classifier (``classifier.py``, artifact
``lexicon.json``, trained by ``train_lexicon.py``) only fills in where they are silent or weak:

* no emotion keyword (neutral) and the classifier's top label is an emotion with probability ≥ the
  language's ``threshold`` → that label;
* exactly one emotion keyword, of a class the classifier knows, and the classifier prefers another
  emotion (not neutral) with probability ≥ ``override_threshold`` → that label (e.g. "为什么" in
  an angry line).

Both thresholds were chosen on a validation split; see ``train_lexicon`` for held-out figures.
A classifier label gets intensity ``0.2 + 0.3 × probability`` plus the same cue increments as a
keyword label, and the same needs (sad/lonely/anxious/stressed/angry → comfort, confused → advice,
angry → de-escalation) and social energy rules.
"""

from __future__ import annotations

import re
from typing import Final

from scheduling.emotion.classifier import EmotionClassifier, Prediction, default_classifier
from scheduling.emotion.model import PrimaryEmotion, SocialEnergy, UserEmotion
from scheduling.keywords import Cues

EMOTION_CUES: dict[str, Cues] = {
    "angry": Cues(
        "生气|愤怒|烦死|气死|吵架|不爽|火大|讨厌死|受够|滚",
        "angry|mad|furious|pissed(?: off)?|annoyed|hate|rage|fed up|sick of|so done|fight|fighting|argument",
    ),
    "lonely": Cues(
        "孤独|孤单|寂寞|没人陪|一个人|没人理",
        "lonely|alone|isolated|no one cares|nobody cares|no one to talk to|left out",
    ),
    "sad": Cues(
        "难过|伤心|委屈|想哭|失落|崩溃|没人懂|心碎|哭了",
        "sad|upset|heartbroken|depressed|crying|cried|hurt|miserable|devastated|feeling down|feel down|"
        "feel like crying|nobody understands|disappointed|broke down",
    ),
    "anxious": Cues(
        "焦虑|紧张|慌|害怕|担心|睡不着|不安",
        "anxious|anxiety|nervous|worried|worry|worrying|scared|afraid|panic(?:king)?|"
        "can'?t sleep|uneasy|freaking out",
    ),
    "stressed": Cues(
        "压力|好累|累死|撑不住|加班|忙死|喘不过气",
        "stress|stressed|pressure|overwhelmed|burn(?:ed|t) out|exhausted|deadline|swamped|too much",
    ),
    "confused": Cues(
        "怎么办|不知道|纠结|迷茫|怎么选|不懂|为什么",
        "what should i do|don'?t know|dunno|confused|torn|can'?t decide|cannot decide|which one|why|not sure",
    ),
    "romantic": Cues(
        "喜欢|想你|暧昧|心动|恋爱|约会|亲密|撒娇",
        "miss you|crush|in love|a date|dating|flirt(?:ing)?|romantic|kiss|cuddle|love you|like you",
    ),
    "playful": Cues(
        "哈哈|笑死|好玩|逗|开玩笑|hh|😂|🤣",
        "haha\\w*|hehe|lol|lmao|rofl|joke|joking|kidding|jk|funny|hilarious",
    ),
    "happy": Cues(
        "开心|高兴|快乐|惊喜|太好了|舒服了|棒|耶",
        "happy|glad|excited|great news|awesome|yay|amazing|delighted|so good",
    ),
}
_PRIORITY: tuple[PrimaryEmotion, ...] = (
    "angry", "lonely", "sad", "anxious", "stressed", "confused", "romantic", "playful", "happy",
)
COMFORT_CUES = Cues("陪陪|安慰|抱抱|难受", "comfort|hug|hold me|stay with me|need someone|keep me company|feel bad")
ADVICE_CUES = Cues(
    "建议|分析|复盘|怎么做|帮我想|选择|要不要|该不该|应不应该|怎么办|如何是好|出出主意|拿主意|出个主意|"
    "给点意见|有什么办法|怎么处理|怎么选",
    "advice|advise|suggest\\w*|analy[sz]e|plan|should i|should we|how do i|how should|what do i do|"
    "what would you do|what can i do|help me (?:think|decide|figure|choose)|any (?:tips|ideas|thoughts)|"
    "recommend\\w*|choose|decide|options|pros and cons",
)
DEESCALATION_CUES = Cues("冷静|别吵|缓一缓|降温", "calm down|stop fighting|chill|cool down|take a breath|relax")
INTENSIFIER_CUES = Cues(
    "好(?=[^的吗啊了呀吧])|太|非常|真的|超级|特别|极其|简直|完全",
    "so|really|very|extremely|totally|super|absolutely|completely|such",
)
LOW_ENERGY_CUES = Cues("唉|哎|算了|随便|嗯+$|累了", "sigh|meh|whatever|tired|nvm|never mind")
_REPETITION = re.compile(r"([^\s!！?？.。…])\1{2,}|(\b\w+\b)(?:\s+\2){2,}", re.IGNORECASE)
_EXCLAIM = re.compile(r"[!！]")
_SHOUT = re.compile(r"\b[A-Z]{3,}\b")

_BASE_INTENSITY = 0.45
_NEUTRAL_INTENSITY = 0.15
_LOW_ENERGY: frozenset[str] = frozenset({"sad", "lonely", "anxious", "stressed"})
_HIGH_ENERGY: frozenset[str] = frozenset({"playful", "happy", "romantic"})


def _intensity(text: str, primary: str, emotion_hits: int, base: float | None = None) -> tuple[float, list[str]]:
    """Base 0.45 for a detected emotion (0.15 neutral; ``base`` when the classifier chose the label),
    plus: exclamation marks 0.1 each (≤ 0.3), intensifiers 0.1 each (≤ 0.3), repetition ("啊啊啊",
    "sooo", "no no no") 0.15, shouting in capitals 0.1, each extra emotion keyword 0.05 (≤ 0.15).
    Neutral text is capped at 0.4."""
    cues: list[str] = []
    exclaims = len(_EXCLAIM.findall(text))
    intensifiers = INTENSIFIER_CUES.hits(text)
    if base is not None:
        value = base
    else:
        value = _BASE_INTENSITY if primary != "neutral" else _NEUTRAL_INTENSITY
    value += min(0.3, 0.1 * exclaims)
    value += min(0.3, 0.1 * len(intensifiers))
    if _REPETITION.search(text):
        value += 0.15
        cues.append("repetition")
    if _SHOUT.search(text):
        value += 0.1
        cues.append("capitals")
    value += min(0.15, 0.05 * max(0, emotion_hits - 1))
    if exclaims:
        cues.append(f"{exclaims} exclamation mark(s)")
    if intensifiers:
        cues.append("intensifiers " + "/".join(dict.fromkeys(intensifiers)))
    if primary == "neutral":
        value = min(value, 0.4)
    return round(min(1.0, value), 3), cues


def _social_energy(text: str, primary: str, exclaims: int) -> SocialEnergy:
    """Low when the user sounds drained (sad, lonely, worried, sighing); high when playful,
    happy or excited; medium otherwise (including anger: heated, not sociable)."""
    stripped = text.strip()
    if primary in _LOW_ENERGY or LOW_ENERGY_CUES.search(stripped) or re.fullmatch(r"[.。…\s]*", stripped):
        return "low"
    if primary in _HIGH_ENERGY or (primary == "neutral" and exclaims >= 2):
        return "high"
    return "medium"


_COMFORT_EMOTIONS: frozenset[str] = frozenset({"sad", "lonely", "anxious", "stressed", "angry"})
_DEFAULT: Final = object()


def _classifier_label(
    found: dict[str, list[str]], fired: list[str], classifier: EmotionClassifier | None, text: str,
) -> Prediction | None:
    """The classifier's label when the keyword rules are silent or weak and it is confident enough
    (see the module docstring), else None."""
    if classifier is None:
        return None
    hits = sum(len(v) for v in found.values())
    if hits > 1:
        return None
    prediction = classifier.predict(text)
    if prediction is None or prediction.label == "neutral":
        return None
    model = classifier.model(prediction.language)
    if model is None:
        return None
    if not fired:
        return prediction if prediction.probability >= model.threshold else None
    if fired[0] in model.labels and prediction.label != fired[0] and prediction.probability >= model.override_threshold:
        return prediction
    return None


def heuristic_emotion(text: str) -> UserEmotion:
    """The keyword rules alone (the seed's heuristics), without the trained classifier."""
    return fallback_emotion(text, classifier=None)


def fallback_emotion(text: str, classifier: EmotionClassifier | None | object = _DEFAULT) -> UserEmotion:
    """Best-effort ``UserEmotion`` from the text alone, deterministic and offline.

    ``classifier`` defaults to the shipped one (``default_classifier()``); ``None`` means keyword
    rules only."""
    model = default_classifier() if classifier is _DEFAULT else classifier
    if model is not None and not isinstance(model, EmotionClassifier):
        raise TypeError(f"classifier must be an EmotionClassifier or None, not {type(model).__name__}")
    found = {name: cues.hits(text) for name, cues in EMOTION_CUES.items()}
    fired = [name for name in _PRIORITY if found[name]]
    primary: PrimaryEmotion = fired[0] if fired else "neutral"
    hits = sum(len(v) for v in found.values())
    learned = _classifier_label(found, fired, model, text)
    overridden = primary if learned is not None and fired else None
    if learned is not None:
        primary = learned.label  # type: ignore[assignment]
        fired = [primary]
        intensity, cues = _intensity(text, primary, 1, base=0.2 + 0.3 * learned.probability)
    else:
        intensity, cues = _intensity(text, primary, hits)
    comfort = COMFORT_CUES.hits(text)
    advice = ADVICE_CUES.hits(text)
    calm = DEESCALATION_CUES.hits(text)
    needs_comfort = bool(set(fired) & _COMFORT_EMOTIONS) or bool(comfort)
    needs_advice = "confused" in fired or bool(advice)
    needs_deescalation = "angry" in fired or bool(calm)
    if learned is not None:
        keywords = comfort + advice + calm
        reason = f"offline classifier: {primary} (p={learned.probability:.2f}, {learned.language} model)"
        if overridden:
            reason += f"; over weak keyword label {overridden}"
    else:
        keywords = [k for name in fired for k in found[name]] + comfort + advice + calm
        reason = f"offline heuristics: {primary}"
    if keywords:
        reason += "; keywords " + ", ".join(dict.fromkeys(keywords))
    if cues:
        reason += "; " + "; ".join(cues)
    return UserEmotion(
        primary_emotion=primary,
        intensity=intensity,
        needs_comfort=needs_comfort,
        needs_advice=needs_advice,
        needs_deescalation=needs_deescalation,
        social_energy=_social_energy(text, primary, len(_EXCLAIM.findall(text))),
        reason=reason[:400],
    )
