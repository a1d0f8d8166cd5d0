// The UI's language: English or Chinese, following the browser (navigator.languages) until the user
// picks one in the top bar (kept in localStorage). t("English text", {vars}) gives the text in the
// current language; "{name}" in it is filled from vars. Messages, names and the developer panels'
// codes are never translated.

const KEY = "companion.lang";
export const LANGS = [["en", "EN"], ["zh-CN", "中文"]];  // short: the switch sits in the top bar, a phone's too

const ZH = {
  // shell
  "Chat": "聊天", "Agents": "角色", "Analytics": "分析", "Sign out": "退出登录", "Conversations": "会话列表",
  "Sign in": "登录", "Paste a bearer token (": "粘贴访问令牌（", "Development mode": "开发模式",
  "This server hands out tokens for any user name (COMPANION_DEV_TOKENS is on).": "此服务器为任何用户名发放令牌（COMPANION_DEV_TOKENS 已开启）。",
  "User name": "用户名", "admin": "管理员", "Get a dev token": "获取开发令牌",
  "That does not look like a token (three dot-separated parts).": "这不像是令牌（应为三段用点分隔的内容）。",
  "That token has expired: sign in again.": "令牌已过期：请重新登录。",
  "Could not get a dev token: {error}": "无法获取开发令牌：{error}",
  "Signed out: {error}": "已退出登录：{error}", "Something went wrong: {error}": "出错了：{error}",
  "Language": "语言",
  // conversation list and the new-conversation form
  "New conversation": "新建会话", "No conversations yet.": "还没有会话。", "{kind} · {count} messages": "{kind} · {count} 条消息",
  "group": "群聊", "direct": "单聊",
  "Conversation not found (it does not exist or belongs to another user).": "找不到该会话（不存在或属于其他用户）。",
  "Pick a conversation or start a new one.": "选择一个会话，或新建一个。",
  "No agents yet: an admin creates them under Agents.": "还没有角色：管理员可在「角色」中创建。",
  "A direct conversation has exactly one agent.": "单聊只能有一个角色。", "Pick the members.": "请选择成员。",
  "Could not create the conversation: {error}": "无法创建会话：{error}",
  "Kind": "类型", "Title": "标题", "optional": "可选", "Story (per-agent narrative state)": "剧情（每个角色各自的故事进展）",
  "Members": "成员", "No agents yet.": "还没有角色。", "Create": "创建",
  // the chat
  "New messages ↓": "新消息 ↓", "Message (mention a name to ask them)": "输入消息（提到名字即可点名）",
  "Send": "发送", "Stop": "停止", "Stop this turn (replies already written stay)": "停止本轮（已写好的回复会保留）",
  "Suggest": "建议", "Suggest replies": "建议回复", "Write for me": "帮我写",
  "Write my next line (continues what you typed; never sent)": "帮我写下一句（接着你已输入的内容；不会自动发送）",
  "Story": "剧情", "Settings": "设置", "Members and settings": "成员与设置",
  "Load earlier messages": "加载更早的消息", "Could not load: {error}": "无法加载：{error}", "Say hello to start.": "打个招呼开始吧。",
  "Rewind to here": "回退到这里", "Remove everything after this message": "删除这条消息之后的所有内容",
  "Previous version": "上一个版本", "Next version": "下一个版本", "version {n}": "版本 {n}", "version {n} of {total}": "版本 {n}/{total}",
  "Why this speaker?": "为什么是TA？", "Edit": "编辑", "Regenerate": "重新生成", "Regenerating…": "正在重新生成…",
  "edited": "已编辑", "typing": "正在输入",
  "named": "被点名", "picked": "被选中", "best fit": "最合适", "in turn": "轮到TA", "carried on": "接着说",
  "This turn failed — no reply from {names}: {why}.": "本轮失败——{names}没有回复：{why}。",
  "This turn failed: {why}.": "本轮失败：{why}。",
  "the reply took too long": "回复耗时太久", "the model did not answer": "模型没有响应",
  "the reply did not pass the checks": "回复没有通过检查", "something went wrong": "出了点问题",
  "Retry": "重试", "details": "详情", "{names} did not reply this time.": "{names}这次没有回复。",
  "Trying again…": "正在重试…", "Could not retry: {error}": "无法重试：{error}",
  "Too long to send: shorten the message first (the count is below).": "太长了，无法发送：请先缩短消息（字数见下方）。",
  "A reply is being written; send when it is done (your text stays here).": "正在写回复；写完后再发送（你的文字会保留在这里）。",
  "Sending…": "正在发送…", "Not sent: {error}": "未发送：{error}",
  "A turn is already running in this conversation; retry in {s} s.": "这个会话正在进行一轮对话；{s} 秒后重试。",
  "{n} / {max} characters": "{n} / {max} 字", "{n} / {max} characters: too long to send — shorten it by {over}.": "{n} / {max} 字：太长无法发送——请删减 {over} 字。",
  "Reading the message…": "正在读消息…", "Choosing who replies…": "正在选择谁来回复…", "{names} typing…": "{names}正在输入…",
  "You sound {feeling} · ": "你似乎有点{feeling} · ", "Nobody replies this time": "这次没有人回复",
  "{name} replies": "{name}回复", "{names} and {last} reply": "{names}和{last}回复",
  "happy": "开心", "sad": "难过", "anxious": "焦虑", "upset": "生气", "lonely": "孤单", "stressed": "有压力",
  "unsure": "困惑", "affectionate": "心动", "playful": "调皮",
  "Stopping…": "正在停止…", "Could not stop: {error}": "无法停止：{error}", "Stopped: replies already written are kept.": "已停止：已写好的回复会保留。",
  "Suggestions need an agent message to answer.": "需要先有一条角色的消息才能给出建议。",
  "No suggestions this time ({code}).": "这次没有建议（{code}）。",
  "Write for me was cut off; your text is as you left it.": "「帮我写」被中断了；你的文字保持原样。",
  "Write for me is not available ({code}).": "「帮我写」暂不可用（{code}）。",
  "Edited. The Story adopts the edited text on the next turn.": "已编辑。剧情会在下一轮采用编辑后的文字。",
  "Not saved: {error}": "未保存：{error}", "Save": "保存", "Cancel": "取消", "Could not regenerate: {error}": "无法重新生成：{error}",
  "This is the first version.": "这已经是第一个版本。", "This is the newest version.": "这已经是最新版本。",
  "Could not switch: {error}": "无法切换：{error}",
  "Remove every message after this one? The Story goes back to this point.": "删除这条之后的所有消息？剧情也会回到这里。",
  "Rewound: 1 message removed.": "已回退：删除了 1 条消息。", "Rewound: {n} messages removed.": "已回退：删除了 {n} 条消息。",
  "Could not rewind: {error}": "无法回退：{error}", "Close": "关闭", "Loading…": "加载中…",
  "A reply is being written; ask again when it is done.": "正在写回复；写完后再试。",
  "{name} is about to speak…": "{name}准备发言…", "{name} could not speak: {error}": "{name}无法发言：{error}",
  "Edited.": "已编辑。", "Copy": "复制", "Copied.": "已复制。", "Continue": "继续", "{name} carries on, without a message from you": "{name}接着说，无需你先发消息",
  "Delete this message? The replies after it stay.": "删除这条消息？之后的回复会保留。", "Message deleted.": "消息已删除。",
  "Could not delete: {error}": "无法删除：{error}",
  // the why panel: headings and labels (the values are the pipeline's own codes)
  "Why {name} replied": "为什么是{name}回复", "Decision": "决定", "Emotion": "情绪", "Intent": "意图", "Candidates": "候选",
  "Timings": "耗时", "Usage": "用量", "selected by": "选中方式", "decided by": "决定者", "reason": "理由", "mentions": "点名",
  "LLM selector": "模型选择器", "LLM problems": "模型选择的问题", "reply target": "回复数", "weights": "权重版本",
  "cross reply": "互相回复", "emotion": "情绪", "source": "来源", "needs": "需要", "social energy": "社交能量", "kind": "类型",
  "addressed": "被提到", "wants several voices": "想听多人意见", "model": "模型", "input tokens": "输入 token",
  "output tokens": "输出 token", "estimated": "估算", "attempts": "尝试次数", "quality": "质量检查", "outcome": "结果",
  "revision": "版本", "tool calls": "工具调用", "diagnostics": "诊断",
  // the Story panel
  "Now": "现在", "Scene": "场景", "Main thread": "主线", "Side thread": "支线", "Current goal": "当前目标",
  "Goals reached": "已达成目标", "Accepted": "已采用", "Next to adopt": "下一条将采用", "Refresh": "刷新",
  "Story is off for this conversation.": "这个会话没有开启剧情。",
  "Each agent's Story adopts its last saved reply — edited text included — on the next turn.": "每个角色的剧情会在下一轮采用其最后保存的回复（包括编辑过的文字）。",
  "Not started yet: it begins with this member's next reply.": "尚未开始：将从这位成员的下一条回复开始。",
  "Ready: the story begins with this member's next reply.": "已就绪：故事将从这位成员的下一条回复开始。",
  "Could not start this time; it tries again on the next reply.": "这次没能开始；下一条回复时会再试。",
  "Up to date; it adopts the newest reply on the next turn.": "已是最新；下一轮会采用最新的回复。",
  "Up to date.": "已是最新。",
  "Something went wrong on the last turn; it tries again on the next one.": "上一轮出了问题；下一轮会再试。",
  "The story grew too large to save; it starts over on the next turn.": "故事太长无法保存；下一轮将重新开始。",
  "The saved story could not be read; it starts over on the next turn.": "无法读取保存的故事；下一轮将重新开始。",
  "Starts over on the next turn.": "下一轮重新开始。",
  "just beginning": "刚刚开始", "unfolding": "正在展开", "coming to a close": "即将结束",
  // the settings panel
  "Conversation settings": "会话设置", "Name": "名称", "(the members' names)": "（成员的名字）", "Rename": "重命名",
  "Renamed.": "已重命名。", "Not renamed": "未能重命名", "Not changed": "未能更改", "Mute": "静音", "muted": "已静音",
  "Speak now": "立即发言", "This member replies now, without a message from you": "这位成员现在就发言，无需你先发消息",
  "Remove": "移除", "Remove {name} from this conversation? Their messages stay.": "把{name}移出这个会话？TA 的消息会保留。",
  "Not removed": "未能移除", "{name} left the conversation.": "{name}已离开会话。",
  "{name} is muted: they reply only when named or asked.": "{name}已静音：只有被点名或被请求时才会回复。",
  "{name} is no longer muted.": "{name}已取消静音。",
  "Add": "添加", "Added to the conversation.": "已加入会话。", "Not added": "未能添加",
  "A muted member still reads along and replies when named or asked to speak.": "静音的成员仍会看到对话，被点名或被请求时会回复。",
  "Replies": "回复", "Who replies": "谁来回复", "At most this many replies to a message": "每条消息最多几条回复",
  "Chattiness": "活跃度", "Quiet": "安静", "Balanced": "适中", "Lively": "热闹",
  "Natural — whoever fits best answers": "自然——最合适的人回答", "In turn — round the members in order": "轮流——按成员顺序",
  "Everyone once before anyone twice": "每人说过一次后才轮到第二次", "Only who I name or ask to speak": "只有我点名或请求的人",
  "Story (each member keeps a running story)": "剧情（每位成员都有自己的故事进展）",
  "Suggest my next replies": "为我建议下一句回复", "Suggestions shown": "显示几条建议", "Save settings": "保存设置",
  "Settings saved.": "设置已保存。", "Auto mode": "自动模式",
  "The members talk among themselves for a few turns; sending a message stops it.": "成员们会自己聊上几轮；你发消息就会停止。",
  "Not run yet.": "还没有运行过。", "Running: {done} of {turns} turns.": "运行中：第 {done}/{turns} 轮。",
  "Running: {done} of {turns} turns (stopping…).": "运行中：第 {done}/{turns} 轮（正在停止…）。",
  "Last run {status}: {done} of {turns} turns.": "上次运行{status}：{done}/{turns} 轮。",
  "Last run {status} ({reason}): {done} of {turns} turns.": "上次运行{status}（{reason}）：{done}/{turns} 轮。",
  "finished": "已完成", "stopped": "已停止", "interrupted": "被中断", "failed": "失败",
  "you stopped it": "你停止了它", "you sent a message": "你发了消息", "Stop was pressed": "按下了停止",
  "nobody was left to speak": "没有人可以发言了", "a turn failed": "某一轮失败了", "it ran out of time": "时间用完了",
  "the server went away": "服务器断开了", "the server restarted": "服务器重启了",
  "Turns": "轮数", "Pause (s)": "间隔（秒）", "Start": "开始", "Stop auto mode": "停止自动模式",
  "Auto mode started: the members talk among themselves.": "自动模式已开始：成员们开始自己聊天。",
  "Auto mode did not start": "自动模式未能开始", "Auto mode is stopping.": "自动模式正在停止。", "Not stopped": "未能停止",
  "Delete": "删除", "Delete this conversation": "删除这个会话",
  "Delete “{title}” and all its messages? This cannot be undone.": "删除「{title}」及其全部消息？此操作无法撤销。",
  "Conversation deleted.": "会话已删除。", "Not deleted": "未能删除",
  // agents
  "New agent": "新建角色", "Only admins can create or edit agents.": "只有管理员可以创建或编辑角色。",
  "Delete the agent {name}? Conversations keep their messages.": "删除角色{name}？会话中的消息会保留。",
  "Deleted {name}.": "已删除{name}。", "Saved {name}.": "已保存{name}。",
  "{name} is still a member of a conversation: remove them there (or delete it) first.": "{name}仍是某个会话的成员：请先在那里移除（或删除该会话）。",
};

function initial() {
  const saved = localStorage.getItem(KEY);
  if (saved && LANGS.some(([code]) => code === saved)) return saved;
  const wanted = navigator.languages?.length ? navigator.languages : [navigator.language || "en"];
  for (const tag of wanted) {
    const l = String(tag).toLowerCase();
    if (l.startsWith("zh")) return "zh-CN";
    if (l.startsWith("en")) return "en";
  }
  return "en";
}

export let lang = initial();
document.documentElement.lang = lang;

export function setLang(code) {
  lang = code;
  localStorage.setItem(KEY, code);
  document.documentElement.lang = code;
}

export function t(text, vars = {}) {
  const template = (lang === "zh-CN" && ZH[text]) || text;
  return template.replace(/\{(\w+)\}/g, (whole, key) => (key in vars ? String(vars[key]) : whole));
}
