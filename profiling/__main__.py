"""`python -m profiling` behaves as the `trace-profile` command."""

import sys

from profiling.cli import main

sys.exit(main())
