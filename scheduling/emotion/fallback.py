"""Offline emotion heuristics: the seed's Chinese keyword rules plus English equivalents.

Used when the emotion model fails or is not configured, so the scorer still knows whether the
user needs comfort, advice or de-escalation. Keyword lists start from the seed's regexes
(``buildFallbackGroupUserEmotion``); the English lists cover the same feelings. The primary
emotion is the first that fires in ``_PRIORITY`` (needs that are urgent first: anger before
sadness before worry). The Chinese side of each list also holds the emoji and Weibo tags
(``[怒]``, ``[泪]``, ``[哈哈]``) that say the same, so an emoji-only message is read deliberately:
as the keyword rules map it, and as a feature of the classifier (``kw:<label>``). Intensity
starts at a base for the emotion and rises with cues.

A trained classifier (``classifier.py``, artifact ``lexicon.json``, trained by
``train_lexicon.py`` on Weibo posts, short posts, TV dialogue, first-person statements and Reddit
comments) decides the emotion's *class* (angry / anxious / happy / neutral / sad); the keyword
rules refine it and stand on their own where they are explicit:

* the keyword labels that fired are features of the classifier (``kw:<label>``), so it weighs
  them against everything else in the text;
* ``keyword_hits`` or more keyword hits (explicit text such as "一个人好孤单，好寂寞") → the rules'
  label stands as it is;
* two or more hits of a label the classifier does not have (lonely, stressed, confused, romantic,
  playful) → that label stands ("项目压力太大了，撑不住" is stressed);
* a confused keyword in a request for advice ("我该怎么办，帮我分析一下") → confused, unless the
  classifier hears anger;
* a short line (under 20 characters) with no keyword, where the classifier's class (not neutral)
  is below the language's ``floor`` → neutral: short chat lines ("早上好", "今天吃了面条") are
  rarer in the training sources than in a chat, and a weak guess there must not send the user to
  the comforter; a short line with a keyword that the classifier calls neutral → the keyword's
  label ("好焦虑": the emotion word is most of the evidence);
* a keyword label of another emotional class whose probability is within the language's
  ``keyword_margin`` of the classifier's class → the keyword's label: a near tie is settled by the
  feeling the text names ("最近总担心会被裁员": angry and anxious tie, 担心 says anxious);
* otherwise the classifier's class, refined to the first fired keyword label of that class's
  family (sad → lonely, anxious → stressed, happy → playful / romantic, neutral → confused;
  ``classifier.FAMILY``).

Comfort is its own decision: needed when the label is sad, lonely, anxious, stressed or angry,
when the classifier's class is neutral but its probability of sad + angry + anxious reaches the
language's ``comfort_threshold`` (the text sounds upset although no emotion won; a happy class is
left alone, so a happy user is not handed to the comforter; a weak guess held back by the floor
is left alone too: counting it as upset lifted CPED's comfort-need F1 on validation, 0.56 → 0.62,
but sent plain short lines such as "今天吃了面条" to the comforter), or when the user asks
for it ("陪陪我", "I need a hug"), unless the text declines it ("不用安慰我", "don't worry
about me": ``NO_COMFORT_CUES``). A line under four characters ("你好", "在") never sounds upset
without an emotion word. ``keyword_hits`` and ``comfort_threshold`` were chosen on the
validation splits; see ``train_lexicon`` for the held-out figures per source.

Who answers first also reads the classifier's leaning when its class is neutral
(``neutral_leanings``): a text whose probability of angry reaches the language's
``heated_threshold`` needs de-escalation (the calm, bounded agent answers first), and one whose
probability of happy reaches ``upbeat_threshold`` (and that is neither upset nor heated) has high
social energy (a playful agent may answer first). The primary emotion stays neutral: the class
did not win, but routing is a choice among agents, not among emotions, and a neutral answer
otherwise goes to whoever is first in display order. Both thresholds are chosen on the
validation splits for the routing balanced accuracy, with the same plain-line guard.

A classifier label gets intensity ``0.2 + 0.3 × probability`` plus the same cue increments as a
keyword label, and the same needs (sad/lonely/anxious/stressed/angry → comfort, confused → advice,
angry → de-escalation) and social energy rules. Without the artifact the keyword rules alone answer.
"""

from __future__ import annotations

import re
from typing import Final

from scheduling.emotion.classifier import (
    FAMILY, MAX_CHARS, EmotionClassifier, LanguageModel, Prediction, default_classifier,
)
from scheduling.emotion.model import PrimaryEmotion, SocialEnergy, UserEmotion
from scheduling.keywords import Cues

