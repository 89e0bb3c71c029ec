#!/usr/bin/python3
"""Qpid Proton (Debian python3-qpid-proton) over amqps for
conformance/tls_clients_test.go.

Connects with a client SSLDomain that trusts the CA file and verifies the
broker's certificate (and presents the client certificate and key when
given), sends one message to a queue and receives it back. Prints one line:

    OK <body>
    ERROR <what failed>: <reason>

Usage: proton_tls.py HOST PORT CAFILE QUEUE [CERTFILE KEYFILE]
Exit status 0 for OK, 1 for ERROR, 2 on bad arguments. Every wait is
bounded (TIMEOUT seconds).
"""
import sys

from proton import Message, SSLDomain
from proton.utils import BlockingConnection

TIMEOUT = 10


def main(argv):
    if len(argv) not in (4, 6):
        print(__doc__, file=sys.stderr)
        return 2
    host, port, cafile, queue = argv[0], int(argv[1]), argv[2], argv[3]
    domain = SSLDomain(SSLDomain.MODE_CLIENT)
    domain.set_trusted_ca_db(cafile)
    domain.set_peer_authentication(SSLDomain.VERIFY_PEER)
    if len(argv) == 6:
        domain.set_credentials(argv[4], argv[5], None)
    url = "amqps://%s:%d" % (host, port)
    try:
        conn = BlockingConnection(url, timeout=TIMEOUT, ssl_domain=domain,
                                  allowed_mechs="EXTERNAL ANONYMOUS")
    except Exception as e:
        print("ERROR connect: %s: %s" % (type(e).__name__, e))
        return 1
    try:
        body = "tls " + queue
        receiver = conn.create_receiver(queue)
        sender = conn.create_sender(queue)
        sender.send(Message(body=body))
        m = receiver.receive(timeout=TIMEOUT)
        receiver.accept()
        if m.body != body:
            print("ERROR receive: got %r, want %r" % (m.body, body))
            return 1
        print("OK " + m.body)
        return 0
    except Exception as e:
        print("ERROR exchange: %s: %s" % (type(e).__name__, e))
        return 1
    finally:
        try:
            conn.close()
        except Exception:
            pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
