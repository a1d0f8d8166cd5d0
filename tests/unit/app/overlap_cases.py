"""Hand-labelled (message, reply, is_copy) pairs, zh and en, for the echo and repeat thresholds.

Copies are what small models were seen to save: the user's line said back (whole, with a word added,
or most of it), an earlier message said again. Not copies: replies that pick up a few of the user's
words, as people do ("超好笑的视频？快发我"), echo-questions, greetings answered in kind.
"""

ECHO_CASES: list[tuple[str, str, bool]] = [
    ("我今天看到一个超好笑的视频，笑死我了", "我今天看到一个超好笑的视频，笑死我了", True),
    ("我今天看到一个超好笑的视频，笑死我了", "我今天看到一个超好笑的视频，笑死我了！你也看看吧", True),
    ("我今天看到一个超好笑的视频，笑死我了", "哈哈，我今天看到一个超好笑的视频，笑死了", True),
    ("我今天看到一个超好笑的视频，笑死我了", "什么视频这么好笑？快发给我看看！", False),
    ("我今天看到一个超好笑的视频，笑死我了", "哈哈，看到超好笑的视频，笑死我了！", True),  # saved by Qwen 0.5B
    ("明天要面试了，我好紧张，睡不着。", "明天要面试了，我好紧张，睡不着。", True),  # dropped on Qwen 0.5B
    ("我今天看到一个超好笑的视频，笑死我了", "超好笑的视频？快分享一下，我也想笑一笑", False),
    ("我今天有点难过，工作上出了错", "我今天有点难过，工作上出了错。", True),
    ("我今天有点难过，工作上出了错", "你今天有点难过，工作上出了错啊", True),
    ("我今天有点难过，工作上出了错", "抱抱你，出错很正常，想说说发生了什么吗？", False),
    ("我今天有点难过，工作上出了错", "工作上出错确实会难受，先别太自责。", False),
    ("帮我分析一下这两个offer，一个钱多一个离家近", "帮我分析一下这两个offer，一个钱多一个离家近", True),
    ("帮我分析一下这两个offer，一个钱多一个离家近", "可以先列一下：钱多的那个多多少？离家近能省多少通勤时间？", False),
    ("帮我分析一下这两个offer，一个钱多一个离家近", "一个钱多一个离家近，我觉得要看你更在意什么。", False),
    ("气死我了，室友又把我的东西弄坏了", "气死我了，室友又把我的东西弄坏了！", True),
    ("气死我了，室友又把我的东西弄坏了", "先消消气，要不要和室友好好谈一次？", False),
    ("气死我了，室友又把我的东西弄坏了", "室友又把你的东西弄坏了？这也太过分了", False),
    ("你好", "你好呀！今天过得怎么样？", False),
    ("早上好", "早上好！", False),
    ("我升职了！", "哇，你升职了！恭喜恭喜！", False),
    ("I just got promoted at work today!", "I just got promoted at work today!", True),
    ("I just got promoted at work today!", "Wow, I just got promoted at work today! So happy.", True),
    ("I just got promoted at work today!", "You got promoted? That's amazing, congratulations!", False),
    ("I just got promoted at work today!", "Promoted at work today? Let's celebrate!", False),
    ("I'm so tired of my boss yelling at me every day", "I'm so tired of my boss yelling at me every day.", True),
    ("I'm so tired of my boss yelling at me every day", "That sounds exhausting. Nobody deserves to be yelled at every day.", False),
    ("I'm so tired of my boss yelling at me every day", "Your boss yelling at you every day? That's not okay.", False),
    ("Can you help me compare these two job offers?", "Can you help me compare these two job offers?", True),
    ("Can you help me compare these two job offers?", "Sure, tell me the salary, commute and growth of each.", False),
    ("hi", "Hi! How are you?", False),
    ("good morning", "Good morning! Sleep well?", False),
]
"""(the user's message, the reply, whether the reply is an echo of it)."""

REPEAT_CASES: list[tuple[str, str, bool]] = [
    ("抱抱你，出错很正常，想说说发生了什么吗？", "抱抱你，出错很正常，想说说发生了什么吗？", True),
    ("抱抱你，出错很正常，想说说发生了什么吗？", "出错很正常，想说说发生了什么吗？", True),
    ("抱抱你，出错很正常，想说说发生了什么吗？", "别担心，我一直都在，慢慢说。", False),
    ("可以先列一下：钱多的那个多多少？离家近能省多少通勤时间？", "可以先列一下：钱多的那个多多少？离家近能省多少通勤时间", True),
    ("可以先列一下：钱多的那个多多少？", "我补充一点：还要看两家公司的发展空间。", False),
    ("哈哈哈，这个太好笑了", "哈哈，是啊", False),
    ("That sounds exhausting. Nobody deserves to be yelled at every day.", "That sounds exhausting. Nobody deserves to be yelled at every day.", True),
    ("That sounds exhausting. Nobody deserves to be yelled at every day.", "Nobody deserves to be yelled at every day.", True),
    ("That sounds exhausting. Nobody deserves to be yelled at every day.", "Have you thought about talking to HR?", False),
    ("Sure, tell me the salary, commute and growth of each.", "Also think about the team you'd join.", False),
    ("Good morning!", "Good morning to you too!", False),
]
"""(a message already in the window, the reply, whether the reply re-says it)."""
