import sys

from golf.command import main

sys.exit(main())
