#!/usr/bin/env bash
# The main job, end to end: the bundled `fs` plugin reading, searching and editing files inside its
# grants (see cordon.toml), and refusals coming back as error results instead of crashes.
set -u
CORDON=${CORDON:-cordon}

step() { printf '\n\033[1m$ cordon %s\033[0m\n' "$*"; "$CORDON" "$@"; echo "(exit $?)"; }

step list
step describe edit_file
step call read_file '{"path": "README.md", "limit": 8}'
step call grep '{"pattern": "fn is_valid_tool_name", "path": "host/src"}'
step call find_files '{"pattern": "*.wit"}'
step call write_file '{"path": "/scratch/notes.md", "content": "# Notes\nstatus: draft\n"}'
step call edit_file '{"path": "/scratch/notes.md", "old_text": "status: draft", "new_text": "status: reviewed"}'
step call read_file '{"path": "/scratch/notes.md"}'

printf '\n\033[1mFailures are results, not crashes:\033[0m\n'
step call write_file '{"path": "README.md", "content": "overwritten"}'
step call read_file '{"path": "/repo/../../etc/passwd"}'
step call read_file '{"path": "README.md", "offset": 0}'
step call delete_everything '{}'
exit 0
