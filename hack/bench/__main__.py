"""`python -m hack.bench` from the repository root (what `make bench` runs)."""

import sys

from hack.bench.run import main

sys.exit(main())
