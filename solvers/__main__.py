import os
import sys

from .cli import main

try:
    code = main()
    sys.stdout.flush()  # a closed pipe shows up here, while we can still handle it
except BrokenPipeError:  # the reader went away (`... list | head -1`): stop quietly
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit-time flush does not complain
    code = 1
sys.exit(code)