EMOTION_CUES: dict[str, Cues] = {
    "angry": Cues(
        "生气|愤怒|烦死|气死|吵架|不爽|火大|讨厌死|受够|滚|😡|🤬|😠|💢|\\[怒\\]|\\[抓狂\\]",
        "angry|mad|furious|pissed(?: off)?|annoyed|hate|rage|fed up|sick of|so done|fight|fighting|argument",
    ),
    "lonely": Cues(
        "孤独|孤单|寂寞|没人陪|一个人|没人理",
        "lonely|alone|isolated|no one cares|nobody cares|no one to talk to|left out",
    ),
    "sad": Cues(
        "难过|伤心|委屈|想哭|失落|崩溃|没人懂|心碎|哭了|去世|过世|离世|葬礼|😭|😢|😞|💔|🥺|\\[泪\\]|\\[悲伤\\]",
        "sad|upset|heartbroken|depressed|crying|cried|hurt|miserable|devastated|feeling down|feel down|"
        "feel like crying|nobody understands|disappointed|broke down|died|passed away|funeral|grie(?:f|ving)",
    ),
    "anxious": Cues(
        "焦虑|紧张|慌|害怕|担心|睡不着|不安|😰|😨|😱|😟|\\[害怕\\]",
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
        "哈哈|笑死|好玩|逗|开玩笑|hh|😂|🤣|😆|😜|\\[哈哈\\]|\\[嘻嘻\\]",
        "haha\\w*|hehe|lol|lmao|rofl|joke|joking|kidding|jk|funny|hilarious",
    ),
    "happy": Cues(
        "开心|高兴|快乐|惊喜|太好了|舒服了|棒|耶|😊|😄|😁|😃|🥰|😍|🎉|❤|\\[开心\\]|\\[爱你\\]|\\[心\\]",
        "happy|glad|excited|great news|awesome|yay|amazing|delighted|so good",
    ),
}
_PRIORITY: tuple[PrimaryEmotion, ...] = (
    "angry", "lonely", "sad", "anxious", "stressed", "confused", "romantic", "playful", "happy",
)
COMFORT_CUES = Cues("陪陪|安慰|抱抱|难受", "comfort|hug|hold me|stay with me|need someone|keep me company|feel bad")
# The text says it needs no comfort ("needs comfort unless the text says otherwise"). Narrow on
# purpose: "我没事" or "I'm fine" is as often said by someone who is not.
NO_COMFORT_CUES = Cues(
    "不用安慰|不需要安慰|别安慰我|不用担心我|不需要人陪|不用陪我",
    "(?:don'?t|do not) need (?:comfort|a hug|sympathy|cheering up)|no need to (?:comfort|worry about) me|"
    "don'?t worry about me|(?:don'?t|do not) want (?:comfort|sympathy|pity)",
)
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


def needs_of_emotion(primary: str) -> tuple[bool, bool, bool]:
    """The seed's needs for a primary emotion alone: (comfort, advice, de-escalation)."""
    return primary in _COMFORT_EMOTIONS, primary == "confused", primary == "angry"


_DEFAULT: Final = object()
_SHORT_CHARS = 20  # a chat line; a longer text carries enough evidence for the classifier alone
_UPSET_MIN_CHARS = 4  # "你好", "在", "ok": too short to sound upset without an emotion word


def keyword_features(fired: list[str]) -> list[str]:
    """The classifier features for the keyword labels that fired (shared with the trainer)."""
    return [f"kw:{name}" for name in fired]


def keyword_hits(text: str) -> dict[str, list[str]]:
    """Every emotion's keyword hits in ``text``."""
    return {name: cues.hits(text) for name, cues in EMOTION_CUES.items()}


def fired_labels(found: dict[str, list[str]]) -> list[str]:
    return [name for name in _PRIORITY if found[name]]


def classifier_label(
    found: dict[str, list[str]], fired: list[str], classifier: EmotionClassifier | None, text: str,
) -> tuple[str, Prediction] | None:
    """``(label, prediction)`` from the classifier, refined by the keyword labels of its class's
    family; None when there is no classifier or model for the text, or the keyword rules are
    explicit enough to stand alone (see the module docstring). Shared with the trainer."""
    if classifier is None:
        return None
    prediction = classifier.predict(text, keyword_features(fired))
    if prediction is None:
        return None
    model = classifier.model(prediction.language)
    if model is None:
        return None
    label = refine_label(found, fired, prediction, model, text)
    return None if label is None else (label, prediction)


