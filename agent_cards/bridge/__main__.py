"""``python -m agent_cards.bridge``: serve a session, or print (``--js``) or check (``--check F``) the module."""

import sys

from agent_cards.bridge.service import main

sys.exit(main())
