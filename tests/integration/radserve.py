"""Shared by the Python integration tests: start `radiance serve` on a free port and wait until it
is ready; stop it and show its log's tail when something failed."""
import http.client
import os
import socket
import subprocess
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    """`radiance serve --model MODEL --port P --cache-dir WORK/cache ARGS...`, ready on return
    (SystemExit with the log's tail if it does not get ready within `ready_s`)."""

    def __init__(self, radiance, model, work, args, ready_s=180):
        self.port = free_port()
        self.log = os.path.join(work, "serve.log")
        env = {k: v for k, v in os.environ.items() if k not in ("RADIANCE_API_KEY", "RADIANCE_ADMIN_KEY")}
        self.proc = subprocess.Popen([radiance, "serve", "--model", model, "--port", str(self.port),
                                      "--cache-dir", os.path.join(work, "cache")] + list(args),
                                     stdout=subprocess.DEVNULL, stderr=open(self.log, "w"), env=env)
        end = time.time() + ready_s
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", "/ready")
                if c.getresponse().status == 200:
                    return
            except OSError:
                pass
            if time.time() > end or self.proc.poll() is not None:
                self.stop()
                raise SystemExit("the server did not become ready:\n" + open(self.log).read()[-3000:])
            time.sleep(0.1)

    def stop(self, show_log=False):
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        if show_log:
            print(open(self.log).read()[-3000:])
