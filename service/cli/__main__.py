"""``python -m service.cli``: the ``hearts`` command without the console script."""

import sys

from service.cli import main

sys.exit(main())
