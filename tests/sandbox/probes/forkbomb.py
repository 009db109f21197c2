"""A bounded fork bomb: up to 400 sleeping children; says when the kernel refuses."""

import os
import time

count = 0
try:
    for _ in range(400):
        pid = os.fork()
        if pid == 0:
            time.sleep(600)
            os._exit(0)
        count += 1
except OSError as exc:
    print("REFUSED after", count, exc.errno, flush=True)
else:
    print("FORKED", count, flush=True)
