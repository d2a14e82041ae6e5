import sys

from compozy_mcp.cli.main import main

sys.exit(main())
