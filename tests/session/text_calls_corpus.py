# ruff: noqa: E501 - model outputs are data, kept one per line
"""Model outputs with text tool calls, in the shapes public ReAct and XML tool-call
examples show (LangChain-style ReAct, Hermes/Qwen ``<tool_call>``, Llama's
``<function=...>``, ``<invoke>`` blocks, forge-style tool tags), each with the parse
a careful reader expects: the calls (name, arguments) or an error fragment.
"""

from __future__ import annotations

from typing import Any

Case = tuple[str, str, list[tuple[str, dict[str, Any]]], list[str]]
"""(id, model output, expected calls, expected error fragments)."""

TOOLS = ("read_file", "write_file", "shell", "grep", "list_dir", "task_completion",
         "ask_question", "search")  # fmt: skip
SOLE = {"read_file": "path", "shell": "command", "list_dir": "path", "search": "query"}

CASES: list[Case] = [
    # --- <tool_call> JSON (Hermes / Qwen style) ---
    (
        "hermes-basic",
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "src/main.py"}}\n</tool_call>',
        [("read_file", {"path": "src/main.py"})],
        [],
    ),
    (
        "hermes-prose-before",
        'Let me look at the file first.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>',
        [("read_file", {"path": "a.py"})],
        [],
    ),
    (
        "hermes-prose-after",
        '<tool_call>{"name": "shell", "arguments": {"command": "ls"}}</tool_call>\nI will wait for the result.',
        [("shell", {"command": "ls"})],
        [],
    ),
    (
        "hermes-two-calls",
        '<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>\n<tool_call>{"name": "read_file", "arguments": {"path": "b.py"}}</tool_call>',
        [("read_file", {"path": "a.py"}), ("read_file", {"path": "b.py"})],
        [],
    ),
    (
        "hermes-single-quotes",
        "<tool_call>{'name': 'shell', 'arguments': {'command': 'pytest -q'}}</tool_call>",
        [("shell", {"command": "pytest -q"})],
        [],
    ),
    (
        "hermes-python-literals",
        "<tool_call>{'name': 'grep', 'arguments': {'pattern': 'TODO', 'case_insensitive': True, 'path': None}}</tool_call>",
        [("grep", {"pattern": "TODO", "case_insensitive": True, "path": None})],
        [],
    ),
    (
        "hermes-braces-in-string",
        '<tool_call>{"name": "write_file", "arguments": {"path": "a.js", "content": "function f() { return {a: 1}; }"}}</tool_call>',
        [("write_file", {"path": "a.js", "content": "function f() { return {a: 1}; }"})],
        [],
    ),
    (
        "hermes-unbalanced-brace-in-string",
        '<tool_call>{"name": "write_file", "arguments": {"path": "a.txt", "content": "open { but never close"}}</tool_call>',
        [("write_file", {"path": "a.txt", "content": "open { but never close"})],
        [],
    ),
    (
        "hermes-escaped-quote",
        '<tool_call>{"name": "shell", "arguments": {"command": "echo \\"hi}\\""}}</tool_call>',
        [("shell", {"command": 'echo "hi}"'})],
        [],
    ),
    (
        "hermes-single-quote-with-apostrophe",
        "<tool_call>{'name': 'shell', 'arguments': {'command': \"echo 'it}s'\"}}</tool_call>",
        [("shell", {"command": "echo 'it}s'"})],
        [],
    ),
    (
        "hermes-newlines-in-content",
        '<tool_call>\n{"name": "write_file", "arguments": {"path": "a.py", "content": "def f():\\n    return 1\\n"}}\n</tool_call>',
        [("write_file", {"path": "a.py", "content": "def f():\n    return 1\n"})],
        [],
    ),
    (
        "hermes-arguments-as-string",
        '<tool_call>{"name": "read_file", "arguments": "{\\"path\\": \\"a.py\\"}"}</tool_call>',
        [("read_file", {"path": "a.py"})],
        [],
    ),
    (
        "hermes-parameters-key",
        '<tool_call>{"name": "shell", "parameters": {"command": "ls"}}</tool_call>',
        [("shell", {"command": "ls"})],
        [],
    ),
    ("hermes-no-arguments", '<tool_call>{"name": "list_dir"}</tool_call>', [("list_dir", {})], []),
    (
        "hermes-code-fence-inside",
        '<tool_call>\n```json\n{"name": "shell", "arguments": {"command": "ls"}}\n```\n</tool_call>',
        [("shell", {"command": "ls"})],
        [],
    ),
    (
        "hermes-truncated",
        '<tool_call>\n{"name": "write_file", "arguments": {"path": "a.py", "content": "x = ',
        [],
        ["not closed"],
    ),
    (
        "hermes-truncated-object",
        '<tool_call>{"name": "shell", "arguments": {"command": "ls"}</tool_call>',
        [],
        ["not closed"],
    ),
    (
        "hermes-missing-name",
        '<tool_call>{"arguments": {"path": "a"}}</tool_call>',
        [],
        ['needs a "name"'],
    ),
    ("hermes-not-json", "<tool_call>read the file a.py please</tool_call>", [], ["JSON object"]),
    (
        "hermes-args-list",
        '<tool_call>{"name": "shell", "arguments": ["ls"]}</tool_call>',
        [],
        ["must be a JSON object"],
    ),
    (
        "hermes-trailing-comma",
        "<tool_call>{'name': 'shell', 'arguments': {'command': 'ls',},}</tool_call>",
        [("shell", {"command": "ls"})],
        [],
    ),
    (
        "hermes-unicode",
        '<tool_call>{"name": "write_file", "arguments": {"path": "ü.txt", "content": "naïve — “quotes”"}}</tool_call>',
        [("write_file", {"path": "ü.txt", "content": "naïve — “quotes”"})],
        [],
    ),
    (
        "hermes-name-then-json",
        '<tool_call>read_file\n{"path": "a.py"}</tool_call>',
        [("read_file", {"path": "a.py"})],
        [],
    ),
    (
        "function-call-tag",
        '<function_call>{"name": "grep", "arguments": {"pattern": "foo"}}</function_call>',
        [("grep", {"pattern": "foo"})],
        [],
    ),
    (
        "tool-use-tag",
        '<tool_use>{"tool": "shell", "input": {"command": "pwd"}}</tool_use>',
        [("shell", {"command": "pwd"})],
        [],
    ),
    (
        "hermes-nested-json-args",
        '<tool_call>{"name": "search", "arguments": {"query": "x", "filters": {"lang": ["py", "rs"], "depth": 2}}}</tool_call>',
        [("search", {"query": "x", "filters": {"lang": ["py", "rs"], "depth": 2}})],
        [],
    ),
    (
        "hermes-eval-attempt",
        "<tool_call>{'name': 'shell', 'arguments': {'command': __import__('os').system('id')}}</tool_call>",
        [],
        ["not valid JSON"],
    ),
    (
        "hermes-three-calls-mixed",
        'First:\n<tool_call>{"name": "shell", "arguments": {"command": "ls"}}</tool_call>\nthen\n<tool_call>{"name": "read_file", "arguments": {"path": "x"}}</tool_call>\nand\n<tool_call>{"name": "grep", "arguments": {"pattern": "y"}}</tool_call>',
        [("shell", {"command": "ls"}), ("read_file", {"path": "x"}), ("grep", {"pattern": "y"})],
        [],
    ),
    (
        "hermes-good-and-bad",
        '<tool_call>{"name": "shell", "arguments": {"command": "ls"}}</tool_call>\n<tool_call>{"name": "read_file", "arguments": {path: a}}</tool_call>',
        [("shell", {"command": "ls"})],
        ["not valid JSON"],
    ),
    # --- Llama <function=...> ---
    (
        "llama-function",
        '<function=read_file>{"path": "README.md"}</function>',
        [("read_file", {"path": "README.md"})],
        [],
    ),
    (
        "llama-function-prose",
        'Checking.\n<function=shell>{"command": "git status"}</function>\nDone.',
        [("shell", {"command": "git status"})],
        [],
    ),
    ("llama-function-empty", "<function=list_dir></function>", [("list_dir", {})], []),
    ("llama-function-truncated", '<function=shell>{"command": "ls', [], ["not closed"]),
    (
        "llama-function-single-quotes",
        "<function=grep>{'pattern': 'def main'}</function>",
        [("grep", {"pattern": "def main"})],
        [],
    ),
    # --- <invoke> blocks ---
    (
        "invoke-basic",
        '<function_calls>\n<invoke name="read_file">\n<parameter name="path">src/app.py</parameter>\n</invoke>\n</function_calls>',
        [("read_file", {"path": "src/app.py"})],
        [],
    ),
    (
        "invoke-two-params",
        '<invoke name="grep"><parameter name="pattern">TODO</parameter><parameter name="path">src</parameter></invoke>',
        [("grep", {"pattern": "TODO", "path": "src"})],
        [],
    ),
    (
        "invoke-json-param",
        '<invoke name="search"><parameter name="query">x</parameter><parameter name="filters">{"lang": "py"}</parameter></invoke>',
        [("search", {"query": "x", "filters": {"lang": "py"}})],
        [],
    ),
    (
        "invoke-multiline-content",
        '<invoke name="write_file"><parameter name="path">a.py</parameter><parameter name="content">def f():\n    return {1: 2}\n</parameter></invoke>',
        [("write_file", {"path": "a.py", "content": "def f():\n    return {1: 2}\n"})],
        [],
    ),
    (
        "invoke-escaped-entities",
        '<invoke name="shell"><parameter name="command">echo a &amp;&amp; echo &lt;b&gt;</parameter></invoke>',
        [("shell", {"command": "echo a && echo <b>"})],
        [],
    ),
    (
        "invoke-two-calls",
        '<function_calls><invoke name="read_file"><parameter name="path">a</parameter></invoke><invoke name="read_file"><parameter name="path">b</parameter></invoke></function_calls>',
        [("read_file", {"path": "a"}), ("read_file", {"path": "b"})],
        [],
    ),
    (
        "invoke-truncated",
        '<invoke name="write_file"><parameter name="path">a.py</parameter><parameter name="content">x =',
        [],
        ["not closed"],
    ),
    (
        "invoke-single-quoted-name",
        "<invoke name='shell'><parameter name='command'>ls -la</parameter></invoke>",
        [("shell", {"command": "ls -la"})],
        [],
    ),
    # --- tool-name tags (forge style) ---
    (
        "forge-read",
        "<read_file>\n<path>src/auth.go</path>\n</read_file>",
        [("read_file", {"path": "src/auth.go"})],
        [],
    ),
    (
        "forge-prose",
        "I need the auth code.\n<read_file><path>auth.go</path></read_file>",
        [("read_file", {"path": "auth.go"})],
        [],
    ),
    (
        "forge-two-params",
        "<grep><pattern>func main</pattern><path>cmd/</path></grep>",
        [("grep", {"pattern": "func main", "path": "cmd/"})],
        [],
    ),
    (
        "forge-completion",
        "<task_completion><result>All tests pass.</result></task_completion>",
        [("task_completion", {"result": "All tests pass."})],
        [],
    ),
    (
        "forge-question",
        "<ask_question><question>Which database should I use?</question></ask_question>",
        [("ask_question", {"question": "Which database should I use?"})],
        [],
    ),
    (
        "forge-json-body",
        '<shell>{"command": "make test"}</shell>',
        [("shell", {"command": "make test"})],
        [],
    ),
    (
        "forge-write-code",
        "<write_file><path>a.html</path><content><div>{x}</div></content></write_file>",
        [("write_file", {"path": "a.html", "content": "<div>{x}</div>"})],
        [],
    ),
    ("forge-truncated", "<write_file><path>a.py</path><content>print(", [], ["not closed"]),
    (
        "forge-unknown-tag-ignored",
        "<thinking>I should read it</thinking>\n<read_file><path>x</path></read_file>",
        [("read_file", {"path": "x"})],
        [],
    ),
    ("forge-empty", "<list_dir></list_dir>", [("list_dir", {})], []),
    # --- ReAct ---
    (
        "react-basic",
        'Thought: I need to see the files.\nAction: list_dir\nAction Input: {"path": "."}',
        [("list_dir", {"path": "."})],
        [],
    ),
    (
        "react-made-up-observation",
        'Thought: read it\nAction: read_file\nAction Input: {"path": "a.py"}\nObservation: print("hi")\nThought: done\nFinal Answer: it prints hi',
        [("read_file", {"path": "a.py"})],
        [],
    ),
    (
        "react-single-quotes",
        "Thought: run tests\nAction: shell\nAction Input: {'command': 'pytest -q'}",
        [("shell", {"command": "pytest -q"})],
        [],
    ),
    (
        "react-plain-string-sole",
        "Thought: look\nAction: read_file\nAction Input: src/main.py",
        [("read_file", {"path": "src/main.py"})],
        [],
    ),
    (
        "react-quoted-string-sole",
        'Action: shell\nAction Input: "ls -la"',
        [("shell", {"command": "ls -la"})],
        [],
    ),
    (
        "react-plain-string-not-sole",
        "Action: write_file\nAction Input: a.py hello",
        [],
        ["must be a JSON object"],
    ),
    (
        "react-backticked-name",
        'Action: `shell`\nAction Input: {"command": "ls"}',
        [("shell", {"command": "ls"})],
        [],
    ),
    (
        "react-code-fence",
        'Thought: x\nAction: shell\nAction Input: ```json\n{"command": "ls"}\n```',
        [("shell", {"command": "ls"})],
        [],
    ),
    (
        "react-multiline-json",
        'Action: write_file\nAction Input: {\n  "path": "a.py",\n  "content": "x = {1: 2}\\n"\n}',
        [("write_file", {"path": "a.py", "content": "x = {1: 2}\n"})],
        [],
    ),
    ("react-final-answer", "Thought: I know this.\nFinal Answer: The answer is 42.", [], []),
    (
        "react-truncated",
        'Thought: write\nAction: write_file\nAction Input: {"path": "a.py", "content": "def',
        [],
        ["not closed"],
    ),
    ("react-no-input", "Thought: list\nAction: list_dir", [("list_dir", {})], []),
    ("react-bad-action", "Action: run the tests please\nAction Input: {}", [], ["tool name"]),
    (
        "react-braces-in-single-quoted",
        "Action: shell\nAction Input: {'command': \"awk '{print $1}' f\"}",
        [("shell", {"command": "awk '{print $1}' f"})],
        [],
    ),
    (
        "react-thought-kept",
        'Thought: The config lives in etc.\nAction: read_file\nAction Input: {"path": "etc/app.toml"}',
        [("read_file", {"path": "etc/app.toml"})],
        [],
    ),
    (
        "react-two-actions",
        'Action: read_file\nAction Input: {"path": "a"}\nAction: read_file\nAction Input: {"path": "b"}',
        [("read_file", {"path": "a"}), ("read_file", {"path": "b"})],
        [],
    ),
    (
        "react-parens-name",
        'Action: list_dir()\nAction Input: {"path": "src"}',
        [("list_dir", {"path": "src"})],
        [],
    ),
    (
        "react-python-none",
        "Action: grep\nAction Input: {'pattern': 'x', 'path': None, 'case_insensitive': False}",
        [("grep", {"pattern": "x", "path": None, "case_insensitive": False})],
        [],
    ),
    (
        "react-json-then-prose",
        'Action: shell\nAction Input: {"command": "ls"}\nThought: waiting',
        [("shell", {"command": "ls"})],
        [],
    ),
    (
        "react-invalid-literal",
        "Action: shell\nAction Input: {'command': os.system('x')}",
        [],
        ["not valid JSON"],
    ),
    (
        "react-indented",
        '  Thought: hmm\n  Action: shell\n  Action Input: {"command": "ls"}',
        [("shell", {"command": "ls"})],
        [],
    ),
    ("react-lowercase-no", 'action: shell\naction input: {"command": "ls"}', [], []),
    # --- no call at all ---
    ("plain-answer", "The function returns the sum of its arguments.", [], []),
    ("json-in-prose-not-a-call", 'The config is {"debug": true} by default.', [], []),
    ("markdown-code", "Here is the fix:\n```python\ndef f():\n    return {'a': 1}\n```", [], []),
    ("mentions-tool-name", "I could use read_file to check, but the answer is clear: 4.", [], []),
    ("xml-in-answer", "Use `<div>` tags, e.g. <div><span>x</span></div>.", [], []),
    ("empty", "", [], []),
    # --- mixtures and oddities ---
    (
        "hermes-inside-function-calls",
        '<function_calls><tool_call>{"name": "shell", "arguments": {"command": "ls"}}</tool_call></function_calls>',
        [("shell", {"command": "ls"})],
        [],
    ),
    (
        "hermes-and-react",
        '<tool_call>{"name": "shell", "arguments": {"command": "ls"}}</tool_call>\nAction: read_file\nAction Input: {"path": "a"}',
        [("shell", {"command": "ls"}), ("read_file", {"path": "a"})],
        [],
    ),
    (
        "hermes-huge-number",
        '<tool_call>{"name": "shell", "arguments": {"command": "sleep 1", "timeout_ms": 120000}}</tool_call>',
        [("shell", {"command": "sleep 1", "timeout_ms": 120000})],
        [],
    ),
    (
        "hermes-deep-nesting-strings",
        '<tool_call>{"name": "write_file", "arguments": {"path": "x.json", "content": "{\\"a\\": {\\"b\\": [1, {\\"c\\": \\"}\\"}]}}"}}</tool_call>',
        [("write_file", {"path": "x.json", "content": '{"a": {"b": [1, {"c": "}"}]}}'})],
        [],
    ),
    (
        "hermes-windows-newlines",
        '<tool_call>\r\n{"name": "shell", "arguments": {"command": "dir"}}\r\n</tool_call>',
        [("shell", {"command": "dir"})],
        [],
    ),
    (
        "hermes-name-number",
        '<tool_call>{"name": 5, "arguments": {}}</tool_call>',
        [],
        ['needs a "name"'],
    ),
    ("hermes-empty", "<tool_call></tool_call>", [], ["JSON object"]),
    (
        "react-observation-hallucinated-calls-after",
        'Action: shell\nAction Input: {"command": "ls"}\nObservation: a.py\nAction: shell\nAction Input: {"command": "rm -rf a.py"}',
        [("shell", {"command": "ls"})],
        [],
    ),
]
