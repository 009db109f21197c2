"""Try to reach the network; print CONNECTED or BLOCKED per address."""

import socket
import sys

for target in sys.argv[1:]:
    host, port = target.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
        print("CONNECTED", target)
    except OSError as exc:
        print("BLOCKED", target, exc.errno)
