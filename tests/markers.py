"""Skip markers shared by several test modules."""

from __future__ import annotations

import signal

import pytest

#: a process started with SIGINT ignored (a background job of a non-interactive shell, ``nohup``) keeps it ignored,
#: and so do the runs it starts: dpverify then installs no handler, by design, and a Ctrl-C cannot interrupt them
SIGINT_IGNORED = pytest.mark.skipif(signal.getsignal(signal.SIGINT) is signal.SIG_IGN,
                                    reason="SIGINT is ignored in this process (started in the background)")