def refine_label(
    found: dict[str, list[str]], fired: list[str], prediction: Prediction, model: LanguageModel, text: str,
) -> str | None:
    """The label used for the classifier's ``prediction`` (see the module docstring); None when the
    keyword rules stand alone. Shared with the trainer, which tunes the neutral bias through it."""
    if sum(len(v) for v in found.values()) >= model.keyword_hits:
        return None
    if fired and fired[0] not in model.labels and len(found[fired[0]]) >= 2:
        return None  # an explicit label the classifier cannot have ("压力太大了，撑不住": stressed)
    if "confused" in fired and prediction.label != "angry" and ADVICE_CUES.search(text):
        return "confused"  # asks what to do: the seed's reading, not the worry it implies
    short = len(text.strip()) < _SHORT_CHARS
    if short and prediction.label != "neutral" and not fired and prediction.probability < model.floor:
        return "neutral"  # a weak guess on a short line with no emotion word stays neutral
    if short and prediction.label == "neutral" and fired:
        return fired[0]  # a short line's emotion word is most of its evidence ("好焦虑")
    spoken = next((name for name in fired if FAMILY[name] not in ("neutral", prediction.label)), None)
    if spoken is not None and (
        prediction.probabilities.get(FAMILY[spoken], 0.0) >= prediction.probability - model.keyword_margin
    ):
        return spoken  # a near tie, and the text names the other feeling ("最近总担心会被裁员")
    return next((name for name in fired if FAMILY[name] == prediction.label), prediction.label)


def neutral_leanings(label: str, prediction: Prediction, model: LanguageModel, text: str) -> tuple[bool, bool, bool]:
    """``(upset, heated, upbeat)`` of a text whose label and class are both neutral and that is
    long enough to lean (``_UPSET_MIN_CHARS``): the probability of sad + angry + anxious reaches
    ``comfort_threshold`` (needs comfort), of angry ``heated_threshold`` (needs de-escalation), of
    happy ``upbeat_threshold`` (high social energy, unless upset or heated). The primary emotion
    stays neutral: these say who should answer first, not what the user feels. Shared with the
    trainer, which tunes the thresholds through it."""
    if label != "neutral" or prediction.label != "neutral" or len(text.strip()) < _UPSET_MIN_CHARS:
        return False, False, False
    upset = prediction.comfort_probability >= model.comfort_threshold
    heated = prediction.probabilities.get("angry", 0.0) >= model.heated_threshold
    upbeat = not (upset or heated) and prediction.probabilities.get("happy", 0.0) >= model.upbeat_threshold
    return upset, heated, upbeat


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
    text = text[:MAX_CHARS]  # bounds the time per message; a chat message is far shorter
    found = keyword_hits(text)
    fired = fired_labels(found)
    primary: PrimaryEmotion = fired[0] if fired else "neutral"  # type: ignore[assignment]
    hits = sum(len(v) for v in found.values())
    learned = classifier_label(found, fired, model, text)
    upset = heated = upbeat = False
    if learned is not None:
        label, prediction = learned
        primary = label  # type: ignore[assignment]
        lang_model = model.model(prediction.language)  # type: ignore[union-attr]
        if lang_model is not None:
            upset, heated, upbeat = neutral_leanings(label, prediction, lang_model, text)
        agreeing = list(found.get(label, []))  # the keywords of the label used, if any
        if primary == "neutral":
            intensity, cues = _intensity(text, primary, 0)
        else:
            intensity, cues = _intensity(text, primary, 1, base=0.2 + 0.3 * prediction.probability)
    else:
        intensity, cues = _intensity(text, primary, hits)
    comfort = COMFORT_CUES.hits(text)
    advice = ADVICE_CUES.hits(text)
    calm = DEESCALATION_CUES.hits(text)
    declined = NO_COMFORT_CUES.hits(text)
    by_emotion = needs_of_emotion(primary)
    needs_comfort = not declined and (by_emotion[0] or upset or bool(comfort))
    needs_advice = by_emotion[1] or bool(advice)
    needs_deescalation = by_emotion[2] or heated or bool(calm)
    if learned is not None:
        keywords = agreeing + comfort + declined + advice + calm
        reason = (f"offline classifier: {prediction.label} (p={prediction.probability:.2f}, "
                  f"{prediction.language} model)")
        if primary == "neutral" and prediction.label != "neutral":
            reason += ", too unsure for a short line without an emotion word: neutral"
        elif primary != prediction.label:
            reason += f", refined to {primary} by keywords"
        if upset and primary not in _COMFORT_EMOTIONS:
            reason += f"; upset p={prediction.comfort_probability:.2f}"
        if heated:
            reason += f"; heated p(angry)={prediction.probabilities['angry']:.2f}"
        if upbeat:
            reason += f"; upbeat p(happy)={prediction.probabilities['happy']:.2f}"
    else:
        keywords = [k for name in fired for k in found[name]] + comfort + declined + advice + calm
        reason = f"offline heuristics: {primary}"
    if keywords:
        reason += "; keywords " + ", ".join(dict.fromkeys(keywords))
    if cues:
        reason += "; " + "; ".join(cues)
    energy = _social_energy(text, primary, len(_EXCLAIM.findall(text)))
    return UserEmotion(
        primary_emotion=primary,
        intensity=intensity,
        needs_comfort=needs_comfort,
        needs_advice=needs_advice,
        needs_deescalation=needs_deescalation,
        social_energy="high" if upbeat and energy == "medium" else energy,
        reason=reason[:400],
    )
