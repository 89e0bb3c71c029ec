#!/usr/bin/python3
"""Two receivers on one topic in one connection with Qpid Proton's
BlockingConnection (proton.utils), the way short Python scripts are written.

Usage: proton_blocking.py ADDRESS RUN_ID

ADDRESS is the broker's AMQP listener, "host:port" or an amqp:// URL;
RUN_ID names the topic. Each case prints one JSON line on stdout:

    {"client": "proton-blocking", "case": "default-names", "passed": true,
     "error": "", "detail": {...}}

The cases:

default-names: create_receiver twice on one address, letting Proton name the
  links. Proton names a link <container id>-<address>, so both links have the
  same name, which AMQP 1.0 §2.6.1 forbids ("a link name uniquely
  identifies the link from the container of the source to the container of
  the target node"). Proton-C itself then refuses the broker's answer to the
  second attach: it looks the answering attach up by name and role, finds
  the first link, already attached, and closes the connection with
  amqp:invalid-field "link name already attached". The case passes when the
  failure is that local one (the connection's local condition, with no
  remote condition: the broker refused nothing) and the first link was
  attached by the broker.

distinct-names: the same with name= given to each receiver; a message
  published to the topic reaches both.

Every wait is bounded by WAIT seconds; the exit status is 0 when every case
passed, 1 when one failed. PN_TRACE_FRM=1 prints every AMQP frame on stderr.
"""

import json
import sys
import time

from proton import ConnectionException, Endpoint, Message
from proton.utils import BlockingConnection

WAIT = 10.0
CLIENT = "proton-blocking"


def cond(c):
    return None if c is None else "%s: %s" % (c.name, c.description)


def report(case, passed, error="", detail=None, started=0.0):
    print(json.dumps({"client": CLIENT, "case": case, "passed": passed, "error": error,
                      "detail": detail or {}, "ms": int((time.time() - started) * 1000)}))
    sys.stdout.flush()
    return passed


def default_names(url, topic):
    started = time.time()
    conn = BlockingConnection(url, timeout=WAIT)
    detail = {}
    try:
        r1 = conn.create_receiver(topic)
        detail["first_link_name"] = r1.link.name
        detail["first_link_remote_active"] = bool(r1.link.state & Endpoint.REMOTE_ACTIVE)
        try:
            r2 = conn.create_receiver(topic)
        except ConnectionException as e:
            detail["exception"] = str(e)
        else:
            detail["second_link_name"] = r2.link.name
            return report("default-names", False,
                          "the second same-named receiver attached: Proton no longer refuses it; "
                          "change this case to expect both receivers to work", detail, started)
        c = conn.conn
        detail["local_condition"] = cond(c.condition) or cond(c.transport.condition if c.transport else None)
        detail["remote_condition"] = cond(c.remote_condition)
        ok = (detail["first_link_remote_active"]
              and detail["remote_condition"] is None
              and "link name already attached" in (detail["local_condition"] or detail["exception"]))
        return report("default-names", ok,
                      "" if ok else "want Proton's own close (link name already attached) and no broker error",
                      detail, started)
    finally:
        try:
            conn.close()
        except Exception:
            pass


def distinct_names(url, topic, run):
    started = time.time()
    conn = BlockingConnection(url, timeout=WAIT)
    try:
        r1 = conn.create_receiver(topic, name=run + "-receiver-1")
        r2 = conn.create_receiver(topic, name=run + "-receiver-2")
        snd = conn.create_sender(topic)
        body = "to both " + run
        snd.send(Message(body=body))
        got = []
        for r in (r1, r2):
            m = r.receive(timeout=WAIT)
            r.accept()
            got.append(m.body)
        ok = got == [body, body]
        return report("distinct-names", ok, "" if ok else "received %r, want %r twice" % (got, body),
                      {"received": got}, started)
    except Exception as e:
        return report("distinct-names", False, "%s: %s" % (type(e).__name__, e), {}, started)
    finally:
        try:
            conn.close()
        except Exception:
            pass


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    url, run = sys.argv[1], sys.argv[2]
    if "://" not in url:
        url = "amqp://" + url
    topic = "topic://" + run + ".blocking"
    ok = True
    try:
        ok = default_names(url, topic) and ok
    except Exception as e:
        ok = report("default-names", False, "%s: %s" % (type(e).__name__, e)) and ok
    ok = distinct_names(url, topic, run) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
