"""Imported only in the forkserver (``workers.PRELOAD``), before it captures the
signal handlers its forked workers start with: they start ignoring SIGINT.

Ctrl-C goes to the whole process group; the command tears its pool down itself
(``cli/interrupt.py``), and a worker interrupted while it boots would print a
``KeyboardInterrupt`` traceback. Never import this module anywhere else.
"""

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
