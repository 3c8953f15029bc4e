#!/usr/bin/env bash
# The main job, end to end: the bundled `fs` plugin reading, searching and editing files inside its
# grants (see cordon.toml), the `guard` and `redact` hooks around it, a batch, and refusals coming
# back as error results instead of crashes; then the agent loop against a scripted model server.
set -u
CORDON=${CORDON:-cordon}

step() { printf '\n\033[1m$ cordon %s\033[0m\n' "$*"; "$CORDON" "$@"; echo "(exit $?)"; }

step list
step describe edit_file
step call read_file '{"path": "README.md", "limit": 8}'
step call grep '{"pattern": "fn is_valid_tool_name", "path": "crates/runtime/src"}'
step call find_files '{"pattern": "*.wit"}'
step call write_file '{"path": "/scratch/notes.md", "content": "# Notes\nstatus: draft\n"}'
step call edit_file '{"path": "/scratch/notes.md", "old_text": "status: draft", "new_text": "status: reviewed"}'
step call read_file '{"path": "/scratch/notes.md"}'

printf '\n\033[1mA tool written in Python (plugins/csv_query/app.py):\033[0m\n'
step call csv_query '{"path": "/samples/sample.csv", "column": "category", "value": "kitchen", "columns": ["name", "price"]}'

printf '\n\033[1mA tool written in JavaScript (plugins/json_query/app.js) and one in C (plugins/hash/app.c):\033[0m\n'
step call json_query '{"path": "/samples/books.json", "query": "$.books[?(@.price < 10)].title"}'
step call hash '{"path": "/samples/sample.txt"}'

printf '\n\033[1mHooks: guard blocks protected files, redact masks secrets in results:\033[0m\n'
step call write_file '{"path": "/scratch/.env", "content": "TOKEN=abc"}'
step call write_file '{"path": "/scratch/creds.txt", "content": "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\npassword=hunter2\n"}'
step call read_file '{"path": "/scratch/creds.txt"}'

printf '\n\033[1mA batch (OpenAI tool_calls form), results in call order, one with malformed arguments:\033[0m\n'
printf '$ cordon batch <<< ...\n'
"$CORDON" batch <<'JSON'
[
  {"id": "call_1", "type": "function", "function": {"name": "list_dir", "arguments": "{\"path\": \"/repo/wit\"}"}},
  {"id": "call_2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": "}},
  {"id": "call_3", "type": "function", "function": {"name": "find_files", "arguments": "{\"pattern\": \"Makefile\"}"}}
]
JSON
echo "(exit $?)"

printf '\n\033[1mFailures are results, not crashes:\033[0m\n'
step call write_file '{"path": "README.md", "content": "overwritten"}'
step call read_file '{"path": "/repo/../../etc/passwd"}'
step call read_file '{"path": "README.md", "offset": 0}'
step call http_fetch '{"url": "https://example.com/"}'
step call delete_everything '{}'

printf '\n\033[1mThe agent loop, against a scripted OpenAI-compatible server (no API key needed):\033[0m\n'
server_log=$(mktemp)
python3 tests/scripted_model/scripted_model.py tests/scripted_model/demo.json >"$server_log" &
server=$!
for _ in $(seq 50); do grep -q listening "$server_log" && break; sleep 0.1; done
url="$(sed -n 's/^listening on //p' "$server_log")/v1"
step run --base-url "$url" --model scripted "What is cordon? Read the README."
kill "$server" 2>/dev/null
rm -f "$server_log"
exit 0
