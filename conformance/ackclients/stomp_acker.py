"""STOMP consumer for the confirmed-acknowledgement kill test.

Usage: stomp_acker.py HOST:PORT QUEUE

Subscribes to /queue/QUEUE with ack:client-individual (stomp.py, STOMP 1.2)
and acknowledges each message with an ACK carrying a receipt, waiting for
the RECEIPT before the next. Each message body is its key; for each, on
stdout: "GOT KEY R" (R: the redelivered header), "ACKING KEY" before the
ACK, "CONFIRMED KEY" once its RECEIPT arrived. Ends with "DONE reason" when
the broker goes away (conformance/kahadb_ackkill_test.go kills it).
"""

import queue
import sys

import stomp


class Listener(stomp.ConnectionListener):
    def __init__(self):
        self.messages = queue.Queue()
        self.receipts = queue.Queue()

    def on_message(self, frame):
        self.messages.put(frame)

    def on_receipt(self, frame):
        self.receipts.put(frame.headers.get("receipt-id"))

    def on_error(self, frame):
        self.messages.put(None)
        self.receipts.put(None)

    def on_disconnected(self):
        self.messages.put(None)
        self.receipts.put(None)


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    dest = "/queue/" + sys.argv[2]
    conn = stomp.Connection12([(host, int(port))], reconnect_attempts_max=1)
    listener = Listener()
    conn.set_listener("", listener)
    try:
        conn.connect(wait=True)
        conn.subscribe(dest, id="s", ack="client-individual")
    except Exception as e:  # the broker was killed while starting
        print("DONE connect: %s" % e, flush=True)
        return
    while True:
        frame = listener.messages.get()
        if frame is None:
            break
        key = frame.body
        print("GOT %s %s" % (key, frame.headers.get("redelivered", "false")), flush=True)
        print("ACKING %s" % key, flush=True)
        try:
            conn.ack(frame.headers["ack"], receipt="r-" + key)
        except Exception as e:
            print("DONE ack: %s" % e, flush=True)
            return
        while True:
            r = listener.receipts.get()
            if r is None:
                print("DONE broker gone", flush=True)
                return
            if r == "r-" + key:
                break
        print("CONFIRMED %s" % key, flush=True)
    print("DONE broker gone", flush=True)


if __name__ == "__main__":
    main()
