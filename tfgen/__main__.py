import sys

from tfgen.cli import main

sys.exit(main())
