#!/usr/bin/python3
"""stomp.py (Debian python3-stomp) over TLS for conformance/tls_clients_test.go.

Connects with stomp.Connection12 and set_ssl (the CA file, and the client
certificate and key when given), subscribes to a queue, sends one message
with a receipt and waits for it. Prints one line:

    OK <body>
    ERROR <what failed>: <reason>

Usage: stomp_tls.py HOST PORT CAFILE QUEUE [CERTFILE KEYFILE] [--login USER PASSCODE]
Exit status 0 for OK, 1 for ERROR, 2 on bad arguments. Every wait is
bounded (TIMEOUT seconds).
"""
import sys
import threading

import stomp

TIMEOUT = 10
CONNECT_ATTEMPTS = 3


class Listener(stomp.ConnectionListener):
    def __init__(self):
        self.message = threading.Event()
        self.body = None
        self.error = None

    def on_message(self, frame):
        self.body = frame.body
        self.message.set()

    def on_error(self, frame):
        self.error = frame.headers.get("message", "") + " " + (frame.body or "")
        self.message.set()


def main(argv):
    login = None
    if "--login" in argv:
        i = argv.index("--login")
        login = argv[i + 1:i + 3]
        argv = argv[:i] + argv[i + 3:]
    if len(argv) not in (4, 6):
        print(__doc__, file=sys.stderr)
        return 2
    host, port, cafile, queue = argv[0], int(argv[1]), argv[2], argv[3]
    cert, key = (argv[4], argv[5]) if len(argv) == 6 else (None, None)
    # stomp.py reads the socket in its receiver thread while the caller's
    # thread writes CONNECT to the same SSLSocket; OpenSSL objects are not
    # safe for that, and a few connections in a hundred fail with
    # "[SSL] internal error" or an empty ConnectFailedException, against
    # ActiveMQ 5.17 and Wharf alike. A failed connect is retried on a new
    # connection (at most CONNECT_ATTEMPTS), each retry reported.
    for attempt in range(1, CONNECT_ATTEMPTS + 1):
        conn = stomp.Connection12([(host, port)], timeout=TIMEOUT, heartbeats=(0, 0),
                                  reconnect_attempts_max=1)
        conn.set_ssl(for_hosts=[(host, port)], ca_certs=cafile, cert_file=cert, key_file=key)
        listener = Listener()
        conn.set_listener("tls", listener)
        try:
            if login:
                conn.connect(login[0], login[1], wait=True)
            else:
                conn.connect(wait=True)
            break
        except Exception as e:  # stomp.py raises several kinds
            if listener.error is not None or attempt == CONNECT_ATTEMPTS:
                print("ERROR connect: %s: %s %s" % (type(e).__name__, e, listener.error or ""))
                return 1
            print("RETRY connect %d: %s: %s" % (attempt, type(e).__name__, e))
            try:
                conn.disconnect()
            except Exception:
                pass
    try:
        dest = "/queue/" + queue
        conn.subscribe(dest, id="1", ack="auto")
        body = "tls " + queue
        conn.send(dest, body, receipt="sent")
        if not listener.message.wait(TIMEOUT):
            print("ERROR receive: no message on %s within %ds" % (dest, TIMEOUT))
            return 1
        if listener.error is not None:
            print("ERROR broker: %s" % listener.error.strip())
            return 1
        if listener.body != body:
            print("ERROR receive: got %r, want %r" % (listener.body, body))
            return 1
        print("OK " + listener.body, flush=True)
        return 0
    finally:
        try:
            conn.disconnect()
        except Exception:
            pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
