"""`python -m tui` behaves as the `trace-tui` command."""

import sys

from tui.cli import main

sys.exit(main())
