import sys

from golf.cli import main

sys.exit(main())
