"""An MCP server stuck at start-up: it writes its process id to the file named by its first
argument, then never answers (nor reads its stdin, so its closing does not end it)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def main() -> None:
    Path(sys.argv[1]).write_text(str(os.getpid()))
    while True:
        time.sleep(60)


if __name__ == "__main__":
    main()
