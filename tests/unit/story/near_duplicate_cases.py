"""Labelled option pairs for the suggestions near-duplicate check (``validate.NEAR_DUPLICATE_RATIO``).

NEAR: the same sentence with a character or a word changed, added or dropped, as a small model
writes three "different" options. DISTINCT: different intentions, some sharing most words.
Measured with ``text.similarity``: NEAR 0.85-0.97, DISTINCT 0.00-0.71 (吃火锅 / 爬山).
"""

# (a, b): near duplicates a small model writes — the same sentence with a character or word changed
NEAR = [
    ("我也觉得这个视频超好笑！", "我也觉得这个视频好好笑！"),
    ("你能再说说发生了什么吗？", "你能再说说到底发生了什么吗？"),
    ("谢谢你一直陪着我。", "谢谢你一直陪我。"),
    ("那我们明天一起去吧！", "那我们明天一起去吧～好吗"),
    ("好呀，我们去看电影吧。", "好啊，我们去看电影吧。"),
    ("我想先休息一下。", "我想先休息一下再说。"),
    ("哈哈哈，你太逗了！", "哈哈，你太逗了吧！"),
    ("Thanks, that really helps.", "Thanks, that really helped."),
    ("Can you tell me more about it?", "Can you tell me a bit more about it?"),
    ("Let's go together tomorrow!", "Let's go together tomorrow then!"),
    ("I think you're right.", "I think you are right."),
    ("That sounds like a great plan!", "That sounds like a good plan!"),
    ("我觉得第二个offer更好。", "我觉得第二个offer更好一点。"),
    ("好的，我听你的。", "好的，我都听你的。"),
]
# distinct options: different intentions, sometimes sharing words
DISTINCT = [
    ("我也觉得这个视频超好笑！", "你是在哪里看到的？"),
    ("谢谢你一直陪着我。", "我想一个人静一静。"),
    ("那我们明天一起去吧！", "明天我可能有事，改天吧。"),
    ("你能再说说发生了什么吗？", "我们换个话题聊聊吧。"),
    ("好呀，我们去看电影吧。", "电影太贵了，在家看剧怎么样？"),
    ("我想先休息一下。", "我们继续聊吧，我还不困。"),
    ("Thanks, that really helps.", "I'm still not sure what to do."),
    ("Can you tell me more about it?", "Let's talk about something else."),
    ("Let's go together tomorrow!", "Maybe another day, I'm tired."),
    ("I think you're right.", "I'm not so sure about that."),
    ("我觉得第二个offer更好。", "两个offer各有什么优缺点？"),
    ("我今天心情好多了。", "我今天心情还是不太好。"),
    ("你说得对，我去试试。", "你说得对，但我有点怕。"),
    ("我们一起去吃火锅吧！", "我们一起去爬山吧！"),
    ("That sounds like a great plan!", "That sounds risky, let's think again."),
    ("I'd love to hear more.", "I'd rather stop here for today."),
]
