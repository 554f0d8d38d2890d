"""Runs a tool with its stdout piped into a reader that takes one line and
closes the pipe (as `tool | head -1` does): the tool must end with status
0 or SIGPIPE's 141 (or -13, killed by SIGPIPE) and print nothing on
stderr. Usage: closed_pipe.py TOOL ARGS..."""

import subprocess
import sys

tool = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
tool.stdout.readline()
tool.stdout.close()
stderr = tool.stderr.read()
status = tool.wait()
if status not in (0, 141, -13) or stderr:
    sys.exit(f"{sys.argv[1]}: status {status}, stderr {stderr!r}")
